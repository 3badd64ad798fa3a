"""Train a byte-level BPE model from a corpus, merge for merge as `tokenizers`' ``BpeTrainer`` does.

The parity contract with ``tokenizers.trainers.BpeTrainer`` (ByteLevel pre-tokenizer,
``initial_alphabet=ByteLevel.alphabet()``):

1. special tokens take ids ``0..k-1`` in the order given (repeats skipped);
2. the 256 byte tokens follow, ordered by the code point of their GPT-2 byte-level symbol (``bytelevel.BYTE_ORDER``);
3. then one id per new token in merge order; the next merge is the pair with the highest count, ties going to
   the smallest ``(left_id, right_id)``; a merge whose token already exists reuses its id;
4. training stops when the vocabulary holds ``vocab_size`` tokens, when no pair is left, or when the best count
   is below ``min_frequency`` (a pair with exactly ``min_frequency`` occurrences is merged);
5. special-token text inside the corpus is ordinary text for training, as in `tokenizers`.

Where `tokenizers` differs, hf_bpe does the right thing: pair counts are 64-bit (`tokenizers` wraps at 2**31).

>>> model = train(["low lower lowest"] * 3, vocab_size=260, show_progress=False)
>>> [a + b for a, b in model.merges]
[b'lo', b'low', b' low', b' lowe']
"""

from __future__ import annotations

import warnings
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ...core import _core
from ...core._reference import saved_merges
from ...core.pretokenize import Pretokenizer
from ...errors import InputError
from ...model.bpe import BPEModel
from ..counts import WordCounts, choose_workers, corpus_chars_hint
from ..progress import progress_bar

if TYPE_CHECKING:
    from ...model.classic import ClassicModel  # annotations only: the recipes' trainers import it

__all__ = ["DEFAULT_VOCAB_SIZE", "check_options", "check_recipe_options", "check_special_tokens", "train",
           "train_from_counts"]

# tokenizers' BpeTrainer default.
DEFAULT_VOCAB_SIZE = 30000


def train(
    corpus: Any,
    *,
    vocab_size: int | None = None,
    min_frequency: int | None = None,
    special_tokens: Sequence[str] | None = None,
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    max_token_length: int | None = None,
    text_column: str = "text",
    workers: int | None = None,
    corpus_order: Literal["sequence", "multiset"] = "sequence",
    show_progress: bool = True,
    recipe: str | None = None,
    num_merges: int | None = None,
    lowercase: bool = False,
    bos_token: str | None = None,
    eos_token: str | None = None,
    unk_token: str | None = None,
    pad_token: str | None = None,
) -> BPEModel:  # the deprecated recipe= spelling returns a ClassicModel
    """Train a byte-level BPE model on a corpus, merge for merge as `tokenizers`' ``BpeTrainer``.

    Args:
        corpus: an iterable of str, a ``datasets`` Dataset or IterableDataset, or path(s) (``pathlib.Path``) of
            UTF-8 text files read line by line.
        vocab_size: the final vocabulary size, counting special tokens, the 256 bytes and the merges.
        min_frequency: the smallest pair count that may still be merged.
        special_tokens: special tokens, given the first ids.
        pattern: pre-tokenizer pattern name (``"gpt2"``, ``"gpt4"``, ``"o200k"``, ...) or a regex.
        add_prefix_space: prepend a space to each text that does not start with one.
        max_token_length: longest token, in bytes, that merges may build (`tokenizers`' meaning).
        text_column: the text column of a dataset.
        workers: counting threads for the named patterns (the compiled scanner, without the GIL), processes for
            a custom regex (default: every usable CPU; for a custom regex only over 8 MB of files). The output
            files never depend on it (it is not recorded in the manifest).
        corpus_order: how the manifest fingerprints the corpus: ``"sequence"`` (the exact order of texts) or
            ``"multiset"`` (order-free, for datasets whose rows come in any order). The model never depends on
            the order; only the fingerprint does.
        show_progress: progress bars on stderr.
        recipe, num_merges, lowercase: deprecated (a ``DeprecationWarning``): the recipes are trained by
            :func:`hf_bpe.train_classic`, which takes the same arguments and always returns a ``ClassicModel``.
        bos_token, eos_token, unk_token, pad_token: give a special token a role for transformers (written to
            ``tokenizer_config.json``, so ``tok.eos_token`` is set); a token not in ``special_tokens`` is added
            after them.

    Returns:
        The trained :class:`BPEModel` (only the deprecated ``recipe=`` spelling returns a ``ClassicModel``).

    Raises:
        TypeError, ValueError: for bad options or a bad corpus; see :func:`hf_bpe.training.corpus.iter_texts`.
    """
    given_roles = {"bos_token": bos_token, "eos_token": eos_token, "unk_token": unk_token, "pad_token": pad_token}
    if recipe is not None or num_merges is not None or lowercase:
        return _deprecated_recipe(corpus, recipe, given_roles, {
            "pattern": pattern, "add_prefix_space": add_prefix_space, "max_token_length": max_token_length,
            "workers": workers, "corpus_order": corpus_order}, vocab_size=vocab_size, num_merges=num_merges,
            min_frequency=min_frequency, special_tokens=special_tokens, lowercase=lowercase, text_column=text_column,
            show_progress=show_progress)
    vocab_size = DEFAULT_VOCAB_SIZE if vocab_size is None else vocab_size
    min_frequency = 0 if min_frequency is None else min_frequency
    special_tokens = () if special_tokens is None else special_tokens
    # 1. Check every option before reading the corpus, so mistakes fail at once.
    special_tokens, roles = with_roles(special_tokens, given_roles)
    specials = check_options(vocab_size, min_frequency, special_tokens, max_token_length, workers)
    if corpus_order not in ("sequence", "multiset"):
        raise ValueError(f"corpus_order must be 'sequence' or 'multiset', got {corpus_order!r}")
    if workers is None:  # resolved here: the manifest records the number used
        workers = choose_workers(Pretokenizer(pattern, add_prefix_space=add_prefix_space), corpus_chars_hint(corpus))

    # 2. Count pre-tokens (streaming; memory ~ distinct pre-tokens); the fingerprint follows corpus_order.
    word_counts = WordCounts.from_corpus(corpus, pattern=pattern, add_prefix_space=add_prefix_space,
                                         text_column=text_column, workers=workers, corpus_order=corpus_order,
                                         show_progress=show_progress)

    # 3. The merge loop; what BPEModel.save records in the manifest, so that `hf-bpe verify` can retrain.
    return _train_counts(word_counts, specials, vocab_size=vocab_size, min_frequency=min_frequency,
                         max_token_length=max_token_length, show_progress=show_progress,
                         recorded={"text_column": text_column, **roles}, consume=True)


def train_from_counts(
    counts: WordCounts,
    *,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    max_token_length: int | None = None,
    show_progress: bool = True,
    bos_token: str | None = None,
    eos_token: str | None = None,
    unk_token: str | None = None,
    pad_token: str | None = None,
) -> BPEModel:
    """Train a byte-level BPE model from pre-token counts (e.g. the sum of shards counted apart).

    The model's files are byte-identical to those of :func:`train` on the texts that were counted, with the same
    options: the pattern and ``add_prefix_space`` come from the counts. The manifest records the counts' corpus
    fingerprint (for a sum of shards, the order-free ``"multiset"`` fingerprint of their union; none when a shard
    kept an ordered one).

    Args:
        counts: the pre-token counts (:class:`~hf_bpe.training.counts.WordCounts`).
        vocab_size, min_frequency, special_tokens, max_token_length, show_progress: as :func:`train`.
        bos_token, eos_token, unk_token, pad_token: as :func:`train`.

    Raises:
        TypeError, ValueError: for bad options; InputError when the counts are empty.

    >>> counts = WordCounts.from_corpus(["low lower lowest"] * 3, show_progress=False)
    >>> [a + b for a, b in train_from_counts(counts, vocab_size=260, show_progress=False).merges]
    [b'lo', b'low', b' low', b' lowe']
    """
    if not isinstance(counts, WordCounts):
        raise TypeError(f"counts must be a WordCounts (WordCounts.from_corpus or WordCounts.load), got "
                        f"{type(counts).__name__}")
    special_tokens, roles = with_roles(special_tokens, {"bos_token": bos_token, "eos_token": eos_token,
                                                        "unk_token": unk_token, "pad_token": pad_token})
    specials = check_options(vocab_size, min_frequency, special_tokens, max_token_length, None)
    return _train_counts(counts, specials, vocab_size=vocab_size, min_frequency=min_frequency,
                         max_token_length=max_token_length, show_progress=show_progress, recorded=roles)


def _train_counts(
    counts: WordCounts,
    specials: list[str],
    *,
    vocab_size: int,
    min_frequency: int,
    max_token_length: int | None,
    show_progress: bool,
    recorded: dict[str, Any],
    consume: bool = False,
) -> BPEModel:
    """Run the merge loop on ``counts`` and build the model; ``consume``: ``counts`` is train()'s own, emptied once
    its words are copied (its dict is not held under the merge loop and the model built after it)."""
    if counts.documents == 0 or not counts:
        raise InputError(
            "the corpus is empty: it yielded no text to learn from"
            + (f" ({counts.documents} documents, all empty)" if counts.documents else "")
        )
    # 1. The merge loop, in the compiled core: on train()'s own counts as the compiled tally left them (flat
    # buffers, no Python object per word), else on lists of the words and counts (keys() and values() iterate in
    # the same order; a lookup per word cost 0.3 s on a million words). Either is emptied once copied, not held
    # under the merge loop.
    flat = counts._take_flat() if consume else None
    if flat is None:
        data = (list(counts.keys()), list(counts.values()))
        if consume:
            counts._table = {}
    with progress_bar(show_progress, desc="merges", total=max(0, vocab_size - len(specials) - 256)) as bar:
        options = {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                   "max_token_length": max_token_length, "progress": bar.update, "consume": True}
        if flat is not None:
            vocab, merges = _core.train_merges_flat(flat, **options)
        else:
            vocab, triples = _core.train_merges(*data, **options)
            del data
            merges = array("i", [i for triple in triples for i in triple])
            del triples

    # 2. Build the model with what BPEModel.save records in the manifest (so `hf-bpe verify` can retrain and compare);
    # say so when the corpus ran out of pairs before vocab_size.
    provenance = {
        "options": {
            "vocab_size": vocab_size,
            "min_frequency": min_frequency,
            "special_tokens": list(specials),
            "pattern": counts.pattern,
            "add_prefix_space": counts.add_prefix_space,
            "max_token_length": max_token_length,
            **recorded,
        },
        "corpus": None if counts.fingerprint is None else dict(counts.fingerprint),
    }
    roles = {role: recorded[role] for role in ROLE_OPTIONS if role in recorded}
    model = _build_model(vocab, merges, specials, counts.pattern, counts.add_prefix_space, provenance, roles)
    if len(vocab) < vocab_size:
        warnings.warn(
            f"the corpus ran out of mergeable pairs (min_frequency={min_frequency}): the vocabulary has "
            f"{len(vocab)} tokens, not the {vocab_size} asked for; use a larger corpus or a smaller vocab_size",
            stacklevel=3,
        )
    return model


def check_recipe_options(recipe: str | None, roles: dict[str, str | None], byte_level: dict[str, Any]) -> None:
    """Refuse, beside a recipe, the byte-level options it would silently ignore (``train``'s and the CLI's check).

    >>> check_recipe_options("subword-nmt", {}, {"pattern": "gpt4"})
    Traceback (most recent call last):
    hf_bpe.errors.InputError: recipe 'subword-nmt' fixes its own pre-tokenization and training; drop pattern='gpt4'
    """
    if any(token is not None for token in roles.values()):
        raise InputError("bos_token/eos_token/unk_token/pad_token apply to byte-level training; a recipe keeps "
                         "its own special tokens (special_tokens=...)")
    if recipe is None:
        raise InputError("num_merges and lowercase belong to the named recipes; pass recipe=NAME (CLI --recipe)")
    defaults = {"pattern": "gpt2", "add_prefix_space": False, "max_token_length": None, "workers": None,
                "corpus_order": "sequence"}
    contradicting = [f"{k}={v!r}" for k, v in byte_level.items() if v != defaults[k]]
    if contradicting:
        raise InputError(f"recipe {recipe!r} fixes its own pre-tokenization and training; drop "
                         f"{', '.join(contradicting)}")


def _deprecated_recipe(corpus: Any, recipe: str | None, roles: dict[str, str | None], byte_level: dict[str, Any],
                       **classic: Any) -> ClassicModel:
    """``train(corpus, recipe=...)``, the spelling before ``train_classic``: the same model, with a warning."""
    from ..classic.train import train_classic

    check_recipe_options(recipe, roles, byte_level)
    warnings.warn(f"hf_bpe.train(corpus, recipe={recipe!r}, ...) is deprecated: call "
                  f"hf_bpe.train_classic(corpus, recipe={recipe!r}, ...), which always returns a ClassicModel "
                  "(train will always return a BPEModel)", DeprecationWarning, stacklevel=3)
    return train_classic(corpus, recipe=recipe, **classic)


def _build_model(
    vocab: list[bytes],
    merges: array,  # the trainer's (left, right, new) triples end to end; emptied
    specials: Sequence[str],
    pattern: str,
    add_prefix_space: bool,
    provenance: dict[str, Any],
    roles: dict[str, str],
) -> BPEModel:
    special_ids = {token: i for i, token in enumerate(specials)}
    # A special token that spells a byte (or a merge result) shares its id with that regular token, as in
    # tokenizers: `--special-token '!'` gives '!' id 0 for both, and the merges still use it.
    regular = dict(zip(vocab, range(len(vocab))))  # a token made twice keeps its last id, as in tokenizers
    if specials:
        shared = {i for i, token in enumerate(vocab[: len(specials)]) if len(token) == 1}
        shared.update(i for i in merges if i < len(specials))
        regular = {token: i for i, token in enumerate(vocab) if i >= len(specials) or i in shared}
    # The merges as tokenizers saves them (a pair merged twice keeps its last rank), so the files are byte-identical.
    saved = _fresh_merges(vocab, merges)
    if saved is None:
        saved = saved_merges(vocab, list(zip(merges[0::3], merges[1::3], merges[2::3])))
    # The trainer's triples (the caller's array, used nowhere else) are emptied before BPEModel builds its own.
    del merges[:]
    return BPEModel(regular, saved, special_tokens=special_ids, pattern=pattern, add_prefix_space=add_prefix_space,
                    provenance=provenance, roles=roles, _trained=True)


def _fresh_merges(vocab: list[bytes], merges: array) -> list[tuple[bytes, bytes]] | None:
    """Spell the trainer's merges in rank order when no pair can repeat; None when one might (then saved_merges).

    The trainer gives a token it makes twice the id it made first (tokenizers' word_to_id), and a pair merged twice
    makes the same token twice. So when every merge's new id is fresh (the ids after the initial vocabulary, in
    order), no pair repeats and saved_merges' pair list and rank map (~2 MB at 20,000 merges) are not needed.

    ``merges``: the trainer's (left, right, new) triples end to end.

    >>> _fresh_merges([b"a", b"b", b"ab", b"abb"], array("i", [0, 1, 2, 2, 1, 3]))
    [(b'a', b'b'), (b'ab', b'b')]
    >>> _fresh_merges([b"a", b"b", b"ab"], array("i", [0, 1, 2, 0, 1, 2])) is None
    True
    """
    first = len(vocab) - len(merges) // 3
    if merges[2::3] != array("i", range(first, len(vocab))):
        return None
    spell = vocab.__getitem__
    return list(zip(map(spell, merges[0::3]), map(spell, merges[1::3])))


ROLE_OPTIONS = ("bos_token", "eos_token", "unk_token", "pad_token")


def with_roles(special_tokens: object, roles: dict[str, object]) -> tuple[list[str], dict[str, str]]:
    """Add the tokens given roles to the special tokens (after them, if absent); return both.

    >>> with_roles(["<s>"], {"bos_token": "<s>", "eos_token": "</s>", "pad_token": None})
    (['<s>', '</s>'], {'bos_token': '<s>', 'eos_token': '</s>'})
    """
    if isinstance(special_tokens, str) or not isinstance(special_tokens, Sequence):
        return special_tokens, {}  # type: ignore[return-value]  # check_options says what is wrong
    specials = list(special_tokens)
    chosen: dict[str, str] = {}
    for role, token in roles.items():
        if token is None:
            continue
        if not isinstance(token, str) or not token:
            raise TypeError(f"{role} must be a non-empty str or None, got {token!r}")
        if token not in specials:
            specials.append(token)
        chosen[role] = token
    return specials, chosen


def check_special_tokens(special_tokens: object) -> list[str]:
    """Check the special tokens (a list of non-empty str); return them with repeats dropped.

    >>> check_special_tokens(["<s>", "<s>", "</s>"])
    ['<s>', '</s>']
    """
    if isinstance(special_tokens, str) or not isinstance(special_tokens, Sequence):
        raise TypeError(
            f"special_tokens must be a list of str, got {special_tokens!r}"
            + (f"; for one token write [{special_tokens!r}]" if isinstance(special_tokens, str) else "")
        )
    specials: list[str] = []
    for token in special_tokens:
        if not isinstance(token, str) or not token:
            raise TypeError(f"each special token must be a non-empty str, got {token!r}")
        if token not in specials:
            specials.append(token)
    return specials


def check_options(
    vocab_size: object,
    min_frequency: object,
    special_tokens: object,
    max_token_length: object,
    workers: object,
) -> list[str]:
    """Check the training options before any corpus is read; return the special tokens, repeats dropped.

    >>> check_options(300, 0, ["<s>", "<s>", "</s>"], None, None)
    ['<s>', '</s>']
    """

    def is_int(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    specials = check_special_tokens(special_tokens)
    if not is_int(vocab_size):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    minimum = len(specials) + 256
    if vocab_size < minimum:  # type: ignore[operator]
        raise ValueError(
            f"vocab_size={vocab_size!r} is too small: a byte-level vocabulary holds the {len(specials)} special "
            f"tokens and all 256 bytes before any merge, so vocab_size must be at least {minimum}"
        )
    if not is_int(min_frequency) or min_frequency < 0:  # type: ignore[operator]
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
    if max_token_length is not None and (not is_int(max_token_length) or max_token_length < 1):  # type: ignore[operator]
        raise ValueError(f"max_token_length must be None or an int >= 1, got {max_token_length!r}")
    if workers is not None and (not is_int(workers) or workers < 1):  # type: ignore[operator]
        raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
    return specials
