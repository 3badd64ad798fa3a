"""Configure the peers exactly like hf_bpe: one place for compare, the benchmark scripts and the tests.

hf_bpe reproduces `tokenizers`' ``BpeTrainer`` merge for merge only under one configuration: a ``BPE()`` model, the
initial alphabet of the 256 byte-level symbols, and a pre-tokenizer equal to hf_bpe's pattern. GPT-2's pattern is
`tokenizers`' own ``ByteLevel(use_regex=True)``; any other pattern is a ``Split(Regex, "isolated")`` whose regex is
spelled for Oniguruma (:func:`hf_bpe.core.patterns.to_oniguruma`: a possessive ``\\p{N}{1,3}+`` means something else
to Oniguruma), then ``ByteLevel(use_regex=False)``, with a ``Metaspace`` step first for ``add_prefix_space`` -- the
same pipeline ``tokenizer.json`` declares (:mod:`hf_bpe.formats.tokenizer_json`). Copies of this configuration drift
(one once forgot the Oniguruma spelling and reported false differences), so there is exactly one.

SentencePiece BPE is a different algorithm; :func:`sentencepiece_options` makes it see exactly the text hf_bpe sees.

This module imports nothing heavy at import time: a peer's library is imported by the function that needs it, so
a child process measuring a peer's memory loads only that peer.

>>> tokenizers_description(pattern="gpt4")["pre_tokenizer"][:24]
'Sequence([Split(Regex(r"'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.patterns import PATTERNS, to_oniguruma

__all__ = [
    "UNIGRAM_META",
    "sentencepiece_options",
    "sentencepiece_unigram_options",
    "tokenizers_description",
    "tokenizers_pre_tokenizer",
    "tokenizers_tokenizer",
    "tokenizers_trainer",
    "train_tokenizers",
    "train_tokenizers_parity",
    "train_tokenizers_unigram",
    "unigram_tokenizers_description",
]


def _split_regex(pattern: str) -> str | None:
    """Return the Oniguruma spelling of a pattern name or regex, or None for GPT-2's (ByteLevel's own regex)."""
    source = PATTERNS.get(pattern.lower(), pattern)
    return None if source == PATTERNS["gpt2"] else to_oniguruma(source)


def tokenizers_pre_tokenizer(*, pattern: str = "gpt2", add_prefix_space: bool = False) -> Any:
    """Return the `tokenizers` pre-tokenizer that splits exactly as hf_bpe's ``Pretokenizer(pattern, add_prefix_space)``.

    Args:
        pattern: a name in ``hf_bpe.PATTERNS`` or a Python-`regex` pattern.
        add_prefix_space: prepend a space to each text that does not start with one.
    """
    from tokenizers import Regex, pre_tokenizers

    regex = _split_regex(pattern)
    if regex is None:
        return pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=True)
    steps = [pre_tokenizers.Metaspace(replacement=" ", prepend_scheme="always", split=False)] if add_prefix_space else []
    steps += [
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ]
    return pre_tokenizers.Sequence(steps)


def tokenizers_tokenizer(*, pattern: str = "gpt2", add_prefix_space: bool = False) -> Any:
    """Return an untrained `tokenizers` ``Tokenizer``: ``BPE()``, the pre-tokenizer above, a ByteLevel decoder."""
    from tokenizers import Tokenizer, decoders, models

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = tokenizers_pre_tokenizer(pattern=pattern, add_prefix_space=add_prefix_space)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def tokenizers_trainer(
    *,
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    max_token_length: int | None = None,
    show_progress: bool = False,
) -> Any:
    """Return the ``BpeTrainer`` whose merges hf_bpe's ``train`` reproduces with the same options."""
    from tokenizers import pre_tokenizers, trainers

    return trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        max_token_length=max_token_length,
        show_progress=show_progress,
    )


def train_tokenizers(
    texts: Iterable[str] | None = None,
    *,
    files: Sequence[str | os.PathLike[str]] | None = None,
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    max_token_length: int | None = None,
    show_progress: bool = False,
) -> Any:
    """Train `tokenizers`' ``BpeTrainer`` on texts (``train_from_iterator``) or files (``train``, line by line).

    Returns:
        The trained ``tokenizers.Tokenizer``.
    """
    if (texts is None) == (files is None):
        raise TypeError("give exactly one of texts and files")
    tokenizer = tokenizers_tokenizer(pattern=pattern, add_prefix_space=add_prefix_space)
    trainer = tokenizers_trainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
                                 max_token_length=max_token_length, show_progress=show_progress)
    if files is not None:
        tokenizer.train([os.fspath(f) for f in files], trainer)
    else:
        tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def train_tokenizers_parity(
    languages: Sequence[Iterable[str]],
    *,
    dev: Sequence[Iterable[str]] | None = None,
    ratio: Sequence[float] | None = None,
    special_tokens: Sequence[str] = (),
    all_bytes: bool = True,
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    **options: Any,
) -> Any:
    """Train `tokenizers`' ``ParityBpeTrainer`` as :func:`hf_bpe.train_parity` reproduces it; return the ``Tokenizer``.

    ``BPE()``, :func:`tokenizers_pre_tokenizer` (``ByteLevel(add_prefix_space=False)`` for GPT-2's pattern), and
    the ByteLevel post-processor (``trim_offsets=False``) and decoder that hf_bpe's ``tokenizer.json`` declares.

    Args:
        languages: one iterable of texts per language, in order.
        dev: one iterable of dev texts per language, or None.
        ratio: target compression rates in language order, or None.
        special_tokens, all_bytes, pattern, add_prefix_space: as :func:`hf_bpe.train_parity` (``all_bytes``:
            ``initial_alphabet=ByteLevel.alphabet()``).
        **options: ``ParityBpeTrainer``'s (``num_merges``, ``variant``, ``window_size``, ``alpha``, ...).
    """
    from tokenizers import pre_tokenizers, processors, trainers

    tokenizer = tokenizers_tokenizer(pattern=pattern, add_prefix_space=add_prefix_space)
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    if all_bytes:
        options["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.ParityBpeTrainer(special_tokens=list(special_tokens), show_progress=False, **options)
    trainer.train_from_iterator(tokenizer, [iter(texts) for texts in languages],
                                dev_iterators=None if dev is None else [iter(texts) for texts in dev],
                                ratio=None if ratio is None else list(ratio))
    return tokenizer


def tokenizers_description(
    *,
    vocab_size: int = 30000,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
) -> dict[str, str]:
    """Describe the `tokenizers` configuration in words, for reports (``model``, ``pre_tokenizer``, ``trainer``)."""
    regex = _split_regex(pattern)
    if regex is None:
        pre = f"ByteLevel(add_prefix_space={add_prefix_space})"
    else:
        meta = "Metaspace(' ', 'always', split=False), " if add_prefix_space else ""
        pre = f'Sequence([{meta}Split(Regex(r"{regex}"), "isolated"), ByteLevel(add_prefix_space=False, use_regex=False)])'
    return {
        "model": "BPE()",
        "pre_tokenizer": pre,
        "trainer": f"BpeTrainer(vocab_size={vocab_size}, min_frequency={min_frequency}, "
        f"special_tokens={list(special_tokens)!r}, initial_alphabet=ByteLevel.alphabet())",
    }


def sentencepiece_options(
    *, vocab_size: int, special_tokens: Sequence[str] = (), longest: int = 0, threads: int | None = None
) -> dict[str, object]:
    """Return ``SentencePieceTrainer.train`` options for BPE that sees exactly the text hf_bpe sees.

    Byte fallback, identity normalization, no dummy prefix, no whitespace folding, full character coverage, the
    special tokens as user-defined symbols, and ``max_sentence_length`` above the longest document (``longest``
    UTF-8 bytes) so that no document is dropped.

    >>> sentencepiece_options(vocab_size=1000)["normalization_rule_name"]
    'identity'
    """
    return {
        "model_type": "bpe",
        "vocab_size": vocab_size,
        "byte_fallback": True,
        "normalization_rule_name": "identity",
        "input_sentence_size": 0,
        "character_coverage": 1.0,
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
        "user_defined_symbols": list(special_tokens),
        "max_sentence_length": max(4192, longest + 1),
        "num_threads": threads or os.cpu_count() or 1,
        "minloglevel": 2,
    }


# spm_train's meta pieces (ids 0, 1, 2 of a unigram model): tokenizers' UnigramTrainer gets them as special tokens so
# that both count them in vocab_size.
UNIGRAM_META = ("<unk>", "<s>", "</s>")


def sentencepiece_unigram_options(
    *, vocab_size: int, special_tokens: Sequence[str] = (), longest: int = 0, num_threads: int = 16
) -> dict[str, object]:
    """Return ``SentencePieceTrainer.train`` options for unigram: spm_train's defaults, all sentences kept.

    Unigram is compared as users train it (``nmt_nfkc`` normalization, a dummy prefix, coverage 0.9995), so these
    change only what would drop data or clutter the log: every sentence (``input_sentence_size=0``,
    ``max_sentence_length`` above the longest document of ``longest`` UTF-8 bytes), the special tokens as
    user-defined symbols, ``num_threads`` (spm_train's default 16: the float sums, hence the model, depend on it)
    and a quiet log. hf_bpe's ``train_unigram(...)`` takes the very same options.

    >>> sentencepiece_unigram_options(vocab_size=1000)["num_threads"]
    16
    """
    return {
        "model_type": "unigram",
        "vocab_size": vocab_size,
        "input_sentence_size": 0,
        "user_defined_symbols": list(special_tokens),
        "max_sentence_length": max(4192, longest + 1),
        "num_threads": num_threads,
        "minloglevel": 2,
    }


def _unigram_tokenizer() -> Any:
    """Return an untrained `tokenizers` ``Unigram`` tokenizer set up as its SentencePieceUnigramTokenizer is."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Nmt(), normalizers.NFKC(), normalizers.Strip(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    return tokenizer


def train_tokenizers_unigram(
    texts: Iterable[str] | None = None,
    *,
    files: Sequence[str | os.PathLike[str]] | None = None,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    show_progress: bool = False,
) -> Any:
    """Train `tokenizers`' ``UnigramTrainer`` on texts as its ``SentencePieceUnigramTokenizer`` does.

    The normalizer (``Nmt``, ``NFKC``, ends stripped and runs of spaces folded as spm_train's
    ``remove_extra_whitespaces``) and the ``Metaspace`` pre-tokenizer are the nearest
    `tokenizers` spelling of spm_train's defaults; ``<unk>``, ``<s>``, ``</s>`` and the special tokens count in
    ``vocab_size`` as spm_train's meta pieces do. A port, not a reproduction: compared by metrics.
    Give exactly one of ``texts`` (``train_from_iterator``) and ``files`` (``train``, line by line).

    Returns:
        The trained ``tokenizers.Tokenizer``.
    """
    from tokenizers import trainers

    if (texts is None) == (files is None):
        raise TypeError("give exactly one of texts and files")
    tokenizer = _unigram_tokenizer()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=[*UNIGRAM_META, *special_tokens],
                                      unk_token=UNIGRAM_META[0], show_progress=show_progress)
    if files is not None:
        tokenizer.train([os.fspath(f) for f in files], trainer)
    else:
        tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def unigram_tokenizers_description(*, vocab_size: int = 8000, special_tokens: Sequence[str] = ()) -> dict[str, str]:
    """Describe :func:`train_tokenizers_unigram`'s configuration in words, for reports.

    >>> unigram_tokenizers_description()["model"]
    'Unigram()'
    """
    return {
        "model": "Unigram()",
        "normalizer": 'Sequence([Nmt(), NFKC(), Strip(), Replace(Regex(" {2,}"), " ")])',
        "pre_tokenizer": "Metaspace('\u2581', prepend_scheme='always')",
        "trainer": f"UnigramTrainer(vocab_size={vocab_size}, "
        f"special_tokens={[*UNIGRAM_META, *special_tokens]!r}, unk_token='<unk>')",
    }
