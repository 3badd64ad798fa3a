"""The one entry point of classic BPE and WordPiece: a named recipe, or the classic options combined freely.

>>> model = train_classic(["low lower lowest"], num_merges=2, end_of_word_suffix="</w>", show_progress=False)
>>> model.merge_pairs
[('l', 'o'), ('lo', 'w')]
>>> train_classic(["low lower lowest"] * 3, recipe="subword-nmt", num_merges=2, show_progress=False).scheme
'subword-nmt'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...errors import InputError
from ...model.classic import ClassicModel
from .recipes import train_recipe
from .scheme import scheme_model

__all__ = ["train_classic"]

# The scheme options and their defaults: with a recipe, which fixes them, none may differ.
_SCHEME_DEFAULTS = {"alphabet": "chars", "pretokenize": "whitespace", "end_of_word_suffix": "",
                    "continuing_subword_prefix": "", "tie_break": "first-seen", "unk_token": None,
                    "limit_alphabet": None, "initial_alphabet": ()}


def train_classic(
    corpus: Any,
    *,
    recipe: str | None = None,
    vocab_size: int | None = None,
    num_merges: int | None = None,
    min_frequency: int | None = None,
    special_tokens: Sequence[str] | None = None,
    lowercase: bool = False,
    alphabet: str = "chars",
    pretokenize: str = "whitespace",
    end_of_word_suffix: str = "",
    continuing_subword_prefix: str = "",
    tie_break: str = "first-seen",
    unk_token: str | None = None,
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    text_column: str = "text",
    show_progress: bool = True,
) -> ClassicModel:
    """Train classic BPE or WordPiece: a published trainer exactly (``recipe``), or the classic options combined.

    Args:
        corpus: an iterable of str, a ``datasets`` Dataset or IterableDataset, or path(s) of UTF-8 text files (a
            mapping of word -> count for the word-based recipes).
        recipe: a published system (``"subword-nmt"``, ``"hf-course"``, ``"wordpiece"``, ...;
            :data:`hf_bpe.RECIPES`); it fixes the scheme options below, which must then keep their defaults.
        vocab_size: the final vocabulary size (give this or ``num_merges``).
        num_merges: the number of merges instead.
        min_frequency: the smallest pair count still merged (a recipe's own default when None).
        special_tokens: special tokens, given the first ids (a recipe's own when None).
        lowercase: with the ``wordpiece`` recipe, BERT's uncased setup.
        alphabet: ``"chars"`` (the characters seen) or ``"bytes"`` (UTF-8 bytes as GPT-2's byte characters).
        pretokenize: ``"whitespace"``, ``"none"`` or a pattern name / regex of :class:`hf_bpe.Pretokenizer`.
        end_of_word_suffix: fused onto a word's last symbol (subword-nmt's ``</w>``).
        continuing_subword_prefix: on every symbol but a word's first (WordPiece's ``##``).
        tie_break: ``"first-seen"``, ``"largest-pair"`` or ``"smallest-ids"``.
        unk_token: what characters outside a limited alphabet become.
        limit_alphabet: keep the most frequent characters only (needs ``unk_token``).
        initial_alphabet: characters always kept. These eight are the classic options without a recipe
            (:mod:`hf_bpe.training.classic.scheme`).
        text_column: the text column of a dataset.
        show_progress: progress bars on stderr.

    Returns:
        The trained :class:`hf_bpe.ClassicModel` (its ``scheme`` names the recipe, ``"custom"`` without one).

    Raises:
        InputError: an unknown recipe, scheme options given with a recipe, ``lowercase`` without the ``wordpiece``
            recipe, or what the recipe or scheme refuses.
    """
    initial_alphabet = tuple(initial_alphabet)
    scheme = {"alphabet": alphabet, "pretokenize": pretokenize, "end_of_word_suffix": end_of_word_suffix,
              "continuing_subword_prefix": continuing_subword_prefix, "tie_break": tie_break, "unk_token": unk_token,
              "limit_alphabet": limit_alphabet, "initial_alphabet": initial_alphabet}
    if recipe is not None:
        given = [f"{k}={v!r}" for k, v in scheme.items() if v != _SCHEME_DEFAULTS[k]]
        if given:
            raise InputError(f"recipe {recipe!r} fixes its own options; drop {', '.join(given)} (or drop recipe= "
                             "to combine the classic options freely)")
        return train_recipe(corpus, recipe, vocab_size=vocab_size, num_merges=num_merges, min_frequency=min_frequency,
                            special_tokens=special_tokens, lowercase=lowercase, text_column=text_column,
                            show_progress=show_progress)
    if lowercase:
        raise InputError("lowercase=True belongs to the 'wordpiece' recipe; pass recipe='wordpiece'")
    return scheme_model(corpus, vocab_size=vocab_size, num_merges=num_merges,
                        min_frequency=0 if min_frequency is None else min_frequency,
                        special_tokens=() if special_tokens is None else special_tokens, text_column=text_column,
                        show_progress=show_progress, **scheme)
