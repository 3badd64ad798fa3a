"""Extend a byte-level BPE model: new merges learned on a new corpus, every existing id, token and merge kept.

The contract (tests/test_extend.py holds each point):

1. Every token of the base keeps its id and bytes; the base's merges stay, in order, as the prefix of the merge
   list; special tokens keep their ids and roles, and the pattern, ``add_prefix_space`` and ``ignore_merges`` stay.
2. New ids start after the largest id in use (``base.vocab_size``: after Qwen2's specials, after Llama 3's reserved
   specials); a new merge whose bytes already are a token reuses that id and is recorded, as ``BpeTrainer`` does.
3. The corpus is counted with the base's own pre-tokenizer (:class:`~hf_bpe.training.counts.WordCounts`); each
   distinct pre-token is segmented exactly as the base encodes it (:meth:`BPEModel.encode_word`: with
   ``ignore_merges``, a pre-token that is a token stays one token); from those sequences the merge loop of
   ``tokenizers``' ``BpeTrainer`` continues (``core._core.continue_merges``, spec
   ``core._reference_continue.continue_merges``): highest count, ties to the smallest ``(left id, right id)``,
   ``min_frequency`` inclusive, ``max_token_length`` as ``BpeTrainer`` applies it to pairs a merge forms.
4. Consequences: extending by 0 tokens saves the base's files byte for byte (the manifest apart, which records the
   extension); a text encodes to the same ids as before if and only if none of its pre-tokens, as the base encodes
   them, holds a pair a new merge names (nor, with ``ignore_merges``, is a new token): new merges rank after every
   base merge, and one that applies leaves fewer tokens;
   for a base that hf_bpe trained on a corpus C at size V, extending it on C to V' gives the files of training on
   C at V' (the manifest apart). Why the last holds: in training from bytes, a pair first appears in the step that
   creates the later of its two tokens, so its one heap entry lists every word holding it and every occurrence is
   merged, in rank order: the trainer's state after V is each word as the base encodes it. The seeded loop counts
   the pairs of that state as the loop would have: byte pairs always (``count_pairs`` ignores
   ``max_token_length``), a longer pair only when ``len(left) + len(right) < max_token_length``; counting every
   adjacent pair would break the equality whenever a limit is set. It would break only where ``BpeTrainer``
   itself repeats a merge (point 5 of :mod:`hf_bpe.core._reference`: a token built at two steps), which no
   byte-level training has been seen to reach. Extending a base hf_bpe did not train (GPT-2, Llama 3) can reach
   it: a new merge that rebuilds an existing token (Llama 3's words segmented ``[a, bc]`` where ``abc`` is a token)
   reuses its id, and the pairs it forms get a second heap entry, so ``BpeTrainer``'s rule records the same merge
   again; the merges file lists each pair once, at its last rank, as ``tokenizers`` writes it.

>>> base = train(["low lower lowest"] * 3, vocab_size=258, show_progress=False)
>>> model = extend_model(base, ["low lower lowest"] * 3, new_tokens=2, show_progress=False)
>>> model.merges[:2] == base.merges, [a + b for a, b in model.merges[2:]]
(True, [b' low', b' lowe'])
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...core import _core
from ...core._reference import saved_merges
from ...core.bytelevel import str_to_token
from ...errors import InputError
from ...model.bpe import BPEModel
from ...core.pretokenize import Pretokenizer
from .trainer import check_options, train
from ..counts import WordCounts, choose_workers, corpus_chars_hint
from ..held_out import HeldOutSplit
from ..progress import progress_bar

__all__ = ["extend_model", "extend_from_counts", "resolve_size", "seed_keys"]


def resolve_size(base: BPEModel, vocab_size: object, new_tokens: object) -> int:
    """Return the final vocabulary size from exactly one of ``vocab_size`` and ``new_tokens``.

    >>> resolve_size(BPEModel.bytes_only(), None, 10)
    266
    """
    if (vocab_size is None) == (new_tokens is None):
        raise TypeError(f"pass exactly one of vocab_size (the final size) and new_tokens (how many to add), got "
                        f"vocab_size={vocab_size!r}, new_tokens={new_tokens!r}")
    value = vocab_size if new_tokens is None else new_tokens
    name = "vocab_size" if new_tokens is None else "new_tokens"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if new_tokens is not None:
        if value < 0:
            raise ValueError(f"new_tokens must be >= 0, got {value!r}")
        return base.vocab_size + value
    if value < base.vocab_size:
        raise ValueError(f"vocab_size={value!r} is smaller than the base's {base.vocab_size} ids (its largest id is "
                         f"{base.vocab_size - 1}); pass at least {base.vocab_size}, or new_tokens=N")
    return value


def seed_keys(base: BPEModel) -> list[bytes | None]:
    """Return the bytes a merge can build for each id of the base (None: a hole, or a special no merge spells).

    A regular token is its bytes. A special token that is not also a regular token has the key ``BpeTrainer``
    gives it, its byte-level decoding, when that equals its UTF-8 spelling (``<|im_start|>``): a merge building
    those bytes reuses its id, as in training from scratch; otherwise None.

    >>> keys = seed_keys(BPEModel.bytes_only(special_tokens={"<|end|>": 256}))
    >>> keys[97], keys[256]
    (b'a', b'<|end|>')
    """
    keys: list[bytes | None] = [None] * base.vocab_size
    for text, index in base.special_tokens.items():
        try:
            key = str_to_token(text)
        except ValueError:
            continue
        if key == text.encode("utf-8"):
            keys[index] = key
    for token, index in base.vocab.items():
        keys[index] = token
    return keys


def _check_base(base: object) -> BPEModel:
    if not isinstance(base, BPEModel):
        raise TypeError(f"base must be a BPEModel (or, through hf_bpe.extend, a tokenizer path), got "
                        f"{type(base).__name__} {base!r:.80}")
    if base.missing_bytes:
        raise ValueError(f"the base has no token for {len(base.missing_bytes)} byte value(s) "
                         f"(first: {base.missing_bytes[:8]!r}); extending needs all 256 byte tokens")
    return base


def extend_model(
    base: BPEModel,
    corpus: Any,
    *,
    vocab_size: int | None = None,
    new_tokens: int | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    show_progress: bool = True,
    text_column: str = "text",
    workers: int | None = None,
    base_record: Mapping[str, object] | None = None,
) -> BPEModel:
    """Extend a byte-level BPE model with merges learned on ``corpus`` (the contract: module docstring).

    Args:
        base: the model to extend.
        corpus, vocab_size, new_tokens, min_frequency, max_token_length, show_progress, text_column, workers: as
            :func:`hf_bpe.extend` (exactly one of ``vocab_size`` and ``new_tokens``). A :class:`HeldOutSplit` corpus
            trains on its training documents and records its fraction and seed in the manifest.
        base_record: what the manifest records of the base (``hf_bpe.extend`` gives its path and sha256s).

    Returns:
        The extended model; its manifest records the base and the corpus fingerprint.

    Raises:
        TypeError, ValueError: for bad options, a base without all 256 byte tokens; InputError for an empty corpus.
    """
    base = _check_base(base)
    size = resolve_size(base, vocab_size, new_tokens)
    _check_options(min_frequency, max_token_length, workers)
    pretokenizer = Pretokenizer(base.pattern, add_prefix_space=base.add_prefix_space)
    if workers is None:
        workers = choose_workers(pretokenizer, corpus_chars_hint(corpus))
    counts = WordCounts.from_corpus(corpus, pattern=base.pattern, add_prefix_space=base.add_prefix_space,
                                    text_column=text_column, workers=workers, corpus_order="sequence",
                                    show_progress=show_progress)
    recorded: dict[str, Any] = {"text_column": text_column}
    if isinstance(corpus, HeldOutSplit):  # verify cuts the corpus it is given the same way before re-extending
        recorded["held_out"] = {"fraction": corpus.fraction, "seed": corpus.seed}
    return _extend_counts(base, counts, size, min_frequency, max_token_length, show_progress, recorded, base_record)


def extend_from_counts(
    base: BPEModel,
    counts: WordCounts,
    *,
    vocab_size: int | None = None,
    new_tokens: int | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    show_progress: bool = True,
    base_record: Mapping[str, object] | None = None,
) -> BPEModel:
    """Extend a model from pre-token counts (counted with the base's pattern and ``add_prefix_space``).

    Args:
        base, vocab_size, new_tokens, min_frequency, max_token_length, show_progress, base_record: as
            :func:`extend_model`.
        counts: the pre-token counts.

    Raises:
        ValueError: when the counts were made with another pre-tokenizer than the base's.

    >>> counts = WordCounts.from_corpus(["aaab"] * 2, show_progress=False)
    >>> [a + b for a, b in extend_from_counts(BPEModel.bytes_only(), counts, new_tokens=1, show_progress=False).merges]
    [b'aa']
    """
    base = _check_base(base)
    if not isinstance(counts, WordCounts):
        raise TypeError(f"counts must be a WordCounts (WordCounts.from_corpus or WordCounts.load), got "
                        f"{type(counts).__name__}")
    if (counts.pattern, counts.add_prefix_space) != (base.pattern, base.add_prefix_space):
        raise ValueError(f"the counts were made with pattern={counts.pattern!r:.60}, add_prefix_space="
                         f"{counts.add_prefix_space}, the base pre-tokenizes with pattern={base.pattern!r:.60}, "
                         f"add_prefix_space={base.add_prefix_space}; count the corpus with the base's options")
    size = resolve_size(base, vocab_size, new_tokens)
    _check_options(min_frequency, max_token_length, None)
    return _extend_counts(base, counts, size, min_frequency, max_token_length, show_progress, {}, base_record)


def _check_options(min_frequency: object, max_token_length: object, workers: object) -> None:
    check_options(2**62, min_frequency, [], max_token_length, workers)


def _extend_counts(
    base: BPEModel,
    counts: WordCounts,
    size: int,
    min_frequency: int,
    max_token_length: int | None,
    show_progress: bool,
    recorded: dict[str, Any],
    base_record: Mapping[str, object] | None,
    *,
    rules: Mapping[str, Any] = MappingProxyType({}),
    options: Mapping[str, Any] | None = None,
) -> BPEModel:
    # rules: the merge loop's SuperBPE rules (max_words, forbidden); options: what the manifest records instead of
    # an extension's options (training/bpe/superbpe.py: stage 2 is this loop, its manifest replays both stages).
    if counts.documents == 0 or not counts:
        raise InputError("the corpus is empty: it yielded no text to learn from")
    # 1-2. Each distinct pre-token as the base encodes it (a word of one token has no pair, so it is left out), then
    # the merge loop seeded with the base's ids; both in the compiled core (continue_merges_from_words).
    keys = seed_keys(base)
    first = len(keys)
    with progress_bar(show_progress, desc="merges", total=size - first) as bar:
        vocab, merges = _core.continue_merges_from_words(
            base.word_encoder, list(counts.keys()), list(counts.values()), keys=keys, vocab_size=size,
            min_frequency=min_frequency, max_token_length=max_token_length, progress=bar.update, **rules)

    # 3. The extended model: new tokens after the base's ids, new merges after the base's (each pair once, at its
    # last rank, as tokenizers saves them). A merge that rebuilt a special's bytes makes them a regular token too.
    tokens = dict(base.vocab)
    for index in range(first, len(vocab)):
        tokens[vocab[index]] = index  # type: ignore[index]
    for _, _, index in merges:
        if index < first and vocab[index] not in tokens:
            tokens[vocab[index]] = index  # type: ignore[index]
    new_merges = saved_merges(vocab, merges)  # type: ignore[arg-type]  # merges only name ids with bytes
    provenance = {
        "options": dict(options) if options is not None else {
            "base": dict(base_record) if base_record is not None else {"path": None, "files": None},
            "base_digest": base.digest(),
            "vocab_size": size,
            "min_frequency": min_frequency,
            "max_token_length": max_token_length,
            "pattern": base.pattern,
            "add_prefix_space": base.add_prefix_space,
            **recorded,
        },
        "corpus": None if counts.fingerprint is None else dict(counts.fingerprint),
    }
    model = BPEModel(tokens, [*base.merges, *new_merges], special_tokens=base.special_tokens, pattern=base.pattern,
                     add_prefix_space=base.add_prefix_space, ignore_merges=base.ignore_merges, roles=base.roles,
                     provenance=provenance)
    if len(vocab) < size:
        warnings.warn(
            f"the corpus ran out of mergeable pairs (min_frequency={min_frequency}): the vocabulary has {len(vocab)} "
            f"ids, not the {size} asked for; use a larger corpus or a smaller size",
            stacklevel=3,
        )
    return model
