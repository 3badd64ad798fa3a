"""SentencePiece's unigram encoder (``unigram_model.cc``), exactly: Viterbi, n-best and sampling in plain Python.

:class:`UnigramModel` holds a unigram ``.model``'s pieces and encodes as ``sentencepiece.SentencePieceProcessor``
0.2.x does, id for id:

- **Viterbi** is ``Model::EncodeOptimized`` (the default encoder): one pass over the positions of the normalized
  text, keeping for each end position the best path ending there. Its float32 arithmetic decides ties and is
  reproduced bit for bit: a candidate is ``float32(score + best so far)`` and replaces the stored one only when
  strictly greater; candidates arrive by start position, then by length, so the longest piece wins a tie and an
  unknown character loses one to the pieces that start where it does.
- **Pieces** in play are the NORMAL, USER_DEFINED and UNUSED ones (the trie's); UNUSED pieces are skipped when
  matched; control, unknown and byte pieces never match text. A character that begins no one-character piece gets
  an unknown node scoring ``min_score - 10`` (``min_score``: the lowest NORMAL score). A USER_DEFINED piece scores
  ``0.1 * length - 0.1`` (float32; ``length`` in UTF-8 bytes for Viterbi, in characters in the lattice), whatever
  its own score: so the ``sentencepiece`` 0.2.3 wheel behaves, measured by bisection against it (the source reads
  ``length * max_score_ - 0.1``, which would be about ``-0.1``; ``tests/test_unigram.py`` pins the measured rule).
  The bonus usually, not always, makes the symbol win: it is not a greedy match.
- **Ids**, as ``SentencePieceProcessor::PopulateSentencePieceText``: with ``byte_fallback`` an unknown character
  becomes its UTF-8 byte pieces; otherwise runs of unknown characters become one ``<unk>``.
- **n-best** is ``Lattice::NBest``: Viterbi over the lattice (float32, ties to the first left node), then A* from
  the end with ``std::priority_queue`` -- whose order among equal priorities is libstdc++'s heap, reproduced here
  (:class:`_StdHeap`) -- including the agenda's shrinking at 10,000 entries. Scores are the paths' float32 sums.
- **Sampling** (subword regularization) draws from the distribution sentencepiece defines, with this module's own
  seeded generator (``random.Random(seed)``; sentencepiece's Mersenne twister draws are not reproduced): for
  ``nbest_size < 0`` a segmentation with probability proportional to ``exp(alpha * score)`` over *all* paths of the
  lattice (forward filtering, backward sampling: ``Lattice::Sample``, computed here in double precision); for
  ``nbest_size`` 0 or 1 the Viterbi segmentation; for ``nbest_size > 1`` one of the n best with probability
  proportional to ``exp(alpha * score)``. ``tests/test_unigram.py`` holds the distribution: it enumerates every path
  of short texts, computes the exact probabilities, and compares seeded sample counts with a chi-square bound at
  p = 1e-9 (deterministic, as the seed is fixed).

>>> from hf_bpe.formats.sentencepiece_model import Piece
>>> pieces = [Piece("<unk>", 0.0, 2), Piece("▁", -2.0, 1), Piece("a", -3.0, 1), Piece("b", -3.0, 1),
...           Piece("▁ab", -4.0, 1), Piece("ab", -5.0, 1)]
>>> model = UnigramModel(pieces)
>>> model.encode_normalized("▁abxb")
[4, 0, 3]
>>> [(ids, score) for ids, score in model.nbest_normalized("▁ab", nbest_size=3)]
[([4], -4.0), ([1, 5], -7.0), ([1, 2, 3], -8.0)]
"""

from __future__ import annotations

import math
import os
import random
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.stl_heap import heap_pop, heap_push
from ..formats.sentencepiece_decode import decode_ids
from ..formats.sentencepiece_model import (BYTE, DEFAULT_UNK_SURFACE, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, Piece,
                                           SentencePieceModel)

__all__ = ["UnigramModel"]

_F32 = struct.Struct("<f")
_FLT_MAX = 3.4028234663852886e38
_UNK_PENALTY = 10.0
_MAX_AGENDA, _MIN_AGENDA = 10000, 512


def _f32(value: float) -> float:
    """Round a double to the nearest float32 (as C++ stores a double into a float)."""
    try:
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


@dataclass
class _Node:
    """A lattice node (``Lattice::Node``): ``pos``/``length`` in characters, ``piece_id`` -1 for BOS/EOS."""

    pos: int
    length: int
    piece_id: int
    score: float
    backtrace: float = 0.0


class _StdHeap:
    """``std::priority_queue`` with ``a.fx < b.fx`` over libstdc++'s ``push_heap``/``pop_heap``: the same order
    among equal priorities as sentencepiece's A* agenda."""

    def __init__(self) -> None:
        self.items: list[tuple[float, Any]] = []

    def __len__(self) -> int:
        return len(self.items)

    def push(self, item: tuple[float, Any]) -> None:
        heap_push(self.items, item, 0)

    def pop(self) -> tuple[float, Any]:
        return heap_pop(self.items, 0)


class UnigramModel:
    """A SentencePiece unigram model's pieces, encoding exactly as ``sentencepiece`` (see the module docstring).

    Args:
        pieces: the model's pieces in id order (``SentencePieceModel.pieces``); exactly one of type UNKNOWN.
        byte_fallback: unknown characters as their UTF-8 byte pieces (``<0x41>``), which must then all exist.
        normalizer: the normalizer spec (``SentencePieceModel.normalizer``) for :meth:`encode`; None: texts are
            taken as already normalized (and :meth:`decode` strips a leading ``▁`` as sentencepiece's defaults do).
        unk_surface: the text :meth:`decode` gives an unknown piece (the trainer spec's ``unk_surface``).

    Raises:
        ValueError: no or several unknown pieces, a piece repeated, or byte fallback without its 256 byte pieces.
    """

    def __init__(self, pieces: Iterable[Piece], *, byte_fallback: bool = False,
                 normalizer: Mapping[str, Any] | None = None, unk_surface: str = DEFAULT_UNK_SURFACE) -> None:
        self.pieces = tuple(pieces)
        self.byte_fallback = bool(byte_fallback)
        if not isinstance(unk_surface, str):
            raise TypeError(f"unk_surface must be a str, got {type(unk_surface).__name__}")
        self.unk_surface = unk_surface
        self._decode_flags = (True, True) if normalizer is None else (
            bool(normalizer.get("add_dummy_prefix", True)), bool(normalizer.get("remove_extra_whitespaces", True)))
        self._denormalizer = False  # a model's denormalizer spec (decode refuses to ignore it)
        unknown = [i for i, p in enumerate(self.pieces) if p.type == UNKNOWN]
        if len(unknown) != 1:
            raise ValueError(f"a unigram model needs exactly one UNKNOWN piece; got {len(unknown)}: check the "
                             "pieces' types")
        self.unk_id = unknown[0]
        # 1. The trie's entries (NORMAL, USER_DEFINED, UNUSED) and every prefix of them (where matching stops).
        self._ids: dict[str, int] = {}
        for index, piece in enumerate(self.pieces):
            if piece.type in (NORMAL, USER_DEFINED, UNUSED):
                if piece.piece in self._ids:
                    raise ValueError(f"piece {piece.piece!r} is defined twice (ids {self._ids[piece.piece]} and "
                                     f"{index}); sentencepiece refuses such a model")
                self._ids[piece.piece] = index
        self._prefixes = {p[:n] for p in self._ids for n in range(1, len(p) + 1)}
        self._longest = max(map(len, self._ids), default=0)
        # 2. min_score_ over NORMAL pieces, from FLT_MAX as sentencepiece starts it.
        self.min_score = min([_FLT_MAX, *(p.score for p in self.pieces if p.type == NORMAL)])
        self.unk_score = _f32(self.min_score - _UNK_PENALTY)
        self._bytes = {p.piece: i for i, p in enumerate(self.pieces) if p.type == BYTE}
        if self.byte_fallback and len(self._bytes) != 256:
            raise ValueError(f"byte_fallback needs the 256 byte pieces <0x00>..<0xFF>; the model has "
                             f"{len(self._bytes)}")
        self._segmenter: Any = None  # the compiled Viterbi, built on first use
        self._normalizer: Any = None
        if normalizer is not None:
            from ..core._sentencepiece import SentencePieceNormalizer

            user = [p.piece for p in self.pieces if p.type == USER_DEFINED]
            self._normalizer = SentencePieceNormalizer(dict(normalizer), user)

    @classmethod
    def from_sentencepiece(cls, model: SentencePieceModel) -> UnigramModel:
        """Build the encoder of a unigram ``SentencePieceModel`` (normalizer included).

        Raises:
            ValueError: the model is not a unigram model.
        """
        if model.model_type != "unigram":
            raise ValueError(f"this is a SentencePiece {model.model_type} model; UnigramModel encodes unigram "
                             "models (model_type=unigram)")
        built = cls(model.pieces, byte_fallback=bool(model.trainer["byte_fallback"]),
                    normalizer=model.encoding_normalizer,
                    unk_surface=str(model.trainer.get("unk_surface", DEFAULT_UNK_SURFACE)))
        # ModelProto field 5, the denormalizer spec (sentencepiece applies it after decoding): absent from what
        # spm_train and hf_bpe write.
        source = model.source
        built._denormalizer = source is not None and any(field[0] == 5 and field[2] for field in source.model)
        return built

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> UnigramModel:
        """Load a unigram ``.model`` file, or the ``tokenizer.model`` of a folder (``hf-bpe train --algorithm
        unigram``, ``save_sentencepiece``).

        >>> import tempfile, hf_bpe
        >>> model = hf_bpe.train_unigram(["hello world"] * 50, vocab_size=12, show_progress=False)
        >>> folder = hf_bpe.save_sentencepiece(model, tempfile.mkdtemp() + "/uni")
        >>> unigram = UnigramModel.load(folder)
        >>> unigram.decode(unigram.encode("hello world"))
        'hello world'

        Raises:
            FileNotFoundError: no such file, or a folder without ``tokenizer.model``.
            ValueError: not a SentencePiece model, or not a unigram one.
        """
        location = Path(os.fspath(path))
        if location.is_dir():
            location = location / "tokenizer.model"
        return cls.from_sentencepiece(SentencePieceModel.load(location))

    def decode(self, ids: Iterable[int]) -> str:
        """Return the text of ``ids`` as ``SentencePieceProcessor.decode`` gives it.

        Control pieces give nothing, the unknown piece ``unk_surface``, byte pieces their UTF-8 (sentencepiece's
        U+FFFD per invalid byte), the others their text with ``▁`` as a space, the first one without its leading
        ``▁`` (:mod:`hf_bpe.formats.sentencepiece_decode`).

        Raises:
            TypeError: an id that is not an int.
            ValueError: an id out of range, or a model with a denormalizer spec (not applied here: decode it with
                ``sentencepiece``).
        """
        if self._denormalizer:
            raise ValueError("this model has a denormalizer spec, which UnigramModel.decode does not apply; decode "
                             "with sentencepiece.SentencePieceProcessor")
        add_dummy_prefix, remove_extra_whitespaces = self._decode_flags
        return decode_ids(self.pieces, ids, unk_surface=self.unk_surface, add_dummy_prefix=add_dummy_prefix,
                          remove_extra_whitespaces=remove_extra_whitespaces)

    # -- the piece scores as sentencepiece computes them ------------------------------------------------------------

    def _matches(self, text: str, start: int) -> list[tuple[int, int]]:
        """(end, piece id) of the trie's pieces starting at ``start``, shortest first (UNUSED ones included)."""
        out = []
        prefixes, ids = self._prefixes, self._ids
        for end in range(start + 1, min(len(text), start + self._longest) + 1):
            key = text[start:end]
            if key not in prefixes:
                break
            index = ids.get(key)
            if index is not None:
                out.append((end, index))
        return out

    # -- Viterbi ---------------------------------------------------------------------------------------------------

    def viterbi(self, normalized: str) -> list[tuple[str, int]]:
        """``Model::EncodeOptimized``: the best segmentation of a normalized text as (piece text, id), unknown
        characters one by one with the unknown id (before :meth:`ids_of` merges them). Compiled
        (``core._unigram_encode``); :meth:`viterbi_reference` is its spec."""
        if self._segmenter is None:
            from ..core._unigram_encode import UnigramSegmenter

            self._segmenter = UnigramSegmenter(
                [(p.piece, i, p.score, p.type) for p, i in ((self.pieces[i], i) for i in self._ids.values())],
                self.unk_id, self.unk_score)
        return self._segmenter.segment(normalized)

    def viterbi_reference(self, normalized: str) -> list[tuple[str, int]]:
        """:meth:`viterbi` in plain Python: the executable spec of the compiled one.

        Complexity: O(n·k) for n characters and k pieces starting at a position.
        """
        n = len(normalized)
        if not n:
            return []
        # best[e] = [score (float32), start, id] of the best path ending at character e; start -1: none yet.
        best: list[list[Any]] = [[0.0, -1, -1] for _ in range(n + 1)]
        pieces = self.pieces
        for start in range(n):
            till = best[start][0]
            single = False
            for end, index in self._matches(normalized, start):
                piece = pieces[index]
                if piece.type == UNUSED:
                    continue
                if piece.type == USER_DEFINED:
                    score = _f32(len(piece.piece.encode()) * 0.1 - 0.1)
                else:
                    score = piece.score
                candidate = _f32(score + till)
                target = best[end]
                if target[1] == -1 or candidate > target[0]:
                    target[0], target[1], target[2] = _f32(candidate), start, index
                if end == start + 1:
                    single = True
            if not single:
                candidate = _f32(self.unk_score + till)
                target = best[start + 1]
                if target[1] == -1 or candidate > target[0]:
                    target[0], target[1], target[2] = candidate, start, self.unk_id
        out = []
        end = n
        while end > 0:
            _, start, index = best[end]
            out.append((normalized[start:end], index))
            end = start
        out.reverse()
        return out

    def ids_of(self, segmentation: Iterable[tuple[str, int]]) -> list[int]:
        """Ids of a segmentation as ``PopulateSentencePieceText``: unknowns as byte pieces (``byte_fallback``) or
        runs of unknowns as one unknown id."""
        ids: list[int] = []
        previous_unknown = False
        for text, index in segmentation:
            unknown = index == self.unk_id
            if unknown and self.byte_fallback:
                ids += [self._bytes[f"<0x{byte:02X}>"] for byte in text.encode()]
            elif not (unknown and previous_unknown):
                ids.append(index)
            previous_unknown = unknown
        return ids

    def pieces_of(self, segmentation: Iterable[tuple[str, int]]) -> list[str]:
        """Piece strings of a segmentation as ``sentencepiece.encode(out_type=str)``: a run of unknown characters
        is one piece of their text; byte pieces with ``byte_fallback``."""
        out: list[str] = []
        previous_unknown = False
        for text, index in segmentation:
            unknown = index == self.unk_id
            if unknown and self.byte_fallback:
                out += [f"<0x{byte:02X}>" for byte in text.encode()]
            elif unknown and previous_unknown:
                out[-1] += text
            else:
                out.append(text)
            previous_unknown = unknown
        return out

    def encode_normalized(self, normalized: str) -> list[int]:
        """Return the ids ``sentencepiece`` gives the normalized text (Viterbi)."""
        return self.ids_of(self.viterbi(normalized))

    def normalize(self, text: str) -> str:
        """Normalize as ``sentencepiece`` does (the model's normalizer spec and user-defined symbols).

        Raises:
            ValueError: the model was built without a normalizer spec.
        """
        if self._normalizer is None:
            raise ValueError("this UnigramModel has no normalizer spec; build it with from_sentencepiece(model) or "
                             "normalizer=..., or call encode_normalized on normalized text")
        return self._normalizer.normalize(text)

    def encode(self, text: str, *, sample: bool = False, alpha: float = 0.1, nbest_size: int = -1,
               seed: int | None = None) -> list[int]:
        """Return the ids of ``text`` as ``sentencepiece.encode(text, enable_sampling=sample, alpha=alpha,
        nbest_size=nbest_size)``: the Viterbi segmentation, or with ``sample`` one drawn as the module docstring
        says (``seed``: the draw is a function of it; None: a fresh one).

        Raises:
            TypeError: ``text`` is not a str.
            ValueError: ``nbest_size`` above 512 (sentencepiece's limit for sampling).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        normalized = self.normalize(text)
        if not sample:
            return self.encode_normalized(normalized)
        return self.ids_of(self.sample_normalized(normalized, alpha=alpha, nbest_size=nbest_size,
                                                  rng=random.Random(seed)))

    def nbest(self, text: str, *, nbest_size: int) -> list[tuple[list[int], float]]:
        """Return ``sentencepiece.nbest_encode(text, nbest_size)``'s segmentations as (ids, score), best first.

        Raises:
            ValueError: ``nbest_size`` above 512 (``SentencePieceProcessor``'s limit).
        """
        if isinstance(nbest_size, int) and nbest_size > 512:
            raise ValueError(f"nbest_size must be at most 512 (sentencepiece's limit); got {nbest_size!r}")
        return self.nbest_normalized(self.normalize(text), nbest_size=nbest_size)

    # -- the lattice: n-best and sampling --------------------------------------------------------------------------

    def _lattice(self, normalized: str) -> tuple[list[list[_Node]], list[list[_Node]]]:
        """``SetSentence`` + ``PopulateNodes``: (begin_nodes, end_nodes) per character position, BOS in
        end_nodes[0] and EOS in begin_nodes[n], nodes in sentencepiece's insertion order."""
        n = len(normalized)
        begins: list[list[_Node]] = [[] for _ in range(n + 1)]
        ends: list[list[_Node]] = [[] for _ in range(n + 1)]
        ends[0].append(_Node(0, 0, -1, 0.0))
        begins[n].append(_Node(n, 0, -1, 0.0))
        for start in range(n):
            single = False
            for end, index in self._matches(normalized, start):
                piece = self.pieces[index]
                if piece.type == UNUSED:
                    continue
                length = end - start
                score = (_f32(length * 0.1 - 0.1) if piece.type == USER_DEFINED
                         else piece.score)
                node = _Node(start, length, index, score)
                begins[start].append(node)
                ends[end].append(node)
                single = single or length == 1
            if not single:
                node = _Node(start, 1, self.unk_id, self.unk_score)
                begins[start].append(node)
                ends[start + 1].append(node)
        return begins, ends

    @staticmethod
    def _lattice_viterbi(begins: list[list[_Node]], ends: list[list[_Node]]) -> None:
        """``Lattice::Viterbi``'s forward pass: each node's float32 best score of the paths ending at it."""
        for pos in range(len(begins)):
            for right in begins[pos]:
                best: float | None = None
                for left in ends[pos]:
                    score = _f32(left.backtrace + right.score)
                    if best is None or score > best:
                        best = score
                right.backtrace = best if best is not None else 0.0

    def nbest_normalized(self, normalized: str, *, nbest_size: int) -> list[tuple[list[int], float]]:
        """``Model::NBestEncode`` on normalized text, as ids and float32 scores (see :meth:`nbest`).

        ``nbest_size`` is clipped to 1..1024 as sentencepiece does; at 1 the Viterbi segmentation with score 0.

        Raises:
            TypeError: ``nbest_size`` is not an int.
        """
        return [(self.ids_of(path), score) for path, score in self._nbest_paths(normalized, nbest_size)]

    def _nbest_paths(self, normalized: str, nbest_size: int) -> list[tuple[list[tuple[str, int]], float]]:
        if not isinstance(nbest_size, int) or isinstance(nbest_size, bool):
            raise TypeError(f"nbest_size must be an int, got {nbest_size!r}")
        if not normalized:
            return [([], 0.0)]
        nbest_size = max(1, min(nbest_size, 1024))
        if nbest_size == 1:
            return [(self.viterbi(normalized), 0.0)]
        begins, ends = self._lattice(normalized)
        self._lattice_viterbi(begins, ends)
        bos, eos = ends[0][0], begins[len(normalized)][0]
        # A* from EOS: a hypothesis is (fx, (node, gx, next)); fx = gx + the node's Viterbi score (exact h(x)).
        agenda = _StdHeap()
        agenda.push((eos.backtrace, (eos, 0.0, None)))
        results: list[tuple[list[tuple[str, int]], float]] = []
        while len(agenda):
            fx, hypothesis = agenda.pop()
            node, gx, _ = hypothesis
            if node is bos:
                path = []
                link = hypothesis[2]
                while link[2] is not None:
                    path.append(link[0])
                    link = link[2]
                results.append(([(normalized[p.pos:p.pos + p.length], p.piece_id) for p in path], fx))
                if len(results) == nbest_size:
                    break
                continue
            for left in ends[node.pos]:
                agenda.push((_f32(left.backtrace + gx), (left, _f32(left.score + gx), hypothesis)))
            if len(agenda) >= _MAX_AGENDA:  # keep the best min(512, 10 n) in pop order, as sentencepiece
                kept = _StdHeap()
                for _ in range(min(_MIN_AGENDA, nbest_size * 10)):
                    kept.push(agenda.pop())
                agenda = kept
        return results

    def sample_normalized(self, normalized: str, *, alpha: float, nbest_size: int,
                          rng: random.Random) -> list[tuple[str, int]]:
        """One segmentation of normalized text drawn as ``SampleEncode`` defines it (see the module docstring), as
        (piece text, id) before :meth:`ids_of`.

        Raises:
            ValueError: ``nbest_size`` above 512.
        """
        if nbest_size > 512:
            raise ValueError(f"nbest_size must be at most 512 (sentencepiece's limit for sampling); got "
                             f"{nbest_size!r}")
        if not normalized:
            return []
        if nbest_size in (0, 1):
            return self.viterbi(normalized)
        if nbest_size > 1:
            paths = self._nbest_paths(normalized, nbest_size)
            top = max(alpha * score for _, score in paths)
            weights = [math.exp(alpha * score - top) for _, score in paths]
            return rng.choices(paths, weights=weights)[0][0]
        # Forward filtering: log_alpha[id(node)] = log sum over paths from BOS to the node's start.
        begins, ends = self._lattice(normalized)
        forward: dict[int, float] = {id(ends[0][0]): 0.0}
        for pos in range(len(begins)):
            for right in begins[pos]:
                terms = [forward[id(left)] + alpha * left.score for left in ends[pos]]
                top = max(terms)
                forward[id(right)] = top + math.log(sum(math.exp(t - top) for t in terms))
        # Backward sampling from EOS: the left neighbour with weight exp(forward + alpha * score).
        out = []
        node = begins[len(normalized)][0]
        while True:
            lefts = ends[node.pos]
            terms = [forward[id(left)] + alpha * left.score for left in lefts]
            top = max(terms)
            node = rng.choices(lefts, weights=[math.exp(t - top) for t in terms])[0]
            if node.piece_id == -1:
                break
            out.append((normalized[node.pos:node.pos + node.length], node.piece_id))
        out.reverse()
        return out
