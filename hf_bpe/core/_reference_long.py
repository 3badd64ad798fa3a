"""The executable spec of the long-piece encoder (``csrc/long_piece.hpp``): rank-ordered BPE of one piece in linear
time, by backtracking over the vocabulary's tokens instead of merging pairs.

The proof that it equals rank-ordered BPE (``WordEncoder._merge_all``) is written out in ``csrc/long_piece.hpp``;
in short: when the merges are *monotone* (every merge's inputs are made only by lower ranks) and every id has one
spelling, the BPE of a piece is the only way to spell it with *self-encoding* tokens (tokens whose own bytes merge
back into them) whose every adjacent pair is *compatible* (the two tokens' bytes merge into exactly those two
tokens). Compatibility is decided from the two tokens' merge trees (:meth:`LongPieceTables.compatible`), and the
spelling is found left to right by the longest self-encoding token first, backtracking to the next shorter one
(a prefix of the text has at most one valid spelling, so a position that fails once never succeeds: each is left at
most once, which bounds the work by the piece length times the number of tokens that start at one place).

:class:`LongPieceTables` returns None from :meth:`LongPieceTables.build` for merges without those properties (the
encoder then keeps its heap merge, exact for every merge list).

>>> tables = LongPieceTables.build([(97, 97, 256), (256, 256, 257)], list(range(256)))
>>> tables.encode(b"aaaaaaa")
[257, 256, 97]
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["LongPieceTables", "merge_current_pairs"]


def merge_current_pairs(ids: list[int], ranks: dict[tuple[int, int], tuple[int, int]]) -> tuple[list[int], tuple]:
    """Merge the lowest (rank, position) current pair until none is left; return the ids and the last merge.

    The last merge is ``(left, right, rank)``, or ``()`` when nothing merged. O(n^2): for building and tests.

    >>> merge_current_pairs([1, 2, 3], {(1, 2): (0, 9), (9, 3): (1, 10)})
    ([10], (9, 3, 1))
    """
    ids = list(ids)
    last: tuple = ()
    while True:
        best = None
        for i in range(len(ids) - 1):
            found = ranks.get((ids[i], ids[i + 1]))
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], i, found[1])
        if best is None:
            return ids, last
        rank, i, new = best
        last = (ids[i], ids[i + 1], rank)
        ids[i: i + 2] = [new]


class LongPieceTables:
    """What the backtracking encoder needs: spellings, merge trees, self-encoding tokens; built by :meth:`build`."""

    def __init__(self, ranks: dict[tuple[int, int], tuple[int, int]], byte_ids: Sequence[int],
                 tokens: dict[bytes, int], roots: dict[int, tuple[int, int, int]]) -> None:
        self.ranks = ranks
        self.byte_ids = tuple(byte_ids)
        self.tokens = tokens  # spelling -> id, self-encoding tokens only (every byte included)
        self.roots = roots    # id -> (left, right, rank) of the merge that makes it; bytes absent
        self.longest = max(map(len, tokens))

    @classmethod
    def build(cls, merges: Sequence[tuple[int, int, int]], byte_ids: Sequence[int]) -> LongPieceTables | None:
        """Return the tables of ``merges`` (``(left, right, new)`` in rank order), or None if they are not monotone
        or an id has two spellings (the backtracking encoder would not be exact: the heap merge is kept)."""
        ranks = {(left, right): (rank, new) for rank, (left, right, new) in enumerate(merges)}
        spelled: dict[int, bytes] = {}
        for b in range(256):
            spelled.setdefault(byte_ids[b], bytes([b]))
        used_at: dict[int, int] = {}  # id -> lowest rank of a live merge that takes it as an input
        waiting = []  # live merges whose inputs were not made from bytes by a lower rank
        for rank, (left, right, new) in enumerate(merges):
            if ranks[(left, right)][0] != rank:
                continue  # a repeated pair: only its last rank merges
            if left not in spelled or right not in spelled:
                waiting.append((left, right))
                continue
            if new in used_at:
                return None  # made after a merge that takes it: not monotone
            both = spelled[left] + spelled[right]
            if spelled.setdefault(new, both) != both or len(both) == 1:
                return None  # two spellings (or a byte made by a merge)
            used_at.setdefault(left, rank)
            used_at.setdefault(right, rank)
        if any(left in spelled and right in spelled for left, right in waiting):
            return None  # a merge whose inputs are made only by higher ranks: not monotone
        tokens: dict[bytes, int] = {bytes([b]): byte_ids[b] for b in range(256)}
        roots: dict[int, tuple[int, int, int]] = {}
        for token, spelling in spelled.items():
            if len(spelling) < 2:
                continue
            got, last = merge_current_pairs([byte_ids[b] for b in spelling], ranks)
            if got == [token]:
                tokens[spelling] = token
                roots[token] = last
        return cls(ranks, byte_ids, tokens, roots)

    def _rank_of(self, token: int) -> int:
        root = self.roots.get(token)
        return -1 if root is None else root[2]

    def compatible(self, first: int, second: int) -> bool:
        """Say whether the bytes of ``first`` then ``second`` merge into exactly those two tokens.

        Walks back through the states of the boundary (the symbols either side of it), latest first: a state
        ends when the later-made of its two symbols' parents is made; the pair across it must not merge before.

        >>> tables = LongPieceTables.build([(97, 98, 256), (98, 99, 257)], list(range(256)))
        >>> tables.compatible(97, 257), tables.compatible(256, 99)
        (False, True)
        """
        left, right = first, second
        limit, right_ended = None, False  # None: the final state, which never ends
        while True:
            found = self.ranks.get((left, right))
            if found is not None and (limit is None or found[0] < limit or (right_ended and found[0] == limit)):
                return False
            left_rank, right_rank = self._rank_of(left), self._rank_of(right)
            if left_rank < 0 and right_rank < 0:
                return True
            if left_rank > right_rank:  # the left symbol was made last: before it, its right child
                limit, right_ended = left_rank, False
                left = self.roots[left][1]
            else:  # the right one (on equal ranks the right one: the same merge runs left to right)
                limit, right_ended = right_rank, True
                right = self.roots[right][0]

    def encode(self, piece: bytes) -> list[int]:
        """Return the rank-ordered BPE of ``piece``: the longest self-encoding token first, compatible with the
        one before it and ending where a spelling can still go on; else the next shorter one, else back one token.
        """
        n = len(piece)
        dead = [False] * (n + 1)
        stack: list[tuple[int, int]] = []  # (token, its length)
        pos, length = 0, self._longest_at(piece, 0, self.longest)
        while pos < n:
            while length > 0:
                token = self.tokens.get(piece[pos: pos + length])
                if token is not None and not dead[pos + length] and (
                        not stack or self.compatible(stack[-1][0], token)):
                    break
                length -= 1
            if length > 0:
                stack.append((token, length))
                pos += length
                if pos < n:
                    length = self._longest_at(piece, pos, self.longest)
            else:
                dead[pos] = True
                token, length = stack.pop()  # never empty: the BPE itself is one spelling that goes on
                pos -= length
                length -= 1
        return [token for token, _ in stack]

    def _longest_at(self, piece: bytes, pos: int, limit: int) -> int:
        for length in range(min(limit, len(piece) - pos), 0, -1):
            if piece[pos: pos + length] in self.tokens:
                return length
        return 0
