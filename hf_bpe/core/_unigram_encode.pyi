"""Typed signature of the compiled unigram Viterbi (hf_bpe/core/_unigram_encode.pyx); spec:
hf_bpe.model.unigram.UnigramModel.viterbi_reference."""

from __future__ import annotations

from collections.abc import Iterable

class UnigramSegmenter:
    def __init__(self, pieces: Iterable[tuple[str, int, float, int]], unk_id: int, unk_score: float) -> None: ...
    def segment(self, text: str) -> list[tuple[str, int]]: ...
