"""Train BPE with the classic options spelled out: alphabet, word marks, pre-tokenization and tie-break.

The named recipes (:mod:`hf_bpe.training.classic.recipes`) fix these options to reproduce one published system each;
:func:`hf_bpe.train_classic` without ``recipe`` lets you combine them yourself, on the same compiled merge loop:

- ``alphabet``: ``"chars"`` (the characters seen, as the classic and WordPiece trainers) or ``"bytes"`` (UTF-8
  bytes, spelled as GPT-2's byte characters); ``limit_alphabet`` keeps the most frequent characters, the others
  become ``unk_token`` (required then); ``initial_alphabet`` is always kept;
- ``pretokenize``: ``"whitespace"`` (``str.split()``), ``"none"`` (each text one sequence) or a pattern name /
  regex of :class:`hf_bpe.Pretokenizer`;
- ``end_of_word_suffix`` (subword-nmt's ``</w>``, fused onto a word's last symbol) and
  ``continuing_subword_prefix`` (WordPiece's ``##`` on every symbol but a word's first);
- ``tie_break``: ``"first-seen"``, ``"largest-pair"`` or ``"smallest-ids"`` (:mod:`hf_bpe.core._reference_classic`).

Ids: special tokens, then the alphabet by code point, then the marked forms by code point, then one per new token.

>>> model = scheme_model(["low lower lowest"], num_merges=2, end_of_word_suffix="</w>", show_progress=False)
>>> model.merge_pairs
[('l', 'o'), ('lo', 'w')]
>>> [model.tokens[i] for i in model.encode("low lower")]
['lo', 'w</w>', 'low', 'e', 'r</w>']
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...core.bytelevel import token_to_str
from ...core.pretokenize import Pretokenizer
from ...core._reference_classic import TIE_BREAKS
from ...errors import InputError
from ...model.classic import ClassicModel, scheme_symbols
from . import classic

__all__ = ["scheme_model", "train_scheme"]


def _check(alphabet: str, pretokenize: str, tie_break: str, unk_token: str | None, limit_alphabet: int | None) -> None:
    if alphabet not in ("chars", "bytes"):
        raise InputError(f"alphabet must be 'chars' or 'bytes', got {alphabet!r}")
    if tie_break not in TIE_BREAKS:
        raise InputError(f"tie_break must be one of {', '.join(map(repr, TIE_BREAKS))}, got {tie_break!r}")
    if pretokenize not in ("whitespace", "none"):
        Pretokenizer(pretokenize)  # raises for a bad pattern
    if limit_alphabet is not None and (not isinstance(limit_alphabet, int) or limit_alphabet < 0):
        raise InputError(f"limit_alphabet must be None or an int >= 0, got {limit_alphabet!r}")
    if alphabet == "bytes" and (limit_alphabet is not None or unk_token is not None):
        raise InputError("a bytes alphabet covers every text: limit_alphabet and unk_token belong to alphabet='chars'")


def _pieces(texts: Iterable[str], pretokenize: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    splitter = None if pretokenize in ("whitespace", "none") else Pretokenizer(pretokenize)
    for text in texts:
        pieces = text.split() if pretokenize == "whitespace" else [text] if pretokenize == "none" else splitter.split(text)
        for piece in pieces:
            if piece:
                counts[piece] = counts.get(piece, 0) + 1
    return counts


def scheme_model(
    corpus: Any,
    *,
    vocab_size: int | None = None,
    num_merges: int | None = None,
    alphabet: str = "chars",
    pretokenize: str = "whitespace",
    end_of_word_suffix: str = "",
    continuing_subword_prefix: str = "",
    tie_break: str = "first-seen",
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    unk_token: str | None = None,
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    text_column: str = "text",
    show_progress: bool = True,
) -> ClassicModel:
    """Train on a corpus with explicit classic options (module docstring); return a ``"custom"`` ClassicModel.

    Raises:
        InputError: bad options, no size, or characters left out of a limited alphabet without an ``unk_token``.
    """
    # 1. Options first, so that mistakes fail before the corpus is read.
    _check(alphabet, pretokenize, tie_break, unk_token, limit_alphabet)
    if (vocab_size is None) == (num_merges is None):
        raise InputError(f"give exactly one of vocab_size and num_merges, got {vocab_size!r} and {num_merges!r}")
    specials = list(dict.fromkeys([*special_tokens, *([unk_token] if unk_token else [])]))
    options = {"alphabet": alphabet, "pretokenize": pretokenize, "end_of_word_suffix": end_of_word_suffix,
               "continuing_subword_prefix": continuing_subword_prefix, "unk_token": unk_token}
    # 2. Pieces, then symbols; characters outside a limited alphabet become unk_token.
    pieces = _pieces(classic.iter_corpus_texts(corpus, text_column=text_column), pretokenize)
    if not pieces:
        raise InputError("the corpus is empty: it yielded no text to learn from")
    weights: dict[str, int] = {}
    for piece, count in pieces.items():
        for unit in (piece if alphabet == "chars" else map(token_to_str, (bytes([b]) for b in piece.encode()))):
            weights[unit] = weights.get(unit, 0) + count
    for unit in initial_alphabet:
        weights[unit] = 1 << 63
    kept = sorted(weights, key=lambda u: (weights[u], u))[-limit_alphabet:] if limit_alphabet else list(weights)
    if limit_alphabet == 0:
        kept = []
    if len(kept) < len(weights) and unk_token is None:
        raise InputError(f"limit_alphabet={limit_alphabet} leaves out {len(weights) - len(kept)} characters (e.g. "
                         f"{sorted(set(weights) - set(kept))[:5]!r}); give unk_token='[UNK]' to stand for them")
    alphabet_set = set(kept)
    words = [scheme_symbols(piece, alphabet_set, options) for piece in pieces]
    # 3. Ids: specials, alphabet, marked forms, each by code point; then the merge loop.
    tokens = specials + sorted(set(kept) - set(specials))
    marked = {s for word in words for s in word} - set(tokens)
    tokens += sorted(marked)
    ids = {t: i for i, t in enumerate(tokens)}
    sequences = [[ids[s] for s in word] for word in words]
    with classic.progress_bar(show_progress, vocab_size or num_merges) as bar:
        vocab, merges = classic.learn_ids(
            [np.asarray(s, np.int32) for s in sequences], list(pieces.values()), [t.encode() for t in tokens],
            num_merges=(1 << 62) if num_merges is None else num_merges, tie_break=tie_break,
            min_frequency=min_frequency, reuse_equal=True, strip_prefix=continuing_subword_prefix.encode(),
            max_vocab=vocab_size, progress=bar.update)
    return ClassicModel("custom", [t.decode() for t in vocab], merges,
                        special_tokens={s: ids[s] for s in specials}, provenance={"options": options})


def train_scheme(corpus: Any, **options: Any) -> ClassicModel:
    """Train a ``"custom"`` ClassicModel; deprecated: call :func:`hf_bpe.train_classic` with the same arguments.

    Warns:
        DeprecationWarning: always; ``train_scheme`` goes in a future release.
    """
    warnings.warn("hf_bpe.train_scheme(corpus, ...) is deprecated: call hf_bpe.train_classic(corpus, ...) with the "
                  "same keyword arguments", DeprecationWarning, stacklevel=2)
    return scheme_model(corpus, **options)
