"""The encoders of the classic BPE schemes, each as its published code applies it.

- :class:`CodesSegmenter`: subword-nmt's ``apply-bpe`` (merge by rank, ``@@ `` between a word's pieces);
- :func:`tokenize_longest_first`: the greedy longest-token-first segmentation tutorials pair with the paper;
- :func:`wordpiece_word`: WordPiece's greedy longest match from the left, ``##`` inside words (BERT);
- :func:`merge_by_rank`: lowest-ranked pair first, every occurrence left to right (minbpe, the HF course);
- :func:`merge_greedy_passes` with :func:`rasbt_pretokenize` / :func:`rasbt_simple_pretokenize`: rasbt's
  ``BPETokenizerSimple`` encoder, which is not rank based (any known pair merges in left-to-right passes).

>>> CodesSegmenter([("i", "r"), ("o", "n</w>")]).segment_line("  iron  \\n")
'  ir@@ on  \\n'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "CodesSegmenter",
    "merge_by_rank",
    "merge_greedy_passes",
    "rasbt_pretokenize",
    "rasbt_simple_pretokenize",
    "tokenize_longest_first",
    "wordpiece_word",
]

_EOW = "</w>"


class CodesSegmenter:
    """Apply subword-nmt codes to text exactly as ``subword-nmt apply-bpe -c CODES`` does.

    Args:
        merges: the codes in order; a pair listed twice ranks where it first appears.
        version: ``(0, 2)``: ``</w>`` fused onto the last character; ``(0, 1)``: a symbol of its own.
        separator: what marks a piece that the next piece continues.

    >>> CodesSegmenter([("l", "o"), ("lo", "w</w>")]).segment("lower low")
    'lo@@ w@@ e@@ r low'
    """

    def __init__(self, merges: Iterable[tuple[str, str]], *, version: tuple[int, int] = (0, 2),
                 separator: str = "@@") -> None:
        if version not in ((0, 1), (0, 2)):
            raise ValueError(f"version must be (0, 1) or (0, 2), got {version!r}")
        self._ranks: dict[tuple[str, str], int] = {}
        for rank, pair in enumerate(merges):
            self._ranks.setdefault(tuple(pair), rank)  # type: ignore[arg-type]
        self._version = version
        self._separator = separator
        self._cache: dict[str, tuple[str, ...]] = {}

    def segment_word(self, word: str) -> tuple[str, ...]:
        """Return the pieces of one word, without separators.

        >>> CodesSegmenter([("l", "o")]).segment_word("low")
        ('lo', 'w')
        """
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        if len(word) == 1:
            return (word,)
        symbols = list(word) + [_EOW] if self._version == (0, 1) else [*word[:-1], word[-1] + _EOW]
        symbols = merge_by_rank(symbols, self._ranks)
        if symbols[-1] == _EOW:
            symbols.pop()
        elif symbols[-1].endswith(_EOW):
            symbols[-1] = symbols[-1][: -len(_EOW)]
        pieces = tuple(symbols)
        self._cache[word] = pieces
        return pieces

    def segment(self, sentence: str) -> str:
        """Segment a whitespace-tokenized sentence; runs of spaces collapse as in subword-nmt."""
        out: list[str] = []
        for word in sentence.strip("\r\n ").split(" "):
            if word:
                *init, last = self.segment_word(word)
                out.extend(piece + self._separator for piece in init)
                out.append(last)
        return " ".join(out)

    def segment_line(self, line: str) -> str:
        """Segment one line, keeping its leading and trailing whitespace (subword-nmt's ``process_line``)."""
        lead = len(line) - len(line.lstrip("\r\n "))
        trail = len(line) - len(line.rstrip("\r\n "))
        out = line[:lead] + self.segment(line)
        if trail and trail != len(line):
            out += line[-trail:]
        return out


def merge_by_rank(symbols: list, ranks: Mapping[tuple, int], new: Mapping[tuple, object] | None = None) -> list:
    """Merge the lowest-ranked pair present, every occurrence left to right, until no ranked pair is left.

    Symbols are strings (the merged symbol is their concatenation) or, with ``new`` (pair -> merged id), ids.

    >>> merge_by_rank([97, 97, 97, 98], {(97, 97): 0, (256, 97): 1}, {(97, 97): 256, (256, 97): 257})
    [257, 98]
    """
    while len(symbols) > 1:
        best = None
        for pair in zip(symbols, symbols[1:]):
            rank = ranks.get(pair)
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, pair)
        if best is None:
            break
        pair = best[1]
        merged = new[pair] if new is not None else pair[0] + pair[1]
        out = []
        i = 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
                out.append(merged)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    return symbols


def merge_greedy_passes(ids: list[int], merges: Mapping[tuple[int, int], int]) -> list[int]:
    """Merge any known pair scanning left to right, pass after pass, until a pass merges nothing (rasbt).

    >>> merge_greedy_passes([1, 2, 3], {(2, 3): 5, (1, 2): 4, (4, 3): 6})
    [6]
    """
    changed = True
    while changed and len(ids) > 1:
        changed = False
        out: list[int] = []
        i = 0
        while i < len(ids) - 1:
            merged = merges.get((ids[i], ids[i + 1]))
            if merged is not None:
                out.append(merged)
                i += 2
                changed = True
            else:
                out.append(ids[i])
                i += 1
        if i < len(ids):
            out.append(ids[i])
        ids = out
    return ids


def rasbt_pretokenize(text: str) -> list[str]:
    """Split text as rasbt's ``pretokenize_text``: line breaks alone, ``Ġ`` for one leading space per word.

    Spaces beyond the first before a word, and at the end of a line, become lone ``Ġ``; other whitespace
    (tabs) is dropped, as there.

    >>> rasbt_pretokenize("Hi  there\\r\\nyou ")
    ['Hi', 'Ġ', 'Ġthere', '\\r', '\\n', 'you', 'Ġ']
    """
    tokens: list[str] = []
    for part in re.split(r"(\r\n|\r|\n)", text):
        if not part:
            continue
        if part == "\r\n":
            tokens += ["\r", "\n"]
            continue
        if part in ("\r", "\n"):
            tokens.append(part)
            continue
        spaces = 0
        for match in re.finditer(r"( +)|(\S+)", part):
            if match.group(1) is not None:
                spaces += len(match.group(1))
                continue
            word = match.group(2)
            if spaces:
                tokens += ["Ġ"] * (spaces - 1) + ["Ġ" + word]
                spaces = 0
            else:
                tokens.append(word)
        tokens += ["Ġ"] * spaces
    return tokens


def rasbt_simple_pretokenize(text: str) -> list[str]:
    """Split text as the simple notebook's ``encode``: whitespace words, ``Ġ`` before all but the first.

    Its ``text.replace("\\n", " \\n ").split()`` drops the line breaks it means to keep; so does this.

    >>> rasbt_simple_pretokenize("Jack ran\\nhome")
    ['Jack', 'Ġran', 'Ġhome']
    """
    words = text.replace("\n", " \n ").split()
    return [("Ġ" + w if i > 0 and not w.startswith("\n") else w) for i, w in enumerate(words)]


def tokenize_longest_first(word: str, tokens: Sequence[str], *, unk_token: str = "</u>") -> list[str]:
    """Split a word greedily by the longest vocabulary token that occurs in it, then its pieces by the rest.

    Token length counts ``</w>`` as one symbol; equal lengths keep the given order. A piece no token covers
    becomes ``unk_token``. This is the segmentation tutorials pair with the paper's algorithm.

    >>> tokenize_longest_first("highest</w>", ["tain</w>", "moun", "est</w>", "high"])
    ['high', 'est</w>']
    """
    ordered = sorted(tokens, key=lambda t: -(len(t) - 3 * t.endswith(_EOW)))
    return _longest_first(word, ordered, unk_token)


def _longest_first(text: str, tokens: Sequence[str], unk_token: str) -> list[str]:
    if not text:
        return []
    for i, token in enumerate(tokens):
        starts = [m.start() for m in re.finditer(re.escape(token), text)]
        if not starts:
            continue
        out: list[str] = []
        begin = 0
        for start in starts:
            out += _longest_first(text[begin:start], tokens[i + 1:], unk_token)
            out.append(token)
            begin = start + len(token)
        return out + _longest_first(text[begin:], tokens[i + 1:], unk_token)
    return [unk_token]


def wordpiece_word(word: str, vocab: Mapping[str, int], unk_id: int, *, prefix: str = "##",
                   max_chars: int | None = 100) -> list[int]:
    """Encode one word as `tokenizers`' WordPiece model: longest vocabulary match from the left, ``##`` after the
    first piece; a word with a part no token matches, or longer than ``max_chars`` characters, is ``[UNK]``.

    ``max_chars=None``: no limit (the HF course's ``encode_word``). A piece after the first is ``##`` + at least one
    character of the word, as in BERT; the course's ``encode_word`` can also match a token ``"#"`` against the
    prefix itself and then loops forever (``tests/test_wordpiece_score.py``).

    >>> wordpiece_word("hugs", {"[UNK]": 0, "hug": 1, "##s": 2}, 0)
    [1, 2]
    >>> wordpiece_word("bugs", {"[UNK]": 0, "hug": 1, "##s": 2}, 0)
    [0]
    """
    if max_chars is not None and len(word) > max_chars:
        return [unk_id]
    out: list[int] = []
    start = 0
    while start < len(word):
        for end in range(len(word), start, -1):
            found = vocab.get((prefix if start else "") + word[start:end])
            if found is not None:
                out.append(found)
                start = end
                break
        else:
            return [unk_id]
    return out
