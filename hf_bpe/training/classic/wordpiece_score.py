"""Train WordPiece by its likelihood score, as the Hugging Face course's WordPiece chapter (6.6) does.

The course's algorithm, step by step (``tests/test_wordpiece_score.py`` holds its published outputs):

1. words: ``bert-base-cased``'s pre-tokenizer alone (`tokenizers`' ``BertPreTokenizer``: split on whitespace,
   every punctuation character a word of its own; no normalizer), counted first seen first;
2. the alphabet: each word's first character and ``##c`` for its other characters, sorted as Python sorts str
   (code points: ``"##a"`` before ``","`` before ``"A"``); the special tokens come first
   (``[PAD] [UNK] [CLS] [SEP] [MASK]``);
3. each word split into those symbols; then, until the vocabulary holds ``vocab_size`` tokens: score every adjacent
   pair as ``freq(pair) / (freq(first) * freq(second))`` (frequencies of the current symbols, weighted by word
   counts, a Python float), merge the best, ties to the pair seen first (the course's loop keeps the first of equal
   scores), left to right in every word; the new token is ``first + second`` without the second's ``##``.

The loop is the compiled classic merge loop with ``objective="score"`` (``hf_bpe.core._classic``; its spec is
``hf_bpe.core._reference_classic``). Where the course's code and this one part (each pinned by a test):

- the course's vocabulary list appends a token a second time when two different merges spell it; here it has one
  id (the merges are the same, and each merge counts toward ``vocab_size`` as in the course);
- when no pair is left the course's loop fails (``merge_pair(*"")``); here training stops;
- its scores are Python floats: two different fractions that round to the same double tie, and the pair seen first
  wins even when its exact score is smaller. hf_bpe follows the floats (a correctly rounded division, as CPython's
  ``int / int``), so its merges are the course's. Such a tie of ``p/q`` and ``r/s`` needs ``p * s >= 2**52``
  (their gap, at least ``1/(q s)``, is then below one unit in the last place), so it takes large counts:
  ``tests/test_classic_core.py`` builds one with frequencies near ``10**8``.

Encoding is the course's ``tokenize``: ``BertPreTokenizer`` words, each the longest vocabulary token from the left,
then ``##`` + the longest match of the rest, ``[UNK]`` for the whole word when a rest has none (no length limit).
The course's ``encode_word`` can also match a token ``"#"`` against the ``##`` it prepends and then never stops;
here, as in BERT, a rest is matched only as ``##`` + at least one of its characters.

``vocab.txt`` loads in transformers' ``BertTokenizer`` / ``BertTokenizerFast`` (``do_lower_case=False``), which give
the same ids wherever BERT's normalizer leaves the course's words alone; they part on control characters (removed
by BERT, ``\x0b`` and ``\x85`` even split words here), CJK ideographs (words of their own in BERT), words over 100
characters (``[UNK]`` in BERT) and special tokens' text in the input (one id in BERT).

The PyPI ``real-wordpiece`` (0.1.7) scores pairs the same way but (each pinned by a test): adds the bare form of
letters met only inside words to the alphabet, ordered by frequency; rescores only the pairs a merge creates, not
those whose parts a merge made rarer; breaks equal scores by the larger pair count; and merges right to left inside
a word (``##a ##a ##a`` -> ``##a ##aa``).

>>> tokens, merges = train_wordpiece_score({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, vocab_size=10,
...                                        special_tokens=())
>>> tokens[7:]
['##gs', 'hu', 'hugs']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import InputError
from . import classic
from ..corpus import iter_batches
from .recipe_table import BERT_SPECIAL_TOKENS
from .wordpiece import _WHITESPACE, _extend, _punctuation

__all__ = ["bert_pretokenized_counts", "course_alphabet", "train_wordpiece_score"]

PREFIX = "##"


def _split_char(c: str) -> str:
    return " " if c in _WHITESPACE else _punctuation(c)


def bert_pretokenized_counts(texts: Iterable[str]) -> dict[str, int]:
    """Count the words of `tokenizers`' ``BertPreTokenizer`` (no normalizer), first seen first.

    The same rules with ``str.translate`` over batches of texts (``tests/test_wordpiece_score.py`` holds it equal to
    ``BertPreTokenizer().pre_tokenize_str`` on English, Chinese and the UDHR's 388 languages): Rust's White_Space
    characters separate words, every punctuation character (ASCII punctuation or Unicode category ``P*``) is a word.

    >>> bert_pretokenized_counts(["This is the Hugging Face Course.", "This chapter"])
    {'This': 2, 'is': 1, 'the': 1, 'Hugging': 1, 'Face': 1, 'Course': 1, '.': 1, 'chapter': 1}
    """
    counts: Counter[str] = Counter()
    table: dict[int, str] = {}
    for batch in iter_batches(texts, batch_chars=1 << 20):
        text = "\n".join(batch)  # "\n" is whitespace: no word spans two texts
        _extend(table, text, _split_char)
        counts.update(text.translate(table).split(" "))
    counts.pop("", None)
    return dict(counts)


def course_alphabet(words: Iterable[str], *, prefix: str = PREFIX) -> list[str]:
    """Return the course's initial alphabet: first characters and ``##`` + the others, sorted.

    >>> course_alphabet(["hug", "bun"])
    ['##g', '##n', '##u', 'b', 'h']
    """
    alphabet = set()
    for word in words:
        alphabet.add(word[0])
        alphabet.update(prefix + c for c in word[1:])
    return sorted(alphabet)


def train_wordpiece_score(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    progress: Any = None,
) -> tuple[list[str], list[tuple[int, int, int]]]:
    """Return ``(tokens by id, merges)`` learned by the course's WordPiece loop (module docstring).

    Args:
        word_counts: word -> count, in the order the corpus first shows the words (the tie-break depends on it).
        vocab_size: special tokens + alphabet + merges, as the course counts its ``vocab`` list.
        special_tokens: first, in this order.
        progress: called with the number of merges learned since the last call.

    Raises:
        InputError: ``vocab_size`` smaller than the special tokens and the alphabet together, or no word.
    """
    # 1. Specials, then the sorted alphabet; a special spelled like a symbol keeps the special's id.
    words = [w for w in word_counts if w]
    if not words:
        raise InputError("the corpus is empty: it yielded no word to learn from")
    tokens = list(dict.fromkeys(special_tokens))
    tokens += [t for t in course_alphabet(words) if t not in set(tokens)]
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < len(tokens):
        raise InputError(f"vocab_size={vocab_size!r} is too small for recipe 'wordpiece-score': its special tokens "
                         f"and alphabet already number {len(tokens)}; give vocab_size >= {len(tokens)}")
    ids = {t: i for i, t in enumerate(tokens)}
    # 2. The course's splits, then its loop: one merge per token it appends, until vocab_size.
    import numpy as np

    sequences = [np.array([ids[c if i == 0 else PREFIX + c] for i, c in enumerate(w)], np.int32) for w in words]
    vocab, merges = classic.learn_ids(
        sequences, [word_counts[w] for w in words], [t.encode("utf-8") for t in tokens],
        num_merges=vocab_size - len(tokens), tie_break="first-seen", objective="score", reuse_equal=True,
        strip_prefix=PREFIX.encode("utf-8"), progress=progress)
    return [t.decode("utf-8") for t in vocab], merges
