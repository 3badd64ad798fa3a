"""Read and write tiktoken ``.tiktoken`` files, and convert mergeable ranks to and from a merge list.

A ``.tiktoken`` file has one line per token, ``base64(token bytes) SP rank LF``, sorted by rank. The rank is both
the token id and the merge priority: tiktoken merges any adjacent pair whose concatenation has a rank, lowest rank
first. A GPT-2 style model instead lists the allowed merges in priority order (``merges.txt``) next to a
``vocab.json`` of ids. :func:`merges_from_ranks` recovers that merge list from the ranks (one merge per token of
two or more bytes, in rank order) and :func:`ranks_from_merges` goes back; for real BPE vocabularies the two
encoders then agree token for token (e.g. GPT-2: ``vocab.json`` ids are exactly the ranks of ``gpt2.tiktoken``).

>>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4}
>>> print(dump_tiktoken(ranks), end="")
YQ== 0
Yg== 1
Yw== 2
YWI= 3
YWJj 4
>>> merges_from_ranks(ranks)
[(b'a', b'b'), (b'ab', b'c')]
>>> ranks_from_merges(ranks, merges_from_ranks(ranks)) == ranks
True
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence

from .gpt2 import read_line_file

__all__ = ["dump_tiktoken", "load_tiktoken", "merges_from_ranks", "ranks_from_merges"]

# Whisper's multilingual.tiktoken ends with '= 50256': an empty token, which tiktoken's reader (a lenient
# b64decode) loads as b''. Strict base64 rejects a lone '=', so it is special-cased both ways to round-trip.
_EMPTY_TOKEN_B64 = b"="


# ----------------------------------------------------------------------------------------------------------------
# Validation shared by the functions that take a rank table
# ----------------------------------------------------------------------------------------------------------------

def _check_ranks(ranks: object, what: str = "ranks") -> dict[bytes, int]:
    """Return ``ranks`` as a dict after checking: bytes -> non-negative int, every rank used once.

    The empty token is allowed because a real file has one (see :func:`load_tiktoken`); it never takes part in
    merging.
    """
    if not isinstance(ranks, Mapping):
        raise TypeError(
            f"{what} must be a mapping of token bytes to int ranks (e.g. from load_tiktoken), "
            f"got {type(ranks).__name__} {ranks!r:.80}"
        )
    owner: dict[int, bytes] = {}
    for token, rank in ranks.items():
        if not isinstance(token, bytes):
            raise TypeError(f"{what} keys must be bytes, got {token!r}; encode str tokens to bytes first")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise TypeError(f"{what}[{token!r}] must be a non-negative int, got {rank!r}")
        if rank in owner:
            raise ValueError(
                f"{what} gives rank {rank} to both {owner[rank]!r} and {token!r}; "
                "a rank is a token id and a merge priority, so each must be unique"
            )
        owner[rank] = token
    return dict(ranks)


# ----------------------------------------------------------------------------------------------------------------
# The file format
# ----------------------------------------------------------------------------------------------------------------

def load_tiktoken(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file into mergeable ranks.

    Each line is ``BASE64TOKEN RANK``; blank lines are skipped (as tiktoken does), CRLF line ends and a missing
    final newline are accepted. Ranks need not be contiguous. The token ``=`` is the empty token ``b""``, as
    tiktoken reads it (Whisper's ``multilingual.tiktoken`` ends with ``= 50256``); it never merges.

    Args:
        path: the file.

    Returns:
        Token bytes -> rank, in file order.

    Raises:
        TypeError: when ``path`` is not a str or path.
        FileNotFoundError: when the file does not exist.
        ValueError: naming the file and 1-based line: a line without exactly two fields, invalid base64, a rank
            that is not a non-negative decimal integer, a token or a rank that appears twice; or an empty file.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.tiktoken"
    >>> _ = p.write_bytes(b"YQ== 0\\nYg== 1\\nYWI= 2")
    >>> load_tiktoken(p)
    {b'a': 0, b'b': 1, b'ab': 2}
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__} {path!r:.80}")
    name = os.fspath(path)
    data = read_line_file(name, "a .tiktoken file")
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    line_of_token: dict[bytes, int] = {}
    # bytes.splitlines splits on \n, \r\n and \r only; none of them is in the base64 alphabet.
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        where = f"{name!r}: line {number}"
        if len(fields) != 2:
            problem = "the rank is missing" if len(fields) == 1 else f"{len(fields)} fields"
            raise ValueError(
                f"{where}: {line[:80]!r}: {problem}; expected 'BASE64TOKEN RANK', e.g. 'IQ== 0'"
            )
        b64, rank_text = fields
        if b64 == _EMPTY_TOKEN_B64:
            token = b""
        else:
            try:
                token = base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(f"{where}: {b64[:80]!r} is not valid base64 ({exc}); the token must be base64 "
                                 "of its bytes, e.g. 'IQ==' for b'!'") from None
        # int() alone would also take '+5', '1_000', '٣' or surrounding space: insist on plain ASCII digits.
        if not (rank_text.isdigit() and rank_text.isascii()):
            raise ValueError(f"{where}: rank {rank_text[:80]!r} is not a non-negative integer; "
                             "expected decimal digits, e.g. 'IQ== 0'")
        rank = int(rank_text)
        if token in line_of_token:
            raise ValueError(f"{where}: token {token!r} already appeared on line {line_of_token[token]}; "
                             "each token must appear once")
        if rank in line_of_rank:
            raise ValueError(f"{where}: rank {rank} already given on line {line_of_rank[rank]}; "
                             "each rank must appear once")
        line_of_token[token] = number
        line_of_rank[rank] = number
        ranks[token] = rank
    if not ranks:
        raise ValueError(f"{name!r}: empty tiktoken file (no 'BASE64TOKEN RANK' line); "
                         "is this the right file?")
    return ranks


def dump_tiktoken(ranks: Mapping[bytes, int]) -> str:
    """Write mergeable ranks in the ``.tiktoken`` format, byte for byte as OpenAI's files.

    Lines are sorted by rank, each ``base64 SP rank LF`` (tiktoken's own ``dump_tiktoken_bpe``; the empty token is
    written ``=`` as in Whisper's file); write the result
    with ``Path.write_text(text, encoding="ascii")`` or ``write_bytes(text.encode())``.

    Args:
        ranks: token bytes -> rank.

    Returns:
        The file content (ASCII), ending with a newline.

    Raises:
        TypeError: on keys that are not bytes or ranks that are not non-negative ints.
        ValueError: when two tokens share a rank, or ``ranks`` is empty (the file could not be read back).

    >>> dump_tiktoken({b" hi": 1, b"!": 0})
    'IQ== 0\\nIGhp 1\\n'
    """
    checked = _check_ranks(ranks)
    if not checked:
        raise ValueError(
            "ranks is empty; a .tiktoken file needs at least one token (load_tiktoken rejects empty files)"
        )

    def spell(token: bytes) -> str:
        return base64.b64encode(token).decode("ascii") if token else _EMPTY_TOKEN_B64.decode("ascii")

    return "".join([f"{spell(token)} {rank}\n" for token, rank in sorted(checked.items(), key=lambda kv: kv[1])])


# ----------------------------------------------------------------------------------------------------------------
# Ranks <-> merges
# ----------------------------------------------------------------------------------------------------------------

def merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Recover the merge list that mergeable ranks imply.

    For every token of two or more bytes, in rank order, the merge is the pair of parts that byte-pair merging of
    the token's bytes produces when it may only use ranks below the token's own rank (merging any adjacent pair
    whose concatenation has such a rank, lowest first) -- ``bpe(mergeable_ranks, token, max_rank=rank)`` of
    transformers' former ``TikTokenConverter`` (transformers 5's converter lists every split instead). Single
    bytes are the alphabet: they need a rank but it may be any; the empty token (Whisper) is skipped. With these
    merges, merge-list BPE (`tokenizers`, only listed pairs merge) encodes exactly like tiktoken.

    Instead of replaying that merging for each token (quadratic or worse in its length), a candidate split
    ``(a, b)`` (both ranked below the token) is checked by walking back through the merges that built ``a`` and
    ``b``: it is the outcome iff no pair meeting at the boundary between them would have merged first (the
    check of GitHub's linear-time ``bpe`` crate, ``is_valid_token_pair``, plus tiktoken's leftmost rule for
    equal ranks). The outcome is unique, so the first split that passes is it. Cost: O(total token length x
    merge-tree depth); measured 0.6 s for cl100k_base and 1.5 s for o200k_base.

    Some real rank tables are not a plain BPE order: 678 of Llama 3's tokens (ranks above cl100k's) cannot be
    built from two lower-ranked tokens (``b'.:.:'`` merges to ``[b'.', b':.', b':']`` below its rank), so this
    raises for them; their Hugging Face files list every split of every token instead.

    Args:
        ranks: token bytes -> rank (e.g. from :func:`load_tiktoken`).

    Returns:
        ``(left, right)`` pairs, one per token of two or more bytes, in rank order.

    Raises:
        TypeError: on keys that are not bytes or ranks that are not non-negative ints.
        ValueError: when two tokens share a rank, when a token contains a byte that has no rank, or when a token
            cannot be built from two lower-ranked tokens (merging its bytes with lower ranks does not end in
            exactly two parts), naming the token and its rank.

    >>> merges_from_ranks({b"a": 0, b"b": 1, b"ab": 2, b"bab": 3})
    [(b'a', b'b'), (b'b', b'ab')]
    """
    checked = _check_ranks(ranks)
    # 1. The alphabet: single bytes exist from the start, whatever their rank, so they are "born" at -1.
    born: dict[bytes, int] = {token: (rank if len(token) > 1 else -1) for token, rank in checked.items()}
    # split[t] = (left, right) of every multi-byte token handled so far; single bytes are leaves.
    split: dict[bytes, tuple[bytes, bytes]] = {}
    merges: list[tuple[bytes, bytes]] = []
    get_rank = checked.get
    get_born = born.get

    def builds(left: bytes, right: bytes, rank: int) -> bool:
        # Invariant: left and right are valid (leaves or in split) and born before `rank`. Walk the states of the
        # boundary between the part ending the left side and the part starting the right side, newest first.
        # In a valid build every merge has a higher rank than its parts, so merges happen in rank order and the
        # state (x, y) lasts until the next merge touching x or y (the "event"), whose rank is `limit`. The walk
        # fails if x + y has a rank below `limit` (merging would have joined the two sides first), or equal to it
        # when the event is on the right: then x + y is the same token as the event's, and merging takes the
        # leftmost of equal ranks, the boundary ('**' + '****' is not how '******' is built: '****' + '**' is).
        # The first state checked, (left, right) with limit `rank`, is the merge itself.
        x, y, limit, event_on_right = left, right, rank, False
        while True:
            joined = get_rank(x + y)
            if joined is not None and (joined < limit or (joined == limit and event_on_right)):
                return False
            bx, by = born[x], born[y]
            if bx < 0 and by < 0:
                return True
            if bx > by:  # x was made last: before that, its right part ended the left side
                limit, event_on_right = bx, False
                x = split[x][1]
            else:
                limit, event_on_right = by, True
                y = split[y][0]

    # 2. Tokens in rank order; each needs exactly one split into two earlier-born tokens that passes `builds`.
    for token, rank in sorted(checked.items(), key=lambda kv: kv[1]):
        size = len(token)
        if size < 2:  # the alphabet, and Whisper's empty token
            continue
        found: tuple[bytes, bytes] | None = None
        for cut in range(1, size):
            left, right = token[:cut], token[cut:]
            bl, br = get_born(left), get_born(right)
            if bl is None or br is None or bl >= rank or br >= rank:
                continue
            # A multi-byte part ranked lower than `token` that was not handled would have raised already.
            if builds(left, right, rank):
                found = (left, right)
                break
        if found is None:
            missing = sorted({bytes([b]) for b in token if bytes([b]) not in checked})
            if missing:
                raise ValueError(
                    f"token {token!r} (rank {rank}) contains the bytes {missing!r}, which have no rank; "
                    "a mergeable rank table must rank every byte its tokens use"
                )
            raise ValueError(
                f"token {token!r} (rank {rank}) cannot be built from two lower-ranked tokens: merging its bytes "
                f"with the ranks below {rank} ends in {_parts_below(checked, token, rank)!r}, not two parts; "
                "the ranks are not a BPE merge order (was the file reordered or edited?)"
            )
        split[token] = found
        merges.append(found)
    return merges


def _parts_below(ranks: Mapping[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """Merge ``token``'s bytes with ranks below ``max_rank``, lowest rank first, leftmost on ties (for errors)."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        best_i, best = -1, max_rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best:
                best_i, best = i, r
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def ranks_from_merges(vocab: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> dict[bytes, int]:
    """Turn a GPT-2 style vocabulary and merge list into tiktoken mergeable ranks.

    The rank of a token is its vocabulary id, as in OpenAI's own conversion (``gpt2.tiktoken`` ranks are GPT-2's
    ``encoder.json`` ids). The ranks hold the single-byte tokens of ``vocab`` and every merge result; other
    entries (special tokens such as ``<|endoftext|>``, tokens no merge produces) are left out, since tiktoken
    would merge into them. A repeated merge keeps its last position (as in `tokenizers`). tiktoken uses the
    rank as merge priority, so the merge results' ids must not decrease along the merge list (several merges may
    make one token, as in merge lists converted from tiktoken, e.g. Llama 3's); otherwise the vocabulary cannot
    be expressed as ranks (e.g. RoBERTa, whose ids are not in merge order) and this raises.

    For merges recovered by :func:`merges_from_ranks` the round trip is exact, and
    ``merges_from_ranks(ranks_from_merges(vocab, merges)) == merges`` for GPT-2's files.

    Args:
        vocab: token bytes -> id (e.g. GPT-2's ``vocab.json`` through :mod:`hf_bpe.formats.gpt2`).
        merges: merge pairs in priority order.

    Returns:
        Token bytes -> rank (== vocabulary id), sorted by rank.

    Raises:
        TypeError: on malformed ``vocab`` or ``merges`` entries.
        ValueError: when two tokens share an id, a merge uses or produces a token missing from ``vocab``, or
            the ids are not in merge order (see above).

    >>> vocab = {b"a": 0, b"b": 1, b"ab": 2, b"bab": 3, b"<|end|>": 4}
    >>> ranks_from_merges(vocab, [(b"a", b"b"), (b"b", b"ab")])
    {b'a': 0, b'b': 1, b'ab': 2, b'bab': 3}
    """
    checked = _check_ranks(vocab, "vocab")
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Sequence):
        raise TypeError(f"merges must be a sequence of (bytes, bytes) pairs, got {type(merges).__name__} "
                        f"{merges!r:.80}")
    # 1. Last position wins for a repeated pair.
    position: dict[tuple[bytes, bytes], int] = {}
    for index, merge in enumerate(merges):
        if not (isinstance(merge, tuple) and len(merge) == 2
                and isinstance(merge[0], bytes) and isinstance(merge[1], bytes) and merge[0] and merge[1]):
            raise TypeError(f"merge {index} must be a pair of non-empty bytes, got {merge!r:.80}")
        position.pop(merge, None)  # re-insert so dict order == order of last positions
        position[merge] = index
    # 2. Check each merge against the ids, in effective priority order.
    ranks: dict[bytes, int] = {token: rank for token, rank in checked.items() if len(token) == 1}
    previous: tuple[int, tuple[bytes, bytes]] | None = None
    for (left, right), index in position.items():
        result = left + right
        for token, what in ((left, "left part"), (right, "right part"), (result, "result")):
            if token not in checked:
                raise ValueError(f"merge {index} {(left, right)!r}: its {what} {token!r} is not in vocab; "
                                 "merges must only use and produce vocabulary tokens")
        # A part may have a higher id than the result: merges derived from tiktoken ranks list every split of a
        # token (Llama 3 makes '    ' (257) from ' ' + '   ' (262)), which is how tiktoken merges too.
        rank = checked[result]
        if previous is not None and rank < previous[0]:
            raise ValueError(
                f"merge {index} {(left, right)!r} makes id {rank}, but the earlier merge {previous[1]!r} made id "
                f"{previous[0]}; tiktoken uses ids as merge priority, so merge results need non-decreasing ids "
                "(this vocabulary's ids are not in merge order, e.g. RoBERTa; it has no tiktoken form)"
            )
        previous = (rank, (left, right))
        ranks[result] = rank
    return dict(sorted(ranks.items(), key=lambda kv: kv[1]))
