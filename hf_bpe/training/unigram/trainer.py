"""SentencePiece unigram training on the compiled core: ``train_unigram``, equal to ``spm_train
--model_type=unigram`` (sentencepiece 0.2.3) piece for piece and score bit for score bit.

:func:`run_compiled` runs the reference's phases (:func:`hf_bpe.training.unigram.reference.run_unigram`) with the
pieces in C++ from the seeds to the last pruning (``hf_bpe.core._unigram.UnigramTrainer``, ``csrc/unigram_em.hpp``:
the seeds' scores, the M-step, pruning's arithmetic); the hot loops run in ``csrc/unigram_lattice.hpp`` (the
E-step, the Viterbi counts, the second-best segmentations and the unreachable pieces, on up to ``workers`` real
threads) and ``csrc/unigram_seed.hpp`` (the seed step's suffix array, LCP walk and candidate table); sentences are
loaded, normalized and split into words by the compiled store (``SentencePieceCorpus``, as for BPE).
``num_threads`` keeps spm_train's meaning (how the float sums are split and ordered), whatever the number of real
threads. :class:`CompiledLoops` gives the same loops to the reference's own driver (tests hold the three equal).

``tests/test_unigram_trainer.py`` holds this module equal to the reference and both equal to ``sentencepiece``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...formats.sentencepiece_model import SentencePieceModel
from ..progress import counted, progress_bar
from ..sentencepiece.bpe import BOUNDARY, UNK_CHAR, char_info, load_store, serialize_pieces
from .reference import check_unigram_options, finalize_pieces
from .seed import chunks, compiled_candidates, compiled_count_characters, seed_characters

__all__ = ["CompiledLoops", "run_compiled", "train_unigram"]


class CompiledLoops:
    """:class:`~hf_bpe.training.unigram.reference.ReferenceLoops`' methods on the compiled core."""

    candidates = staticmethod(compiled_candidates)
    count_chars = staticmethod(compiled_count_characters)

    def __init__(self, texts: Sequence[Sequence[Any]], threads: int, workers: int | None = None) -> None:
        from ...core._unigram import UnigramCorpus

        self.corpus = UnigramCorpus((text, count) for text, count in texts)
        self.threads = threads
        self.workers = workers or min(threads, os.cpu_count() or 1)

    @staticmethod
    def load(corpus: Iterable[str], opts: Mapping[str, Any], meta: Mapping[int, tuple[str, int]],
             spec: dict[str, Any], vocab_size: int) -> tuple[list[list[Any]], dict[str, int],
                                                             Callable[[], list[list[Any]]]]:
        """:meth:`~hf_bpe.training.unigram.reference.ReferenceLoops.load` on the compiled store (normalized,
        counted and made into words in C++), with the same results."""
        store, required = load_store(corpus, opts, meta, spec, vocab_size)
        return (store.texts(required, False), required,
                lambda: store.texts(required, opts["split_by_whitespace"]))

    @staticmethod
    def model(pieces: Sequence[tuple[str, float]]) -> Any:
        from ...core._unigram import UnigramModel

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
    return run_compiled(corpus, vocab_size, options)


def _rounds(size: int, desired: int, factor: float) -> int:
    """The pruning rounds that take ``size`` pieces to ``desired`` (each keeps ``factor`` of them, at least desired).

    >>> _rounds(10000, 2200, 0.75)
    6
    """
    rounds = 1
    while (size := max(desired, int(size * factor))) > desired:
        rounds += 1
    return rounds


def run_compiled(corpus: Iterable[str], vocab_size: int, options: Mapping[str, Any],
                 workers: int | None = None, *, show_progress: bool = False) -> SentencePieceModel:
    """:func:`~hf_bpe.training.unigram.reference.run_unigram`'s phases with the pieces kept in C++ from the seeds
    to the last pruning (``core._unigram.UnigramTrainer``: seeds' scores, E- and M-steps, pruning, unreachable
    pieces), on ``workers`` real threads (default: ``min(num_threads, cores)``); only the final pieces become Python
    objects. The same model as ``run_unigram(..., CompiledLoops)`` and the reference, at a fraction of the memory:
    the seed model's pieces as Python tuples were the trainer's peak. ``show_progress``: a bar per phase on stderr
    (loading, seeding, EM and pruning rounds)."""
    from ...core._unigram import UnigramTrainer

    # 1. Options, meta pieces, normalizer; the sentences (the compiled store).
    opts, meta, spec = check_unigram_options(vocab_size, options)
    with progress_bar(show_progress, desc="load sentences", unit=" sentences") as bar:
        store, required = load_store(counted(corpus, bar), opts, meta, spec, vocab_size)
    threads = opts["num_threads"]
    trainer = UnigramTrainer(threads, workers or min(threads, os.cpu_count() or 1))
    # 2. The texts EM runs on (the words, or the sentences themselves) into C++, and the store freed, before the
    # seed step's suffix array, the trainer's memory peak; then the seeds (seed_pieces, scored in C++).
    sentences = store.texts(required, False)
    chars = seed_characters(sentences, compiled_count_characters)
    data = chunks(sentences)
    if opts["split_by_whitespace"]:
        del sentences  # before the words come
        sentences = store.texts(required, True)
    del store
    trainer.add_texts(sentences)
    del sentences
    info = {c: char_info(c) for c in {*(c for c, _ in chars), UNK_CHAR, BOUNDARY}}
    with progress_bar(show_progress, desc="seed pieces", total=1) as bar:  # the suffix array: one long step
        trainer.seed(chars, data, info, opts, opts["seed_sentencepiece_size"] or max(100000, vocab_size * 8))
        bar.set_postfix_str(f"{len(trainer)} pieces", refresh=False)
        bar.update(1)
    del data
    # 3. EM and pruning rounds (how many are left is estimated after each, from the pruning alone).
    desired = int(vocab_size * 1.1)
    factor = opts["shrinking_factor"]
    with progress_bar(show_progress, desc="EM and pruning", total=_rounds(len(trainer), desired, factor),
                      unit=" rounds") as bar:
        while True:
            for _ in range(opts["num_sub_iterations"]):
                trainer.em_step()
            trainer.prune(desired, factor)
            bar.total = bar.n + 1 + (_rounds(len(trainer), desired, factor) if len(trainer) > desired else 0)
            bar.set_postfix_str(f"{len(trainer)} pieces, to {desired}", refresh=False)
            bar.update(1)
            if len(trainer) <= desired:
                break
    # 4. Unreachable pieces; 5. the final pieces, serialized.
    trainer.drop_unreachable()
    final = finalize_pieces(trainer.pieces(), required, vocab_size - len(meta))
    return serialize_pieces(final, meta, vocab_size, opts, spec, model_type=1)
