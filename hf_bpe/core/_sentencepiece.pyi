"""Typed signature of the compiled SentencePiece-mode trainer (hf_bpe/core/_sentencepiece.pyx); spec:
hf_bpe.training.sentencepiece.bpe.train_sentencepiece_reference."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Any

class SentencePieceNormalizer:
    def __init__(self, spec: Mapping[str, Any], user_symbols: Iterable[str] = ()) -> None: ...
    def normalize(self, text: str) -> str: ...

class SentencePieceCorpus:
    def __init__(
        self,
        *,
        charsmap: bytes,
        remove_extra_whitespaces: bool,
        add_dummy_prefix: bool,
        allow_whitespace_only_pieces: bool,
        meta_pieces: Iterable[str],
        max_sentence_length: int,
    ) -> None: ...
    def add(self, texts: Iterable[str]) -> None: ...
    def finish(self) -> int: ...
    def char_counts(self) -> dict[str, int]: ...
    def train(
        self,
        required: Mapping[str, int],
        char_info: Mapping[str, tuple[int, bool, bool]],
        *,
        merges: int,
        max_sentencepiece_length: int,
        split_by_whitespace: bool,
        split_by_number: bool,
        split_by_unicode_script: bool,
        split_digits: bool,
        allow_whitespace_only_pieces: bool,
        progress: Callable[[int], object] | None = None,
    ) -> list[str]: ...
    def train_seeded(
        self,
        chars: Iterable[str],
        char_info: Mapping[str, tuple[int, bool, bool]],
        segment: Callable[[list[str], list[int]], Sequence[Sequence[str]]],
        mergeable: Container[str],
        known: Iterable[str],
        *,
        merges: int,
        max_sentencepiece_length: int,
        split_by_whitespace: bool,
        split_by_number: bool,
        split_by_unicode_script: bool,
        split_digits: bool,
        allow_whitespace_only_pieces: bool,
        progress: Callable[[int], object] | None = None,
    ) -> list[str]: ...
