"""SentencePiece unigram training on the compiled core: ``train_unigram``, equal to ``spm_train
--model_type=unigram`` (sentencepiece 0.2.3) piece for piece and score bit for score bit.

The driver is the reference's (:func:`hf_bpe.training.unigram_reference.run_unigram`: options, sentences, seeds,
M-step, pruning arithmetic, finalization); the hot loops run in ``hf_bpe.core._unigram`` (C++ in
``csrc/unigram_lattice.hpp``): the E-step, the Viterbi counts, the second-best segmentations and the unreachable
pieces, on up to ``workers`` real threads, and the seed step's suffix array, LCP walk and candidate table
(``csrc/unigram_seed.hpp``); sentences are loaded, normalized and split into words by the compiled store
(``SentencePieceCorpus``, as for BPE). ``num_threads`` keeps spm_train's
meaning (how the float sums are split and ordered), whatever the number of real threads.

``tests/test_unigram_trainer.py`` holds this module equal to the reference and both equal to ``sentencepiece``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..formats.sentencepiece_model import SentencePieceModel
from .sentencepiece_bpe import load_store
from .unigram_reference import run_unigram
from .unigram_seed import compiled_candidates, compiled_count_characters

__all__ = ["CompiledLoops", "train_unigram"]


class CompiledLoops:
    """:class:`~hf_bpe.training.unigram_reference.ReferenceLoops`' methods on the compiled core."""

    candidates = staticmethod(compiled_candidates)
    count_chars = staticmethod(compiled_count_characters)

    def __init__(self, texts: Sequence[Sequence[Any]], threads: int, workers: int | None = None) -> None:
        from ..core._unigram import UnigramCorpus

        self.corpus = UnigramCorpus((text, count) for text, count in texts)
        self.threads = threads
        self.workers = workers or min(threads, os.cpu_count() or 1)

    @staticmethod
    def load(corpus: Iterable[str], opts: Mapping[str, Any], meta: Mapping[int, tuple[str, int]],
             spec: dict[str, Any], vocab_size: int) -> tuple[list[list[Any]], dict[str, int],
                                                             Callable[[], list[list[Any]]]]:
        """:meth:`~hf_bpe.training.unigram_reference.ReferenceLoops.load` on the compiled store (normalized,
        counted and made into words in C++), with the same results."""
        store, required = load_store(corpus, opts, meta, spec, vocab_size)
        return (store.texts(required, False), required,
                lambda: store.texts(required, opts["split_by_whitespace"]))

    @staticmethod
    def model(pieces: Sequence[tuple[str, float]]) -> Any:
        from ..core._unigram import UnigramModel

        return UnigramModel(pieces)

    def e_step(self, model: Any) -> Sequence[float]:
        return model.e_step(self.corpus, self.threads, self.workers)

    def viterbi_counts(self, model: Any) -> Sequence[float]:
        return model.viterbi_counts(self.corpus, self.threads, self.workers)

    @staticmethod
    def alternatives(model: Any) -> tuple[list[bool], list[Sequence[int]]]:
        return model.alternatives()

    @staticmethod
    def reachable(model: Any) -> list[bool]:
        return model.reachable()


def train_unigram(corpus: Iterable[str], *, vocab_size: int, **options: Any) -> SentencePieceModel:
    """Train a SentencePiece unigram model as ``spm_train --model_type=unigram`` does (the compiled loops).

    Args:
        corpus: the sentences (lines without their newline).
        vocab_size: the number of pieces, meta pieces included.
        options: spm_train's options by their own names (see ``train_unigram_reference``).

    Returns:
        The model, equal to ``train_unigram_reference``'s.

    Raises:
        TypeError, ValueError: what ``train_unigram_reference`` raises, with the same messages.

    >>> [p.piece for p in train_unigram(["ab ab ab", "abc abc", "b c"], vocab_size=8).pieces]
    ['<unk>', '<s>', '</s>', '▁ab', '▁', 'c', 'a', 'b']
    """
    return run_unigram(corpus, vocab_size, options, CompiledLoops)
