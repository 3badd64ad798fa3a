"""Typed signature of the compiled classic merge loop (hf_bpe/core/_classic.pyx); spec in _reference_classic.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence

def learn_merges(
    symbols: Sequence[int],
    starts: Sequence[int],
    counts: Sequence[int],
    vocab: list[bytes],
    *,
    num_merges: int,
    min_frequency: int = 0,
    tie_break: str = "first-seen",
    reuse_equal: bool = True,
    strip_prefix: bytes = b"",
    max_vocab: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> tuple[list[bytes], list[tuple[int, int, int]]]: ...
