"""The lattice of sentencepiece 0.2.3's unigram trainer (``unigram_model.cc``), float32 bit for bit: the pure-Python
reference.

sentencepiece keeps scores, forward/backward sums and expected counts in ``float`` and computes ``exp``/``log``/
``log1p`` in ``double``. Every float operation here is done in double (exact for one ``+``, ``-``, ``*`` or ``/`` of
two floats) and rounded to float32 (:func:`f32`) where C++ stores or computes a ``float``, in C++'s order; libm is
the same glibc sentencepiece calls, so the results are its bits.

Nodes, in C++'s numbering: 0 is BOS, 1 is EOS, then the pieces at each position, shorter first (the trie's prefix
search), and an unknown node (vocabulary id 0: the trainer's model never sets ``unk_id_``) where no one-character
piece starts. Ties go as in C++: Viterbi keeps the first of equal scores; n-best search pops equal priorities in the
order of libstdc++'s binary heap, which :mod:`hf_bpe.core.stl_heap` copies.

>>> model = TrainerModel([("a", -1.0), ("b", -2.0), ("ab", -2.5)])
>>> lattice = Lattice("ab", model)
>>> [model.pieces[lattice.ids[node]][0] for node in lattice.viterbi()[0]]
['ab']
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

from ...core.stl_heap import heap_pop, heap_push

__all__ = ["Lattice", "TrainerModel", "digamma", "f32"]

_BUFFER = array("f", [0.0])
_UNK_PENALTY = 10.0
_MAX_AGENDA, _MAX_HYPOTHESES, _MAX_ALLOCATED, _MAX_SHRINKS = 10000, 100000, 500000, 10

_FX = 2  # an agenda item is [node, previous hypothesis, fx, gx]; the heap orders by fx


def f32(value: float) -> float:
    """Round a double to float32 (C's ``(float)`` conversion: to nearest, ties to even)."""
    _BUFFER[0] = value
    return _BUFFER[0]


def digamma(x: float) -> float:
    """The trainer's ``Digamma`` (double), term by term in C++'s order."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
               - (127.0 / 30720.0) * xx4 * xx4)
    return result


def _log_sum_exp(x: float, y: float) -> float:
    """LogSumExp(x, y) on floats: ``vmax + log1p(exp(vmin - vmax))``, or ``vmax`` when they are 50 apart."""
    vmin = y if y < x else x
    vmax = y if x < y else x
    if vmax > f32(vmin + 50.0):
        return vmax
    return f32(vmax + math.log1p(math.exp(f32(vmin - vmax))))


class TrainerModel:
    """The trainer's model: pieces with float32 scores; a piece's id is its index."""

    def __init__(self, pieces: Sequence[tuple[str, float]]) -> None:
        self.pieces = list(pieces)
        self.ids = {piece: index for index, (piece, _) in enumerate(self.pieces)}
        self.scores = [score for _, score in self.pieces]
        self.min_score = min(self.scores, default=3.4028234663852886e38)  # FLT_MAX when empty
        self.max_length = max((len(piece) for piece, _ in self.pieces), default=0)
        self.unk_score = f32(self.min_score - _UNK_PENALTY)


class Lattice:
    """The lattice of one text under a model (SetSentence + PopulateNodes)."""

    __slots__ = ("size", "ids", "scores", "lengths", "starts", "begin", "end")

    def __init__(self, text: str, model: TrainerModel) -> None:
        size = self.size = len(text)
        self.ids, self.scores, self.lengths, self.starts = [-1, -1], [0.0, 0.0], [0, 0], [0, size]
        self.begin: list[list[int]] = [[] for _ in range(size + 1)]
        self.end: list[list[int]] = [[] for _ in range(size + 1)]
        self.end[0].append(0)
        self.begin[size].append(1)
        lookup, scores = model.ids.get, model.scores
        for start in range(size):
            single = False
            for length in range(1, min(model.max_length, size - start) + 1):
                index = lookup(text[start: start + length])
                if index is not None:
                    self._insert(start, length, index, scores[index])
                    single = single or length == 1
            if not single:
                self._insert(start, 1, 0, model.unk_score)

    def _insert(self, start: int, length: int, index: int, score: float) -> None:
        node = len(self.ids)
        self.ids.append(index)
        self.scores.append(score)
        self.lengths.append(length)
        self.starts.append(start)
        self.begin[start].append(node)
        self.end[start + length].append(node)

    def marginal(self, freq: float, expected: array) -> None:
        """PopulateMarginal: add ``freq`` times each node's posterior to ``expected[id]`` (float32 array)."""
        scores, size = self.scores, self.size
        count = len(scores)
        alpha = [0.0] * count
        for pos in range(size + 1):
            ends = self.end[pos]
            for right in self.begin[pos]:
                value = 0.0
                for k, left in enumerate(ends):
                    y = f32(scores[left] + alpha[left])
                    value = y if k == 0 else _log_sum_exp(value, y)
                alpha[right] = value
        beta = [0.0] * count
        for pos in range(size, -1, -1):
            begins = self.begin[pos]
            for left in self.end[pos]:
                value = 0.0
                for k, right in enumerate(begins):
                    y = f32(scores[right] + beta[right])
                    value = y if k == 0 else _log_sum_exp(value, y)
                beta[left] = value
        z = alpha[1]
        ids, exp = self.ids, math.exp
        for pos in range(size):
            for node in self.begin[pos]:
                index = ids[node]
                if index >= 0:
                    x = f32(f32(f32(alpha[node] + scores[node]) + beta[node]) - z)
                    expected[index] = expected[index] + freq * exp(x)  # the array rounds to float32

    def viterbi(self) -> tuple[list[int], float, list[float]]:
        """Viterbi: the best path's nodes (BOS and EOS left out), its score, and every node's backtrace score."""
        scores, count = self.scores, len(self.scores)
        backtrace = [0.0] * count
        previous = [-1] * count
        if self.size == 0:
            return [], 0.0, backtrace
        for pos in range(self.size + 1):
            ends = self.end[pos]
            for right in self.begin[pos]:
                best, best_score = -1, 0.0
                score = scores[right]
                for left in ends:
                    value = f32(backtrace[left] + score)
                    if best < 0 or value > best_score:
                        best, best_score = left, value
                previous[right] = best
                backtrace[right] = best_score
        path = []
        node = previous[1]
        while node != -1 and previous[node] != -1:
            path.append(node)
            node = previous[node]
        path.reverse()
        return path, backtrace[1], backtrace

    def nbest2(self) -> list[list[int]]:
        """NBest(2, sample=false): the best and second-best paths by A* from EOS (sentencepiece's search, with its
        agenda limits), or the Viterbi path alone."""
        if self.size == 0:
            return []
        path, _, backtrace = self.viterbi()
        scores, end, starts = self.scores, self.end, self.starts
        # A hypothesis: [node, next hypothesis, fx (priority), gx (score from EOS)].
        agenda: list[list] = []
        heap_push(agenda, [1, None, backtrace[1], 0.0], _FX)
        results: list[list[int]] = []
        total = allocated = 1
        limit, shrinks = _MAX_HYPOTHESES, 0
        while agenda:
            top = heap_pop(agenda, _FX)
            node = top[0]
            if node == 0:
                found = []
                hyp = top[1]
                while hyp is not None and hyp[1] is not None:
                    found.append(hyp[0])
                    hyp = hyp[1]
                results.append(found)
                if len(results) == 2:
                    break
                continue
            ends = end[starts[node]]
            gx = top[3]
            for left in ends:
                heap_push(agenda, [left, top, f32(backtrace[left] + gx), f32(scores[left] + gx)], _FX)
            total += len(ends)
            allocated += len(ends)
            if total >= _MAX_ALLOCATED or allocated >= _MAX_ALLOCATED:
                return [path]
            if len(agenda) >= _MAX_AGENDA or (len(agenda) > 20 and allocated >= limit):
                if shrinks >= _MAX_SHRINKS:
                    return [path]
                shrinks += 1
                kept = [heap_pop(agenda, _FX) for _ in range(min(len(agenda), 20))]
                agenda = []
                seen: set[int] = set()
                for hyp in kept:
                    heap_push(agenda, hyp, _FX)
                    while hyp is not None and id(hyp) not in seen:  # the clones: each chain's hypotheses once
                        seen.add(id(hyp))
                        hyp = hyp[1]
                allocated = len(seen)
                limit = allocated + _MAX_HYPOTHESES
        return results
