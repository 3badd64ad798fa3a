r"""Train a SuperBPE tokenizer: byte-level BPE up to a transition, then superwords across whitespace up to the size.

SuperBPE (Liu, Hayase, Hofmann, Oh, Smith, Choi; COLM 2025, arXiv 2503.13423). The exact algorithm, as the authors'
code runs it, is the docstring of the pure-Python spec :mod:`hf_bpe.core._reference_superbpe`; this module runs it
on the compiled core (stage 1: :func:`~hf_bpe.train`; stage 2: the seeded loop of :mod:`hf_bpe.training.bpe.extend`,
``core._core.continue_merges_from_words``) and records both stages' options in the manifest.

Differences from the authors' fork, each chosen and tested (tests/test_superbpe.py):

* The transition is counted in ids (``transition``), not in inherited merges (``num_inherit_merges``): stage 1 is
  trained at ``transition`` ids, not trained larger and cut (``head -n num_inherit_merges merges.txt``). For
  byte-level BPE the first k merges of a larger run are the merges of a run of ``256 + k`` ids (BpeTrainer's loop
  does not look ahead), so ``transition = num_inherit_merges + 256 + len(special_tokens)`` is the fork's setup.
* Every stage-1 id stays. The fork skips an inherited merge whose pair never occurs among the stage-2 words (its
  log: "... not found in queue") and so drops that token; hf_bpe keeps all ``transition`` ids of stage 1, so stage 1
  is exactly what ``hf-bpe train --vocab-size transition`` gives, and stage 2 only adds.
* All 256 byte tokens are in the vocabulary, as in every hf_bpe model. The authors' scripts give ``BpeTrainer`` no
  ``initial_alphabet``, so their vocabularies hold only the bytes the corpus contains (and the fork's stage 2
  recomputes that alphabet from its own corpus).
* The fork hard-codes 4 words and ``":Ġ"``; here they are options (``max_words=None``, ``forbidden=b""`` turn them
  off).

>>> model = train_superbpe(["the cat sat on the mat, the cat sat"] * 4, vocab_size=274, transition=264,
...                        show_progress=False)
>>> [model.id_to_bytes(i) for i in model.encode("the cat sat on the mat")]  # at most 4 words a token
[b'the cat sat', b' on the', b' mat']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

from ...core._reference_superbpe import (
    STAGE2_PATTERN,
    STAGE2_REGEX,
    isolated_split_pattern,
)
from ...core.pretokenize import Pretokenizer
from ...errors import InputError
from ...model.bpe import BPEModel
from .trainer import check_options, train, with_roles
from ..counts import WordCounts, choose_workers, corpus_chars_hint
from .extend import _extend_counts

__all__ = ["STAGE2_PATTERN", "STAGE2_REGEX", "isolated_split_pattern", "replay_superbpe", "train_superbpe"]


def train_superbpe(
    corpus: Any,
    *,
    vocab_size: int,
    transition: int,
    min_frequency: int | None = None,
    special_tokens: Sequence[str] | None = None,
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    max_token_length: int | None = None,
    max_words: int | None = 4,
    forbidden: bytes = b": ",
    stage2_pattern: str = STAGE2_PATTERN,
    text_column: str = "text",
    workers: int | None = None,
    corpus_order: Literal["sequence", "multiset"] = "sequence",
    show_progress: bool = True,
    bos_token: str | None = None,
    eos_token: str | None = None,
    unk_token: str | None = None,
    pad_token: str | None = None,
) -> BPEModel:
    """Train a SuperBPE model: stage 1 up to ``transition`` ids, then superwords up to ``vocab_size`` ids.

    Args:
        corpus: what :func:`hf_bpe.train` accepts; it is read twice (once per stage), so a one-shot iterator is
            read into a list first.
        vocab_size: the final vocabulary size (specials, the 256 bytes, both stages' merges).
        transition: the vocabulary size at which stage 1 stops (256 + specials <= transition <= vocab_size).
        min_frequency, special_tokens, pattern, add_prefix_space, max_token_length: as :func:`hf_bpe.train`, for
            both stages (``pattern`` is stage 1's pre-tokenizer).
        max_words: most space-separated words a stage-2 token may span (None: no limit; the authors use 4).
        forbidden: bytes no stage-2 token may contain (b"": none; the authors forbid b": ").
        stage2_pattern: the stage-2 pre-tokenizer as a findall regex (default: the authors' split,
            :data:`STAGE2_PATTERN`); the saved model encodes with it.
        text_column, workers, corpus_order, show_progress, bos_token, eos_token, unk_token, pad_token: as
            :func:`hf_bpe.train`.

    Returns:
        The model; its manifest records both stages' options, so ``hf-bpe verify`` retrains it.

    Raises:
        TypeError, ValueError: for bad options; InputError for an empty corpus.

    >>> model = train_superbpe(["by the way, by the way"] * 3, vocab_size=266, transition=262, show_progress=False)
    >>> model.id_to_bytes(model.encode("by the way")[0])
    b'by the way'
    """
    roles = {"bos_token": bos_token, "eos_token": eos_token, "unk_token": unk_token, "pad_token": pad_token}
    with_role_tokens, _ = with_roles(() if special_tokens is None else special_tokens, roles)
    specials = check_options(vocab_size, 0 if min_frequency is None else min_frequency, with_role_tokens,
                             max_token_length, workers)
    _check_superbpe(vocab_size, transition, max_words, forbidden, stage2_pattern, len(specials))
    if not isinstance(corpus, (str, bytes)) and iter(corpus) is corpus:  # a generator: both stages read it
        corpus = list(corpus)
    # Stage 1: plain byte-level BPE up to the transition.
    stage1 = cast(BPEModel, train(  # no recipe: a BPEModel
        corpus, vocab_size=transition, min_frequency=min_frequency, special_tokens=special_tokens, pattern=pattern,
        add_prefix_space=add_prefix_space, max_token_length=max_token_length, text_column=text_column,
        workers=workers, corpus_order=corpus_order, show_progress=show_progress, **roles))
    # Stage 2: the stage-2 pieces, each as stage 1 encodes it, then the seeded loop under the superword rules.
    base = BPEModel(stage1.vocab, stage1.merges, special_tokens=stage1.special_tokens, pattern=stage2_pattern,
                    add_prefix_space=add_prefix_space, roles=stage1.roles)
    # Pretokenizer splits an isolated-split pattern with its bare regex (the same pieces, no lookahead per character).
    pretokenizer = Pretokenizer(stage2_pattern, add_prefix_space=add_prefix_space)
    stage2_workers = choose_workers(pretokenizer, corpus_chars_hint(corpus)) if workers is None else workers
    counts = WordCounts.from_corpus(corpus, pattern=stage2_pattern, add_prefix_space=add_prefix_space,
                                    text_column=text_column, workers=stage2_workers, corpus_order=corpus_order,
                                    show_progress=show_progress)
    stage1_options = dict(stage1._provenance.get("options") or {})  # type: ignore[call-overload]  # train's record
    options = {**stage1_options, "algorithm": "superbpe", "vocab_size": vocab_size, "transition": transition,
               "max_words": max_words, "forbidden": forbidden.decode("latin-1"), "stage2_pattern": stage2_pattern}
    return _extend_counts(base, counts, vocab_size, 0 if min_frequency is None else min_frequency, max_token_length,
                          show_progress, {}, None, rules={"max_words": max_words, "forbidden": forbidden},
                          options=options)


def _check_superbpe(vocab_size: int, transition: object, max_words: object, forbidden: object,
                    stage2_pattern: object, specials: int) -> None:
    if isinstance(transition, bool) or not isinstance(transition, int):
        raise TypeError(f"transition must be an int (the vocabulary size where stage 1 stops), got {transition!r} "
                        f"({type(transition).__name__})")
    if not 256 + specials <= transition <= vocab_size:
        raise ValueError(f"transition={transition!r} must lie between {256 + specials} (the 256 bytes and "
                         f"{specials} special tokens) and vocab_size={vocab_size!r}; pass e.g. "
                         f"transition={max(256 + specials, vocab_size * 4 // 5)}")
    if max_words is not None and (isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1):
        raise ValueError(f"max_words must be None (no limit) or an int >= 1, got {max_words!r}")
    if type(forbidden) is not bytes:
        raise TypeError(f"forbidden must be bytes (b'' for none), got {type(forbidden).__name__} {forbidden!r:.40}")
    if not isinstance(stage2_pattern, str) or not stage2_pattern:
        raise InputError(f"stage2_pattern must be a non-empty regex str, got {stage2_pattern!r:.80}")


def replay_superbpe(corpus: Any, options: dict[str, Any], **runtime: Any) -> BPEModel:
    """Train again with the options a SuperBPE manifest records (``hf-bpe verify``); ``runtime``: text_column, ...

    Raises:
        TypeError: for options this hf_bpe cannot replay.

    >>> model = train_superbpe(["the cat sat"] * 3, vocab_size=265, transition=262, show_progress=False)
    >>> replay_superbpe(["the cat sat"] * 3, dict(model._provenance["options"]), show_progress=False) == model
    True
    """
    options = {k: v for k, v in options.items() if k != "algorithm"}
    forbidden = options.pop("forbidden", ": ")
    if not isinstance(forbidden, str):
        raise TypeError(f"the manifest's forbidden must be a str, got {forbidden!r:.40}")
    return train_superbpe(corpus, **options, forbidden=forbidden.encode("latin-1"), **runtime)
