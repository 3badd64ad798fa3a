r"""Pure-Python spec of SuperBPE training; ``hf_bpe.training.bpe.superbpe`` (compiled) is held equal to it.

SuperBPE (Liu, Hayase, Hofmann, Oh, Smith, Choi; COLM 2025, arXiv 2503.13423), as the authors' code does it
(PythonNut/superbpe ``scripts/train_tokenizer.sh``, ``scripts/extend_tokenizer.sh``, ``utils.py``, and their fork
alisawuffles/tokenizers-superbpe, ``BpeTrainer::do_train_extend`` in ``tokenizers/src/models/bpe/trainer.rs``):

1. **Stage 1** is plain byte-level BPE with the usual pre-tokenization (:func:`hf_bpe.core._reference.train_merges`,
   merge for merge ``tokenizers``' ``BpeTrainer``) up to ``transition`` ids (specials, the 256 bytes and the merges).
2. **Stage 2** counts the same corpus again with the stage-2 pre-tokenizer :data:`STAGE2_REGEX`,
   ``\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)`` applied as ``tokenizers``' ``Split(behavior="isolated")``:
   its matches and the text between them are the pieces. What stays split: digits (groups of 1-3), runs of two or
   more punctuation/symbol characters (with an optional leading space and trailing newlines or slashes), and the
   extra spaces of a run of spaces (all but the one that attaches to the next word). Everything else -- words,
   single spaces, single punctuation marks, newlines -- joins into one piece, so merges may now cross spaces.
3. Each distinct stage-2 piece starts as stage 1 encodes it: the fork replays the inherited merges, in order, on
   the stage-2 words (``for (left, right) in &merge_order``), and replaying merges in rank order is what encoding
   with them does (:class:`hf_bpe.core._reference.WordEncoder`). From there ``BpeTrainer``'s loop continues (the
   fork copies ``do_train``'s loop; here :func:`hf_bpe.core._reference_continue.continue_merges`, the spec of
   hf_bpe's seeded loop): highest count, ties to the smallest pair, until the vocabulary has ``vocab_size`` ids,
   with two rules of the fork applied to the token a popped pair would build
   (:func:`~hf_bpe.core._reference_continue.superword_allowed`): at most ``max_words`` words (the fork splits the
   byte-level token on ``Ġ`` and counts the non-empty parts; 4 in the paper's tokenizers, the ``mw4`` of their
   names) and no ``forbidden`` substring (the fork refuses ``":Ġ"``, i.e. ``b": "``, the ``colon`` of the names).
   A refused pair is dropped from the queue, not merged, and the loop goes on.
4. The saved tokenizer pre-tokenizes with the stage-2 split alone (the fork's ``tokenizer.json``: ``Split`` then
   ``ByteLevel(use_regex=False)``), and the merges rank stage 1's before stage 2's. hf_bpe writes the split as the
   single regex :data:`STAGE2_PATTERN`, ``R|(?:(?!R)[\s\S])+``: its matches are exactly the pieces of the isolated
   split of ``R`` (a match of ``R`` where one starts, else the longest stretch where none starts), so every loader
   -- ``tokenizers`` (Oniguruma), hf_bpe and tiktoken (``regex``/``fancy-regex`` findall) -- cuts text the same way.

The differences from the fork that hf_bpe chooses are listed in :mod:`hf_bpe.training.bpe.superbpe`.

>>> from hf_bpe.core.patterns import PATTERNS
>>> vocab, _, merges = train_superbpe(["the cat sat on the mat, the cat sat"] * 4, vocab_size=274, transition=264,
...                                pattern=PATTERNS["gpt2"])
>>> [vocab[new] for _, _, new in merges][-3:]
[b'the cat sat', b', the cat sat', b' mat, the cat sat']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ._reference import WordEncoder, train_merges
from ._reference_continue import continue_merges
from .bytelevel import str_to_token

__all__ = ["STAGE2_PATTERN", "STAGE2_REGEX", "bare_split_regex", "isolated_split_pattern", "pieces", "train_superbpe"]

# The authors' stage-2 regex (scripts/extend_tokenizer.sh), used as Split(behavior="isolated").
STAGE2_REGEX = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"


def isolated_split_pattern(regex: str) -> str:
    r"""Return a regex whose findall gives the pieces of ``tokenizers``' ``Split(regex, behavior="isolated")``.

    The isolated split yields each match and each stretch between matches; ``R|(?:(?!R)[\s\S])+`` matches ``R``
    where it starts and otherwise the longest stretch where it does not. ``R`` must not match the empty string.

    >>> pieces(isolated_split_pattern(r"\d+"), "ab12c")
    [b'ab', b'12', b'c']
    """
    return rf"(?:{regex})|(?:(?!(?:{regex}))[\s\S])+"


def bare_split_regex(pattern: str) -> str | None:
    r"""Return ``R`` when ``pattern`` is :func:`isolated_split_pattern` of ``R``, else None.

    A custom regex in hf_bpe already splits as ``Split(behavior="isolated")`` (``Pretokenizer``), so counting with
    ``R`` gives the pieces of the findall pattern about 3x faster (no lookahead at every character).

    >>> bare_split_regex(isolated_split_pattern(r"\d+")), bare_split_regex(r"\d+")
    ('\\d+', None)
    """
    size = (len(pattern) - len(isolated_split_pattern(""))) // 2
    bare = pattern[3 : 3 + size] if size > 0 else ""
    return bare if bare and isolated_split_pattern(bare) == pattern else None


# What a SuperBPE tokenizer pre-tokenizes with: the stage-2 split as one findall pattern.
STAGE2_PATTERN = isolated_split_pattern(STAGE2_REGEX)


def pieces(pattern: str, text: str, add_prefix_space: bool = False) -> list[bytes]:
    """Return the pre-tokens of ``text`` (``regex.findall``), as UTF-8 bytes; ``add_prefix_space`` as ByteLevel's.

    >>> pieces(STAGE2_PATTERN, "Hi there, 2025 -- ok")
    [b'Hi there, ', b'202', b'5', b' --', b' ok']
    """
    import regex

    if add_prefix_space and text and not text.startswith(" "):
        text = " " + text
    return [piece.encode("utf-8") for piece in regex.findall(pattern, text)]


def _count(texts: Sequence[str], pattern: str, add_prefix_space: bool) -> tuple[list[bytes], list[int]]:
    counts = Counter(piece for text in texts for piece in pieces(pattern, text, add_prefix_space))
    return list(counts), list(counts.values())


def train_superbpe(
    texts: Iterable[str],
    *,
    vocab_size: int,
    transition: int,
    pattern: str,
    stage2_pattern: str = STAGE2_PATTERN,
    add_prefix_space: bool = False,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    max_token_length: int | None = None,
    max_words: int | None = 4,
    forbidden: bytes = b": ",
) -> tuple[list[bytes | None], list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """Train SuperBPE on ``texts`` (steps 1-3 of the module docstring); return every id's bytes and all merges.

    Args:
        texts: the documents.
        vocab_size, transition: the final size and stage 1's, in ids.
        pattern, stage2_pattern: the two pre-tokenizers, as regex sources (``regex.findall``).
        add_prefix_space, special_tokens, min_frequency, max_token_length: as ``hf_bpe.train``, for both stages.
        max_words, forbidden: the stage-2 rules (None / b"": none).

    Returns:
        ``(vocab, stage1, stage2)``: ``vocab[i]`` the bytes of id ``i`` (a special's UTF-8 encoding); each stage's
        ``(left, right, new)`` triples in creation order.
    """
    texts = list(texts)
    # Stage 1: plain BPE on the stage-1 pieces.
    words, counts = _count(texts, pattern, add_prefix_space)
    vocab, merges = train_merges(words, counts, vocab_size=transition, min_frequency=min_frequency,
                                 special_tokens=special_tokens, max_token_length=max_token_length)
    # Stage 2: each stage-2 piece as stage 1 encodes it; a special is a key only where a merge can spell it (its
    # byte-level form is its UTF-8 form), as BpeTrainer's word_to_id holds it.
    byte_ids = [vocab.index(bytes([b])) for b in range(256)]
    encoder = WordEncoder(merges, byte_ids, cache_size=0)
    keys: list[bytes | None] = list(vocab)
    for index, text in enumerate(dict.fromkeys(special_tokens)):  # the specials take the first ids
        try:
            spellable = str_to_token(text) == text.encode("utf-8")
        except ValueError:
            spellable = False
        if not spellable:
            keys[index] = None
    words, counts = _count(texts, stage2_pattern, add_prefix_space)
    grown, more = continue_merges([encoder.encode_word(word) for word in words], counts, keys=keys,
                                  vocab_size=vocab_size, min_frequency=min_frequency,
                                  max_token_length=max_token_length, max_words=max_words, forbidden=forbidden)
    return [*vocab, *grown[len(vocab):]], merges, more
