"""Train a WordPiece vocabulary as `tokenizers`' ``WordPieceTrainer`` does (BERT's setup), on the classic loop.

``WordPieceTrainer`` is ``BpeTrainer`` with the continuing-subword prefix ``##``; the vocabulary is the BPE one:

1. special tokens take ids ``0..k-1`` in the order given;
2. the alphabet follows: every character of the words (each weighted by its word's count), plus
   ``initial_alphabet``; with ``limit_alphabet``, only that many of the most frequent survive; sorted by code point;
3. then the continuing forms ``##c`` of the characters met after a word's first one;
4. then one token per merge: the pair with the highest count, ties to the smallest ``(left id, right id)``; the new
   token is ``left + right`` without the right's ``##``; a merge spelling an existing token reuses it; training
   stops at ``vocab_size`` tokens, when no pair is left, or below ``min_frequency``.

Where `tokenizers` is not deterministic, hf_bpe is: `tokenizers` numbers the ``##c`` tokens in the iteration
order of a Rust ``HashMap`` (random per process), so its vocab.txt, and even its merges where ids break ties,
change from run to run. hf_bpe numbers them by code point, like the alphabet; ``continuing_order`` takes any other
order (e.g. the one a `tokenizers` run chose, read from its vocab.txt), and then the result is byte-identical.

>>> tokens, merges = train_wordpiece({"hug": 10, "pug": 5, "hugs": 5}, vocab_size=12, special_tokens=["[UNK]"])
>>> tokens
['[UNK]', 'g', 'h', 'p', 's', 'u', '##g', '##s', '##u', '##ug', 'hug', 'pug']
>>> merges
[(8, 6, 9), (2, 9, 10), (3, 9, 11)]
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import classic
from ..corpus import iter_batches
from .recipe_table import BERT_SPECIAL_TOKENS

__all__ = ["BERT_SPECIAL_TOKENS", "bert_word_counts", "train_wordpiece"]


def bert_word_counts(texts: Iterable[str], *, lowercase: bool = False) -> dict[str, int]:
    """Count the words of BERT's pipeline: `tokenizers`' ``BertNormalizer`` then ``BertPreTokenizer``.

    The same rules in Python's C string methods, a batch of texts at a time (the `tokenizers` objects, called
    once per text, cost more than the whole merge loop); ``tests/test_wordpiece.py`` holds the two equal on
    English, Chinese and the 388 languages of the UDHR:

    1. clean: NUL, U+FFFD and control/format/unassigned characters (category ``C*``, but not ``\\t \\n \\r``)
       removed, then every Rust ``White_Space`` character made a space; CJK ideographs padded with spaces;
    2. lowercase only: NFD, non-spacing marks (``Mn``) removed, then lowercased;
    3. split on spaces, every punctuation character (ASCII punctuation or category ``P*``) a word of its own.

    >>> bert_word_counts(["Hello, world!", "hello"])
    {'Hello': 1, ',': 1, 'world': 1, '!': 1, 'hello': 1}
    """
    counts: Counter[str] = Counter()
    clean: dict[int, str] = {}
    split: dict[int, str] = {}
    marks: dict[int, str] = {}
    # Texts joined by "\n" (a space once cleaned: no word spans two texts) in batches of ~1 MB.
    for batch in iter_batches(texts, batch_chars=1 << 20):
        text = "\n".join(batch)
        if not lowercase:  # one pass: cleaning keeps or drops a character, so punctuation stays punctuation
            _extend(clean, text, lambda c: _punctuation(_clean_char(c)))
            counts.update(text.translate(clean).split(" "))
            continue
        _extend(clean, text, _clean_char)
        text = unicodedata.normalize("NFD", text.translate(clean))
        _extend(marks, text, lambda c: "" if unicodedata.category(c) == "Mn" else c)
        text = text.translate(marks).lower()
        _extend(split, text, _punctuation)
        counts.update(text.translate(split).split(" "))
    counts.pop("", None)
    # First seen first, as the other recipes count (the order does not change a WordPiece vocabulary).
    return dict(counts)


# Rust's char::is_whitespace (the White_Space property), which BertNormalizer maps to " ".
_WHITESPACE = frozenset(map(chr, [*range(9, 14), 32, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                                   0x202F, 0x205F, 0x3000]))
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _clean_char(c: str) -> str:
    # Removal comes first: control characters that are also White_Space (\x0b, \x0c, \x85) go, except \t \n \r.
    if c in "\t\n\r":
        return " "
    if c == "\0" or c == "\ufffd" or unicodedata.category(c)[0] == "C":
        return ""
    if c in _WHITESPACE:
        return " "
    code = ord(c)
    return f" {c} " if any(low <= code <= high for low, high in _CJK) else c


def _punctuation(c: str) -> str:
    if len(c) == 1 and (c in _ASCII_PUNCTUATION or unicodedata.category(c)[0] == "P"):
        return f" {c} "
    return c


def _extend(table: dict[int, str], text: str, rule: Any) -> None:
    """Add to a str.translate table the characters of ``text`` it lacks (only those that change)."""
    for c in set(text).difference(map(chr, table)):
        table[ord(c)] = rule(c)


def train_wordpiece(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    prefix: str = "##",
    continuing_order: Sequence[str] | None = None,
    progress: Any = None,
) -> tuple[list[str], list[tuple[int, int, int]]]:
    """Return ``(tokens by id, merges)`` of a WordPiece vocabulary; see the module docstring for the rules."""
    # 1. Special tokens, then the alphabet (most frequent kept when limited; ties by character, deterministic).
    tokens = list(dict.fromkeys(special_tokens))
    weights: dict[str, int] = {}
    for word, count in word_counts.items():
        for char in word:
            weights[char] = weights.get(char, 0) + count
    for char in initial_alphabet:
        weights[char] = 1 << 63
    kept = sorted(weights.items(), key=lambda item: (item[1], item[0]))
    if limit_alphabet is not None and len(kept) > limit_alphabet:
        kept = kept[len(kept) - limit_alphabet:]
    alphabet = {char for char, _ in kept}
    tokens += sorted(alphabet - set(tokens))
    # 2. The continuing forms, numbered by code point or in the order given.
    needed = {prefix + c for word in word_counts for c in word[1:] if c in alphabet}
    order = [t for t in (continuing_order or ()) if t in needed]
    order += sorted(needed - set(order))
    tokens += [t for t in order if t not in set(tokens)]
    ids = {token: i for i, token in reversed(list(enumerate(tokens)))}
    # 3. Words as ids; characters outside the alphabet are dropped, as tokenizers drops them.
    words = []
    for word in word_counts:
        words.append([ids[c if i == 0 else prefix + c] for i, c in enumerate(word) if c in alphabet])
    _vocab, merges = classic.learn_ids(
        words, list(word_counts.values()), [t.encode("utf-8") for t in tokens], num_merges=1 << 62,
        tie_break="smallest-ids", min_frequency=min_frequency, reuse_equal=True,
        strip_prefix=prefix.encode("utf-8"), max_vocab=vocab_size, progress=progress)
    return [t.decode("utf-8") for t in _vocab], merges
