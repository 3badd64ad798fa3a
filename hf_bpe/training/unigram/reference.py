"""SentencePiece unigram training: ``spm_train --model_type=unigram`` (sentencepiece 0.2.3) piece for piece, score
for score (float32 bits), type for type: the pure-Python reference (the executable spec; slow: small corpora).

Phases, as ``unigram_model_trainer.cc`` runs them (``Trainer::Train`` with the default discrete pruning):

1. options, meta pieces, normalizer spec; sentences loaded, normalized and covered exactly as for BPE
   (:func:`~hf_bpe.training.sentencepiece.bpe.load_sentences`);
2. seed pieces from the sentences (:mod:`hf_bpe.training.unigram.seed`), then, with ``split_by_whitespace``, the
   sentences become their words with counts (most frequent first, then smaller);
3. EM rounds until at most ``int(1.1 * vocab_size)`` pieces remain: ``num_sub_iterations`` times an E-step (each of
   ``num_threads`` "threads" ``n`` sums, in float32, the posteriors of the sentences ``i ≡ n (mod num_threads)``;
   the threads' sums are then added in thread order) and an M-step (pieces of expected count < 0.5 dropped, scores
   ``digamma(count) - digamma(sum)``); then pruning: a piece whose best segmentation is not itself goes; the others
   are ranked by the likelihood lost if replaced by their second-best segmentation (Viterbi counts summed per
   thread as above), keeping ``max(int(1.1 * vocab_size), int(shrinking_factor * size))``;
4. pieces that Viterbi can never choose (their other segmentations score higher) are dropped;
5. the required characters (scores of missing ones: the minimum score plus 0.0001 steps), then the best pieces, up to
   ``vocab_size`` minus the meta pieces; sorted by score, then piece; serialized with the meta pieces.

``num_threads`` changes the float sums' order, so it changes the model: it means exactly spm_train's option (default
16). Refused, beyond what BPE refuses: ``seed_sentencepieces_file``, a negative ``seed_sentencepiece_size``.

>>> model = train_unigram_reference(["ab ab ab", "abc abc", "b c"], vocab_size=8)
>>> [p.piece for p in model.pieces]
['<unk>', '<s>', '</s>', '▁ab', '▁', 'c', 'a', 'b']
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ...core.sentencepiece_normalize import SentencePieceNormalizer
from ...formats.sentencepiece_model import SentencePieceModel
from ..sentencepiece.bpe import load_sentences, prepare_training, serialize_pieces, split_words
from ..sentencepiece.options import typed
from .lattice import Lattice, TrainerModel, digamma, f32
from .seed import count_characters, reference_candidates, seed_pieces

__all__ = ["ReferenceLoops", "UNIGRAM_DEFAULTS", "check_unigram_options", "count_words", "finalize_pieces",
           "run_unigram", "train_unigram_reference"]

# spm_train's options that shape a unigram model beyond the BPE ones, with their defaults.
UNIGRAM_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "num_threads": 16, "seed_sentencepiece_size": 1000000, "shrinking_factor": 0.75, "num_sub_iterations": 2,
})
_RANGES = {"num_threads": (1, 1024), "num_sub_iterations": (1, 10), "shrinking_factor": (0.5, 0.95),
           "seed_sentencepiece_size": (0, 2**31 - 1)}


def check_unigram_options(vocab_size: Any, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[int, Any],
                                                                               dict[str, Any]]:
    """Check ``vocab_size`` and the options for a unigram model, as spm_train's VerifySpec does; return them with
    the defaults filled in, the meta pieces and the normalizer spec (as ``prepare_training``).

    Raises:
        TypeError, ValueError: what ``prepare_training`` raises; a unigram option of the wrong type or outside
            spm_train's range (naming it).
    """
    if options.get("model_type", "unigram") != "unigram":
        raise ValueError(f"model_type={options['model_type']!r}: this trainer trains unigram models")
    opts, meta, spec = prepare_training(vocab_size, {k: v for k, v in options.items() if k not in UNIGRAM_DEFAULTS})
    for name, default in UNIGRAM_DEFAULTS.items():
        value = typed(name, default, options.get(name, default))
        low, high = _RANGES[name]
        checked = f32(value) if name == "shrinking_factor" else value  # a float32 field, checked as one
        if not low <= checked <= high:
            raise ValueError(f"{name} must be between {low} and {high} (as spm_train checks), got {value!r}")
        opts[name] = checked
    return opts, meta, spec


class ReferenceLoops:
    """The hot loops in pure Python over ``texts`` (``[text, count]``) split among ``threads`` as spm_train splits
    them; ``hf_bpe.training.unigram.trainer`` has the compiled ones, with the same methods and results."""

    normalizer = SentencePieceNormalizer
    candidates = staticmethod(reference_candidates)
    count_chars = staticmethod(count_characters)

    def __init__(self, texts: Sequence[Sequence[Any]], threads: int) -> None:
        self.texts, self.threads = texts, threads

    @classmethod
    def load(cls, corpus: Iterable[str], opts: Mapping[str, Any], meta: Mapping[int, tuple[str, int]],
             spec: dict[str, Any], vocab_size: int) -> tuple[list[list[Any]], dict[str, int],
                                                             Callable[[], list[list[Any]]]]:
        """LoadSentences: the sentences (``[text, count]``), the required characters, and a function giving the
        sentences' words (``[word, count]``, by count, then string) for ``split_by_whitespace``."""
        sentences, required = load_sentences(corpus, opts, meta, spec, vocab_size, cls.normalizer)
        suffix = opts["treat_whitespace_as_suffix"]
        return sentences, required, lambda: count_words(sentences, opts["allow_whitespace_only_pieces"], suffix)

    @staticmethod
    def model(pieces: Sequence[tuple[str, float]]) -> TrainerModel:
        return TrainerModel(pieces)

    def _thread_sums(self, size: int, add: Callable[[str, float, array], None]) -> list[float]:
        """Each thread n calls add(text, float32 count, its float32 sums) for the texts i ≡ n (mod threads); the
        threads' sums are then added in thread order (float32 adds; 0 + x is x)."""
        import numpy as np

        texts, threads = self.texts, self.threads
        total = np.zeros(size, dtype=np.float32)
        for n in range(min(threads, len(texts))):
            sums = array("f", bytes(4 * size))
            for i in range(n, len(texts), threads):
                add(texts[i][0], f32(texts[i][1]), sums)
            total += np.frombuffer(sums, dtype=np.float32)
        return total.tolist()

    def e_step(self, model: TrainerModel) -> list[float]:
        """RunEStep: expected counts per piece (PopulateMarginal), summed per thread."""
        return self._thread_sums(len(model.pieces), lambda text, count, sums: Lattice(text, model).marginal(
            count, sums))

    def viterbi_counts(self, model: TrainerModel) -> list[float]:
        """Each piece's count on the Viterbi paths, summed per thread."""
        def add(text: str, count: float, sums: array) -> None:
            lattice = Lattice(text, model)
            for node in lattice.viterbi()[0]:
                index = lattice.ids[node]
                if index >= 0:
                    sums[index] = sums[index] + count

        return self._thread_sums(len(model.pieces), add)

    @staticmethod
    def alternatives(model: TrainerModel) -> tuple[list[bool], list[list[int]]]:
        """Each piece's best and second-best segmentations: whether it is kept (its best segmentation is itself,
        or it has only one) and the ids of its second-best one."""
        size = len(model.pieces)
        always_keep = [True] * size
        alternatives: list[list[int]] = [[] for _ in range(size)]
        for i, (piece, _) in enumerate(model.pieces):
            lattice = Lattice(piece, model)
            nbests = lattice.nbest2()
            if len(nbests) == 1:
                continue
            if len(nbests[0]) >= 2:
                always_keep[i] = False
            elif len(nbests[0]) == 1:
                alternatives[i] = [lattice.ids[node] for node in nbests[1]]
        return always_keep, alternatives

    @staticmethod
    def reachable(model: TrainerModel) -> list[bool]:
        """PruneUnreachableSentencePieces' test: whether Viterbi can choose each piece over its other
        segmentations."""
        out = []
        for i, (piece, score) in enumerate(model.pieces):
            lattice = Lattice(piece, model)
            node = next((node for node in lattice.begin[0]
                         if lattice.ids[node] == i and lattice.lengths[node] == lattice.size), None)
            if node is None:
                out.append(False)
                continue
            lattice.scores[node] = -math.inf
            path, alternative, _ = lattice.viterbi()
            out.append(not (path and alternative > score))
        return out


def count_words(sentences: Iterable[Sequence[Any]], allow_ws_only: bool, suffix: bool = False) -> list[list[Any]]:
    """SplitSentencesByWhitespace: the sentences' words with their counts, by count, then string."""
    words: dict[str, int] = {}
    for text, count in sentences:
        for word in split_words(text, allow_ws_only, suffix):
            words[word] = words.get(word, 0) + count
    return [[w, n] for w, n in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))]


def _m_step(pieces: Sequence[tuple[str, float]], expected: Sequence[float]) -> list[tuple[str, float]]:
    """RunMStep: drop pieces of expected count < 0.5; score the others digamma(count) - digamma(sum)."""
    kept: list[tuple[str, float]] = []
    total = 0.0
    for (piece, _), freq in zip(pieces, expected, strict=True):
        if freq < 0.5:
            continue
        kept.append((piece, freq))
        total = f32(total + freq)
    log_total = f32(digamma(total))
    return [(piece, f32(digamma(freq) - log_total)) for piece, freq in kept]


def _prune(pieces: Sequence[tuple[str, float]], always_keep: Sequence[bool], alternatives: Sequence[list[int]],
           freqs: Sequence[float], desired: int, shrinking_factor: float) -> list[tuple[str, float]]:
    """PruneSentencePieces' last phase: keep the pieces without alternatives, then those whose replacement by
    their second-best segmentation loses the most likelihood, up to max(desired, shrinking_factor * size)."""
    size = len(pieces)
    total = 0.0
    for value in freqs:  # std::accumulate with a double 0.0
        total += value
    total = f32(total)
    log_total = f32(math.log(total))
    kept: list[tuple[str, float]] = []
    candidates: list[tuple[int, float]] = []
    for i in range(size):
        if freqs[i] == 0 or not always_keep[i]:
            continue
        if not alternatives[i]:
            kept.append(pieces[i])
            continue
        logprob = f32(math.log(freqs[i]) - log_total)
        log_total_alt = f32(math.log(f32(total + f32(freqs[i] * float(len(alternatives[i]) - 1)))))
        logprob_alt = 0.0
        for n in alternatives[i]:
            logprob_alt = f32(logprob_alt + (math.log(f32(freqs[n] + freqs[i])) - log_total_alt))
        share = f32(freqs[i] / total)
        candidates.append((i, f32(share * f32(logprob - logprob_alt))))
    pruned_size = max(desired, int(f32(shrinking_factor * f32(size))))
    for i, _ in sorted(candidates, key=lambda c: (-c[1], c[0])):
        if len(kept) == pruned_size:
            break
        kept.append(pieces[i])
    return kept


def finalize_pieces(pieces: Sequence[tuple[str, float]], required: Mapping[str, int], room: int) -> list[tuple[str, float]]:
    """FinalizeSentencePieces: the required characters, then the best pieces up to ``room``; by score, then
    piece."""
    scores = dict(pieces)
    min_score = min(scores.values(), default=3.4028234663852886e38)  # the model's min_score (FLT_MAX when empty)
    final: dict[str, float] = {}
    penalty = 0.0
    for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        if c in scores:
            final[c] = scores[c]
        else:  # missing required characters: after the worst piece, more frequent ones first
            final[c] = f32(min_score + penalty)
            penalty = f32(penalty + f32(0.0001))
    if room <= 0:
        return []
    for piece, score in sorted(pieces, key=lambda p: (-p[1], p[0])):
        if piece in final:
            continue
        if len(final) == room:
            break
        final[piece] = score
    return sorted(final.items(), key=lambda p: (-p[1], p[0]))


def train_unigram_reference(corpus: Iterable[str], *, vocab_size: int, **options: Any) -> SentencePieceModel:
    """Train a SentencePiece unigram model on ``corpus`` (one sentence per str) as ``spm_train
    --model_type=unigram`` (sentencepiece 0.2.3) does.

    Args:
        corpus: the sentences (lines without their newline).
        vocab_size: the number of pieces, meta pieces included.
        options: spm_train's options by their own names: the BPE ones (``SPM_DEFAULTS``) and
            :data:`UNIGRAM_DEFAULTS` (``num_threads``, ``seed_sentencepiece_size``, ``shrinking_factor``,
            ``num_sub_iterations``).

    Returns:
        The model (pieces with float32 scores and types, trainer and normalizer specs).

    Raises:
        TypeError, ValueError: bad options, an empty corpus, too small a ``vocab_size``, or too large a one with
            ``hard_vocab_limit``.
    """
    return run_unigram(corpus, vocab_size, options, ReferenceLoops)


def run_unigram(corpus: Iterable[str], vocab_size: int, options: Mapping[str, Any],
                loops: Callable[[Sequence[Sequence[Any]], int], Any]) -> SentencePieceModel:
    """The training driver, with the hot loops given: ``loops(texts, num_threads)`` returns an object with the
    methods of :class:`ReferenceLoops` (the reference's, or the compiled ones); ``loops.load`` loads the
    sentences (:meth:`ReferenceLoops.load`), ``loops.candidates`` is the seed step's string finder and
    ``loops.count_chars`` its character counter."""
    # 1. Options, meta pieces, normalizer; the sentences.
    opts, meta, spec = check_unigram_options(vocab_size, options)
    sentences, required, words = loops.load(corpus, opts, meta, spec, vocab_size)
    # 2. Seeds, then the words.
    pieces = seed_pieces(sentences, opts, vocab_size=vocab_size, candidates=loops.candidates,
                         count_chars=loops.count_chars)
    if opts["split_by_whitespace"]:
        sentences = words()
    del words  # with it goes the compiled loader's store
    # 3. EM and pruning rounds.
    run = loops(sentences, opts["num_threads"])
    del sentences  # the compiled loops hold their own copy: the list's strings go before EM's peak
    desired = int(vocab_size * 1.1)
    while True:
        for _ in range(opts["num_sub_iterations"]):
            pieces = _m_step(pieces, run.e_step(run.model(pieces)))
        model = run.model(pieces)
        always_keep, alternatives = run.alternatives(model)
        pieces = _prune(pieces, always_keep, alternatives, run.viterbi_counts(model), desired,
                        opts["shrinking_factor"])
        if len(pieces) <= desired:
            break
    # 4. Unreachable pieces; 5. the final pieces, serialized.
    pieces = [p for p, keep in zip(pieces, run.reachable(run.model(pieces)), strict=True) if keep]
    final = finalize_pieces(pieces, required, vocab_size - len(meta))
    return serialize_pieces(final, meta, vocab_size, opts, spec, model_type=1)
