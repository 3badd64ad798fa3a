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

import multiprocessing
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ..core import _core
from .corpus import iter_batches, iter_texts
from ..formats.manifest import CorpusFingerprint
from ..model.bpe import BPEModel
from ..model.classic import ClassicModel
from ..core.pretokenize import Pretokenizer

__all__ = ["train", "count_words", "check_options", "choose_workers", "DEFAULT_VOCAB_SIZE"]

# tokenizers' BpeTrainer default.
DEFAULT_VOCAB_SIZE = 30000
# Below this many characters, worker processes cost more than they save.
_PARALLEL_MIN_CHARS = 1 << 23


def _progress_bar(enabled: bool, **kwargs: Any):
    from tqdm.auto import tqdm

    return tqdm(disable=not enabled, file=sys.stderr, dynamic_ncols=True, **kwargs)


def _count_batch(args: tuple[Pretokenizer, list[str]]) -> dict[bytes, int]:
    pretokenizer, texts = args
    return pretokenizer.count(texts)


def count_words(
    texts: Iterable[str],
    pretokenizer: Pretokenizer,
    *,
    workers: int = 1,
    show_progress: bool = False,
    fingerprint: CorpusFingerprint | None = None,
) -> tuple[dict[bytes, int], int, int]:
    """Count the distinct pre-tokens of a stream of texts.

    Memory grows with the number of distinct pre-tokens, not with the corpus: texts are read in batches of a
    few MB and each batch is counted (in a worker process when ``workers > 1``) and dropped. Sums do not depend
    on the order in which batches finish, so the result is the same for any ``workers``.

    Args:
        texts: the sequences.
        pretokenizer: splits each text into pre-tokens.
        workers: processes to count in (1: in this process).
        show_progress: show documents and MB read on stderr.
        fingerprint: if given, every text is added to it, in order (one update per batch).

    Returns:
        ``(counts, documents, characters)``.

    >>> count_words(["a b", "a"], Pretokenizer("gpt2"))
    ({b'a': 2, b' b': 1}, 2, 4)
    """
    counts: dict[bytes, int] = {}
    documents = characters = 0
    with _progress_bar(show_progress, desc="count pre-tokens", unit=" docs") as bar:

        def account(batch: list[str]) -> list[str]:
            nonlocal documents, characters
            size = sum(map(len, batch))
            documents += len(batch)
            characters += size
            bar.update(len(batch))
            bar.set_postfix_str(f"{characters / 1e6:.1f}M chars", refresh=False)
            if fingerprint is not None:
                fingerprint.update(batch)
            return batch

        batches = (account(batch) for batch in iter_batches(texts))
        if workers <= 1:
            for batch in batches:
                pretokenizer.count(batch, counts)
            return counts, documents, characters
        # Forked workers inherit the compiled scanner's tables; imap keeps at most a few batches in flight.
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with context.Pool(workers) as pool:
            for partial in pool.imap_unordered(_count_batch, ((pretokenizer, b) for b in batches), chunksize=1):
                for word, n in partial.items():
                    counts[word] = counts.get(word, 0) + n
    return counts, documents, characters


def choose_workers(pretokenizer: Pretokenizer, corpus_size: int) -> int:
    """Return how many counting processes pay off for a corpus of about ``corpus_size`` characters.

    The compiled scanner of the named patterns counts faster (~140 MB/s) than texts can be pickled to a worker, so
    only custom regex patterns (~10 MB/s) on corpora of several MB get processes.

    >>> choose_workers(Pretokenizer("gpt2"), 10**9)
    1
    """
    if pretokenizer.name is None and corpus_size >= _PARALLEL_MIN_CHARS:
        return max(1, min(os.cpu_count() or 1, 8))
    return 1


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
) -> BPEModel | ClassicModel:
    """Train a byte-level BPE model on a corpus (or, with ``recipe``, reproduce a published trainer).

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
        workers: processes for counting (default: 1 for named patterns, whose compiled scanner outruns the cost
            of sending texts to processes; the CPU count for a custom regex over 8 MB of files).
        corpus_order: how the manifest fingerprints the corpus: ``"sequence"`` (the exact order of texts) or
            ``"multiset"`` (order-free, for datasets whose rows come in any order). The model never depends on
            the order; only the fingerprint does.
        show_progress: progress bars on stderr.
        recipe: train a published system exactly instead (``"subword-nmt"``, ``"hf-course"``, ``"wordpiece"``,
            ...; :mod:`hf_bpe.training.recipes`); ``pattern``, ``add_prefix_space``, ``max_token_length``,
            ``workers`` and ``corpus_order`` then do not apply.
        num_merges: with a recipe that counts merges, how many to learn (instead of ``vocab_size``).
        lowercase: with the ``wordpiece`` recipe, BERT's uncased setup.

    Returns:
        The trained :class:`BPEModel` (with a recipe, a :class:`hf_bpe.model.classic.ClassicModel`).

    Raises:
        TypeError, ValueError: for bad options or a bad corpus; see :func:`hf_bpe.training.corpus.iter_texts`.
    """
    if recipe is not None or num_merges is not None or lowercase:
        return _train_recipe(corpus, recipe, vocab_size, min_frequency, special_tokens, text_column, show_progress,
                             num_merges=num_merges, lowercase=lowercase, pattern=pattern,
                             add_prefix_space=add_prefix_space, max_token_length=max_token_length, workers=workers,
                             corpus_order=corpus_order)
    vocab_size = DEFAULT_VOCAB_SIZE if vocab_size is None else vocab_size
    min_frequency = 0 if min_frequency is None else min_frequency
    special_tokens = () if special_tokens is None else special_tokens
    # 1. Check every option before reading the corpus, so mistakes fail at once.
    specials = check_options(vocab_size, min_frequency, special_tokens, max_token_length, workers)
    pretokenizer = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
    if corpus_order not in ("sequence", "multiset"):
        raise ValueError(f"corpus_order must be 'sequence' or 'multiset', got {corpus_order!r}")
    fingerprint = CorpusFingerprint(order=corpus_order)
    texts = iter_texts(corpus, text_column=text_column)
    if workers is None:
        workers = choose_workers(pretokenizer, _corpus_chars_hint(corpus))

    # 2. Count pre-tokens (streaming; memory ~ distinct pre-tokens).
    # The fingerprint sees every text in the order this process reads them (workers only count).
    counts, documents, _ = count_words(
        texts, pretokenizer, workers=workers, show_progress=show_progress, fingerprint=fingerprint
    )
    if documents == 0 or not counts:
        raise ValueError(
            "the corpus is empty: it yielded no text to learn from"
            + (f" ({documents} documents, all empty)" if documents else "")
        )

    # 3. The merge loop, in the compiled core.
    # keys() and values() iterate in the same order; a lookup per word cost 0.3 s on a million words.
    words = list(counts)
    word_counts = list(counts.values())
    del counts
    with _progress_bar(show_progress, desc="merges", total=max(0, vocab_size - len(specials) - 256)) as bar:
        vocab, merges = _core.train_merges(
            words,
            word_counts,
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=specials,
            max_token_length=max_token_length,
            progress=bar.update,
        )
    del words, word_counts

    # 4. Build the model; say so when the corpus ran out of pairs before vocab_size.
    # What BPEModel.save records in the manifest, so that `hf-bpe verify` can retrain and compare.
    provenance = {
        "options": {
            "vocab_size": vocab_size,
            "min_frequency": min_frequency,
            "special_tokens": list(specials),
            "pattern": pattern,
            "add_prefix_space": add_prefix_space,
            "max_token_length": max_token_length,
            "text_column": text_column,
            "workers": workers,
        },
        "corpus": fingerprint.as_dict(),
    }
    model = _build_model(vocab, merges, specials, pattern, add_prefix_space, provenance)
    if len(vocab) < vocab_size:
        warnings.warn(
            f"the corpus ran out of mergeable pairs (min_frequency={min_frequency}): the vocabulary has "
            f"{len(vocab)} tokens, not the {vocab_size} asked for; use a larger corpus or a smaller vocab_size",
            stacklevel=2,
        )
    return model


def _train_recipe(corpus: Any, recipe: str | None, vocab_size: int | None, min_frequency: int | None,
                  special_tokens: Sequence[str] | None, text_column: str, show_progress: bool, *,
                  num_merges: int | None, lowercase: bool, **byte_level: Any) -> ClassicModel:
    """Hand a recipe to ``recipes.train_recipe``, refusing the byte-level options it would silently ignore."""
    from ..errors import InputError
    from .recipes import train_recipe

    defaults = {"pattern": "gpt2", "add_prefix_space": False, "max_token_length": None, "workers": None,
                "corpus_order": "sequence"}
    if recipe is None:
        raise InputError("num_merges and lowercase belong to the named recipes; pass recipe=NAME (CLI --recipe)")
    contradicting = [f"{k}={v!r}" for k, v in byte_level.items() if v != defaults[k]]
    if contradicting:
        raise InputError(f"recipe {recipe!r} fixes its own pre-tokenization and training; drop "
                         f"{', '.join(contradicting)}")
    return train_recipe(corpus, recipe, vocab_size=vocab_size, num_merges=num_merges, min_frequency=min_frequency,
                        special_tokens=special_tokens, lowercase=lowercase, text_column=text_column,
                        show_progress=show_progress)


def _build_model(
    vocab: list[bytes],
    merges: list[tuple[int, int, int]],
    specials: Sequence[str],
    pattern: str,
    add_prefix_space: bool,
    provenance: dict[str, Any],
) -> BPEModel:
    special_ids = {token: i for i, token in enumerate(specials)}
    regular = {token: i for i, token in enumerate(vocab) if i >= len(specials)}
    # tokenizers keeps merges in a map from pair to (rank, new id): a pair merged twice keeps its last rank, and
    # merges.txt lists the pairs by rank. Reproduce that file, so the written merges are byte-identical.
    last_rank = {(left, right): rank for rank, (left, right, _new) in enumerate(merges)}
    ordered = sorted(last_rank.items(), key=lambda item: item[1])
    pairs = [(vocab[left], vocab[right]) for (left, right), _rank in ordered]
    return BPEModel(regular, pairs, special_tokens=special_ids, pattern=pattern, add_prefix_space=add_prefix_space,
                    provenance=provenance)


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


def _corpus_chars_hint(corpus: Any) -> int:
    """Guess the corpus size without reading it (file sizes), to decide whether processes pay off."""
    paths = [corpus] if isinstance(corpus, os.PathLike) else corpus if isinstance(corpus, list | tuple) else []
    try:
        return sum(os.path.getsize(p) for p in paths if isinstance(p, os.PathLike))
    except OSError:
        return 0

