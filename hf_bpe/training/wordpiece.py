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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import classic

__all__ = ["BERT_SPECIAL_TOKENS", "bert_word_counts", "train_wordpiece"]

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_word_counts(texts: Iterable[str], *, lowercase: bool = False) -> dict[str, int]:
    """Count the words of BERT's pipeline: ``BertNormalizer`` then ``BertPreTokenizer`` (from `tokenizers`).

    >>> bert_word_counts(["Hello, world!", "hello"])
    {'Hello': 1, ',': 1, 'world': 1, '!': 1, 'hello': 1}
    """
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    pretokenizer = pre_tokenizers.BertPreTokenizer()
    counts: dict[str, int] = {}
    for text in texts:
        for word, _span in pretokenizer.pre_tokenize_str(normalizer.normalize_str(text)):
            counts[word] = counts.get(word, 0) + 1
    return counts


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
