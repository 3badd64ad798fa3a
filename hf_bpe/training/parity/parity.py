"""``train_parity``: parity-aware BPE from one corpus per language, file for file as ``ParityBpeTrainer``.

The contract (held by tests/test_parity.py on real multilingual text): the folder :meth:`BPEModel.save` writes
(``vocab.json``, ``merges.txt``, ``tokenizer.json``, configs) equals, id for id and merge for merge, what this
`tokenizers` 0.23.3 setup gives from the same texts (:func:`hf_bpe.tools.peers.train_tokenizers_parity`)::

    tokenizer = Tokenizer(BPE())
    tokenizer.pre_tokenizer = ByteLevel(add_prefix_space=False)        # hf_bpe's pattern="gpt2" (the default)
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)  # what hf_bpe's tokenizer.json declares
    tokenizer.decoder = decoders.ByteLevel()
    ParityBpeTrainer(num_merges=..., variant=..., ..., special_tokens=[...],
                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet()).train_from_iterator(
        tokenizer, [texts of each language], dev_iterators=[...] or None, ratio=[...] or None)

Note ``add_prefix_space=False``: ``ByteLevel()``'s default is True, which hf_bpe gives as ``add_prefix_space=True``.
Other patterns are the pre-tokenizer :func:`hf_bpe.tools.peers.tokenizers_pre_tokenizer` builds. The semantics of
the merge loop are written out in :mod:`hf_bpe.training.parity.reference`. Unlike ``train``, the alphabet is the
256 bytes by default (``initial_alphabet`` above, as ``hf_bpe.train``); ``all_bytes=False`` drops it from both
sides: the alphabet is then the bytes seen in training or dev text, ``ParityBpeTrainer``'s default.

Where hf_bpe differs from `tokenizers` (each tested): ``dev`` and ``ratio`` together are refused (`tokenizers`
silently ignores ``ratio``), and the two cases where `tokenizers` never returns end (see the reference).

>>> model = train_parity({"en": ["low lower lowest"] * 3, "de": ["niedrig niedriger"] * 3}, num_merges=4,
...                      show_progress=False)
>>> [(a + b).decode() for a, b in model.merges]
['ri', 'ow', 'rig', 'low']
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ...core._reference import saved_merges
from ...core.bytelevel import str_to_token
from ...errors import InputError
from ...model.bpe import BPEModel
from ..bpe.trainer import check_special_tokens
from ..counts import WordCounts
from .reference import ParityResult
from .trainer import train_parity_fast
from ..progress import progress_bar

__all__ = ["VARIANTS", "StallWarning", "check_parity_options", "train_parity"]

VARIANTS = ("base", "window")


class StallWarning(UserWarning):
    """Training went where `tokenizers`' ``ParityBpeTrainer`` loops forever (see :mod:`.reference`)."""


def train_parity(
    languages: Mapping[str, Any],
    *,
    num_merges: int,
    dev: Mapping[str, Any] | None = None,
    ratio: Mapping[str, float] | None = None,
    variant: str = "base",
    window_size: int = 100,
    alpha: float = 2.0,
    global_merges: int = 0,
    min_frequency: int = 0,
    total_symbols: bool = False,
    special_tokens: Sequence[str] = (),
    all_bytes: bool = True,
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    text_column: str = "text",
    workers: int | None = None,
    show_progress: bool = True,
) -> BPEModel:
    """Train parity-aware byte-level BPE: at each merge, serve the language that is compressed worst.

    Args:
        languages: language name -> corpus (what :func:`hf_bpe.train` accepts: texts, a ``datasets`` Dataset, or
            ``pathlib.Path`` text files read line by line, each line with its newline). Their order breaks ties.
        num_merges: how many merges to learn (fewer when every language runs out of pairs).
        dev: language name -> development corpus (ideally parallel), the same names as ``languages``: the language
            whose dev text takes the most tokens is served next.
        ratio: language name -> target compression rate, instead of ``dev``: the language with the lowest
            ``compression / ratio`` on its training text is served next (only the relative values matter).
        variant: ``"base"``, or ``"window"``: a language that had more than ``alpha / len(languages)`` of the last
            ``window_size`` merges waits.
        window_size, alpha: the window variant's parameters.
        global_merges: merges learned first from all languages' counts summed (plain BPE), before parity.
        min_frequency: the smallest pair count that may still be merged (a language below it is done).
        total_symbols: ``num_merges`` counts the whole vocabulary: the specials and the alphabet are taken off it.
        special_tokens: special tokens, given the first ids.
        all_bytes: the alphabet holds all 256 bytes, as ``hf_bpe.train``'s (`tokenizers`:
            ``initial_alphabet=ByteLevel.alphabet()``); False: only the bytes seen in training or dev text,
            ``ParityBpeTrainer``'s default (such a folder loads with ``missing_bytes="allow"``).
        pattern, add_prefix_space, text_column, workers, show_progress: as :func:`hf_bpe.train`.

    Returns:
        The trained :class:`BPEModel`.

    Raises:
        TypeError, ValueError: for bad options (checked before any corpus is read); InputError when every
            training corpus is empty.
    """
    names, specials, ratios = check_parity_options(
        languages, dev=dev, ratio=ratio, num_merges=num_merges, variant=variant, window_size=window_size,
        alpha=alpha, global_merges=global_merges, min_frequency=min_frequency, total_symbols=total_symbols,
        special_tokens=special_tokens, all_bytes=all_bytes)

    def count(corpus: Any) -> dict[bytes, int]:
        counts = WordCounts.from_corpus(corpus, pattern=pattern, add_prefix_space=add_prefix_space,
                                        text_column=text_column, workers=workers, show_progress=show_progress)
        return dict(counts.items())  # the dict's own items: dict(counts) would look each word up again

    train_counts = [count(languages[name]) for name in names]
    if not any(train_counts):
        raise InputError(f"every training corpus is empty ({', '.join(names)}): there is no text to learn from")
    dev_counts = None if dev is None else [count(dev[name]) for name in names]
    options = {"num_merges": num_merges, "variant": variant, "ratio": ratios, "window_size": window_size,
               "alpha": float(alpha), "global_merges": global_merges, "min_frequency": min_frequency,
               "total_symbols": total_symbols}
    with progress_bar(show_progress, desc="merges", total=num_merges) as bar:
        result = train_parity_fast(train_counts, dev_counts, special_tokens=specials, all_bytes=all_bytes,
                                   progress=bar.update, consume=True, **options)
    if result.stalls:
        warnings.warn(f"{result.stalls} language choices were ones tokenizers' ParityBpeTrainer never returns from "
                      f"(it loops forever there); hf_bpe served the first language not yet exhausted instead "
                      f"(hf_bpe.training.parity.reference)", StallWarning, stacklevel=2)
    if len(result.merges) < result.budget:
        warnings.warn(f"every language ran out of mergeable pairs (min_frequency={min_frequency}): "
                      f"{len(result.merges)} merges, not the {result.budget} asked for", stacklevel=2)
    provenance = {"options": {"algorithm": "parity", "languages": list(names), **options,
                              "ratio": None if ratios is None else list(ratios), "dev": dev is not None,
                              "special_tokens": specials, "all_bytes": all_bytes, "pattern": pattern,
                              "add_prefix_space": add_prefix_space},
                  "corpus": None}
    return model_from_result(result, specials, pattern=pattern, add_prefix_space=add_prefix_space,
                             provenance=provenance)


def model_from_result(result: ParityResult, specials: Sequence[str], *, pattern: str, add_prefix_space: bool,
                      provenance: Mapping[str, Any] | None = None) -> BPEModel:
    """Build the :class:`BPEModel` of a parity run: regular tokens as bytes, specials by content, merges as saved.

    >>> from hf_bpe.training.parity.reference import train_parity_reference
    >>> model_from_result(train_parity_reference([{b"ab": 2}], num_merges=1), [], pattern="gpt2",
    ...                   add_prefix_space=False).merges
    ((b'a', b'b'),)
    """
    count = len(specials)
    tokens = [b"" if i < count and i not in result.shared_specials else str_to_token(token)
              for i, token in enumerate(result.vocab)]
    regular = {tokens[i]: i for i in range(len(tokens)) if i >= count or i in result.shared_specials}
    return BPEModel(regular, saved_merges(tokens, result.merges),
                    special_tokens={token: i for i, token in enumerate(specials)}, pattern=pattern,
                    add_prefix_space=add_prefix_space, provenance=provenance, missing_bytes="allow")


def check_parity_options(
    languages: object,
    *,
    dev: object,
    ratio: object,
    num_merges: object,
    variant: object,
    window_size: object,
    alpha: object,
    global_merges: object,
    min_frequency: object,
    total_symbols: object,
    special_tokens: object,
    all_bytes: object = True,
) -> tuple[list[str], list[str], tuple[float, ...] | None]:
    """Check the options before any corpus is read; return the language names, the specials and the ratios in order.

    >>> check_parity_options({"en": [], "hi": []}, dev=None, ratio={"hi": 2.5, "en": 1}, num_merges=10,
    ...     variant="base", window_size=100, alpha=2.0, global_merges=0, min_frequency=0, total_symbols=False,
    ...     special_tokens=["<s>", "<s>"])
    (['en', 'hi'], ['<s>'], (1.0, 2.5))
    """

    def is_int(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(languages, Mapping) or not languages:
        raise TypeError(f"languages must be a non-empty mapping of language name to corpus, e.g. "
                        f"{{'en': texts_en, 'hi': texts_hi}}, got {_short(languages)}")
    names = list(languages)
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"each language name must be a non-empty str, got {name!r}")
    for what, given in (("dev", dev), ("ratio", ratio)):
        if given is None:
            continue
        if not isinstance(given, Mapping):
            raise TypeError(f"{what} must be None or a mapping keyed by the language names {names!r}, got "
                            f"{_short(given)}")
        if set(given) != set(names):
            missing = [n for n in names if n not in given]
            extra = [n for n in given if n not in languages]
            raise ValueError(f"{what} must name exactly the languages {names!r}: "
                             + "; ".join(([f"missing {missing!r}"] if missing else [])
                                         + ([f"unknown {extra!r}"] if extra else [])))
    if dev is not None and ratio is not None:
        raise ValueError("give dev or ratio, not both (tokenizers' ParityBpeTrainer silently ignores ratio when dev "
                         "sets are given); drop one")
    ratios = None
    if ratio is not None:
        assert isinstance(ratio, Mapping)
        for name in names:
            value = ratio[name]
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"ratio[{name!r}] must be a positive finite number, got {value!r}")
        ratios = tuple(float(ratio[name]) for name in names)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS!r}, got {variant!r}")
    for name, value in (("num_merges", num_merges), ("global_merges", global_merges),
                        ("min_frequency", min_frequency)):
        if not is_int(value) or value < 0:  # type: ignore[operator]
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    if not is_int(window_size) or window_size < 1:  # type: ignore[operator]
        raise ValueError(f"window_size must be an int >= 1, got {window_size!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not math.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    if not isinstance(total_symbols, bool):
        raise TypeError(f"total_symbols must be a bool, got {total_symbols!r}")
    if not isinstance(all_bytes, bool):
        raise TypeError(f"all_bytes must be a bool, got {all_bytes!r}")
    return names, check_special_tokens(special_tokens), ratios


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
