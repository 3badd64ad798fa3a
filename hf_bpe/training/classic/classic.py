"""Turn a corpus into the symbol sequences of a classic BPE scheme, and learn its merges in the compiled loop.

Each published trainer sees text its own way before the shared merge loop (``hf_bpe.core._classic``) runs:

- ``words_subword_nmt``: lines split on ``" "`` (subword-nmt's ``line.strip('\\r\\n ').split(' ')``), each word
  as characters with ``</w>`` fused onto the last one (``l o w</w>``);
- ``words_paper``: whitespace-separated words as characters plus a separate ``</w>`` symbol (``l o w </w>``);
- ``words_regex``: pre-tokens of a named regex as UTF-8 bytes (the HF course, minbpe's RegexTokenizer);
- a whole text as one sequence (minbpe's BasicTokenizer, rasbt's simple notebook).

Words keep the order in which the corpus first shows them: the first-seen tie-break depends on it.

>>> words, counts = words_paper(["low lower low"])
>>> words, counts
([('l', 'o', 'w', '</w>'), ('l', 'o', 'w', 'e', 'r', '</w>')], [2, 1])
>>> learn(words, counts, num_merges=2, tie_break="first-seen")
[('l', 'o'), ('lo', 'w')]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...core import _classic
from ...core.pretokenize import Pretokenizer
from .. import progress
from ..corpus import is_paths, iter_texts

__all__ = [
    "END_OF_WORD",
    "progress_bar",
    "iter_corpus_texts",
    "learn",
    "learn_ids",
    "words_paper",
    "words_regex",
    "words_subword_nmt",
]

END_OF_WORD = "</w>"


def iter_corpus_texts(corpus: Any, *, text_column: str = "text", whole_files: bool = False) -> Iterable[str]:
    """Yield the texts of a corpus; with ``whole_files``, each file is one text (as the tutorials read it).

    >>> list(iter_corpus_texts(["a b", "c"]))
    ['a b', 'c']
    """
    if whole_files and is_paths(corpus):
        paths = [corpus] if isinstance(corpus, os.PathLike) else list(corpus)
        for path in paths:
            # iter_texts checks the path and reports non-UTF-8 lines; its lines keep their "\n".
            yield "".join(iter_texts(Path(path)))
        return
    yield from iter_texts(corpus, text_column=text_column)


def progress_bar(show: bool, total: int | None) -> Any:
    """A bar of merges on stderr (disabled unless ``show``)."""
    return progress.progress_bar(show, total=total, desc="merges")


def _count(words: Iterable[str], counts: dict[str, int]) -> None:
    for word in words:
        counts[word] = counts.get(word, 0) + 1


def word_counts_by_lines(texts: Iterable[str] | Mapping[str, int]) -> dict[str, int]:
    """Count the space-separated words of every line, first seen first (subword-nmt's ``get_vocabulary``).

    Lines break where ``str.splitlines`` breaks them, as subword-nmt's ``codecs`` reader does, and keep their
    break: only ``"\\r"``, ``"\\n"`` and ``" "`` are stripped, so a line that ends at ``"\\x0b"``, ``"\\x1c"``,
    ``"\\x85"`` or ``"\\u2028"`` keeps that character at the end of its last word, as in subword-nmt. A mapping is
    taken as word counts already (subword-nmt's ``--dict-input``).

    >>> word_counts_by_lines(["to be  or\\r\\nnot to be"])
    {'to': 2, 'be': 2, 'or': 1, 'not': 1}
    >>> word_counts_by_lines(["a\\tb c\\x0bd"])
    {'a\\tb': 1, 'c\\x0b': 1, 'd': 1}
    """
    if isinstance(texts, Mapping):
        return dict(texts)
    counts: dict[str, int] = {}
    for text in texts:
        for line in text.splitlines(keepends=True):
            _count((word for word in line.strip("\r\n ").split(" ") if word), counts)
    return counts


def words_subword_nmt(texts: Iterable[str] | Mapping[str, int]) -> tuple[list[tuple[str, ...]], list[int]]:
    """Return subword-nmt's words: characters, ``</w>`` fused onto the last one.

    >>> words_subword_nmt({"low": 5, "a": 1})
    ([('l', 'o', 'w</w>'), ('a</w>',)], [5, 1])
    """
    counts = word_counts_by_lines(texts)
    words = [tuple(word[:-1]) + (word[-1] + END_OF_WORD,) for word in counts]
    return words, list(counts.values())


def words_paper(texts: Iterable[str] | Mapping[str, int]) -> tuple[list[tuple[str, ...]], list[int]]:
    """Return the paper's words: characters and a separate ``</w>`` symbol, split on any whitespace.

    >>> words_paper({"low": 5})
    ([('l', 'o', 'w', '</w>')], [5])
    """
    if isinstance(texts, Mapping):
        counts = dict(texts)
    else:
        counts = {}
        for text in texts:
            _count(text.split(), counts)
    return [(*word, END_OF_WORD) for word in counts], list(counts.values())


def words_regex(texts: Iterable[str], pattern: str) -> tuple[list[bytes], list[int]]:
    """Return the pre-tokens of a named pattern (or a regex) as bytes with their counts, first seen first.

    >>> words_regex(["hug hug pug"], "gpt2")
    ([b'hug', b' hug', b' pug'], [1, 1, 1])
    """
    pretokenizer = Pretokenizer(pattern)
    counts: dict[bytes, int] = {}
    for text in texts:
        for piece in pretokenizer.split_bytes(text):
            counts[piece] = counts.get(piece, 0) + 1
    return list(counts), list(counts.values())


def learn(
    words: Sequence[Sequence[str]],
    counts: Sequence[int],
    *,
    num_merges: int,
    tie_break: str,
    min_frequency: int = 0,
    reuse_equal: bool = True,
    progress: Any = None,
) -> list[tuple[str, str]]:
    """Learn merges over words given as sequences of string symbols; return the merged pairs as strings.

    Symbols are their text (a merge spelling an existing symbol is that symbol), as in the paper, subword-nmt,
    the HF course and `tokenizers`.
    """
    alphabet: dict[str, int] = {}
    for word in words:
        for symbol in word:
            if symbol not in alphabet:
                alphabet[symbol] = len(alphabet)
    flat = np.fromiter((alphabet[s] for word in words for s in word), dtype=np.int32)
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(word) for word in words], out=starts[1:])
    vocab = [symbol.encode("utf-8") for symbol in alphabet]
    out_vocab, merges = _classic.learn_merges(
        flat, starts, np.asarray(counts, dtype=np.int64), vocab, num_merges=num_merges,
        min_frequency=min_frequency, tie_break=tie_break, reuse_equal=reuse_equal, progress=progress,
    )
    return [(out_vocab[a].decode("utf-8"), out_vocab[b].decode("utf-8")) for a, b, _ in merges]


def learn_ids(
    sequences: Sequence[np.ndarray],
    counts: Sequence[int],
    vocab: list[bytes],
    *,
    num_merges: int,
    tie_break: str = "first-seen",
    min_frequency: int = 0,
    reuse_equal: bool = False,
    strip_prefix: bytes = b"",
    max_vocab: int | None = None,
    objective: str = "count",
    progress: Any = None,
) -> tuple[list[bytes], list[tuple[int, int, int]]]:
    """Learn merges over sequences of ids (minbpe's bytes, rasbt's characters); new ids follow ``vocab``.

    ``objective="score"`` ranks pairs by WordPiece's likelihood score instead of their count.

    >>> learn_ids([np.frombuffer(b"aaabdaaabac", np.uint8)], [1], [bytes([b]) for b in range(256)], num_merges=3)[1]
    [(97, 97, 256), (256, 97, 257), (257, 98, 258)]
    """
    starts = np.zeros(len(sequences) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sequences], out=starts[1:])
    flat = np.concatenate([np.asarray(s, dtype=np.int32) for s in sequences]) if sequences else np.zeros(0, np.int32)
    return _classic.learn_merges(
        flat, starts, np.asarray(counts, dtype=np.int64), vocab, num_merges=num_merges,
        min_frequency=min_frequency, tie_break=tie_break, reuse_equal=reuse_equal, strip_prefix=strip_prefix,
        max_vocab=max_vocab, objective=objective, progress=progress,
    )
