"""Named recipes: the published BPE trainers, reproduced exactly on the compiled classic merge loop.

=================  ==================================================================================================
recipe             reproduces
=================  ==================================================================================================
``sennrich-paper``  Sennrich, Haddow & Birch (2016), the paper's algorithm: characters plus a ``</w>`` symbol, ties
                   to the pair seen first (``max`` over an insertion-ordered dict); codes in version 0.1 spelling
``subword-nmt``    rsennrich/subword-nmt ``learn-bpe`` (0.3.8): ``</w>`` fused onto the last character, ties to the
                   largest pair, min frequency 2, ``bpe.codes`` byte for byte; ``apply`` as ``apply-bpe``
``hf-course``      the Hugging Face course's BPE chapter: GPT-2 pre-tokens over observed byte characters,
                   ``<|endoftext|>`` first, ties to the pair seen first
``minbpe-basic``   karpathy/minbpe ``BasicTokenizer``: the whole text as bytes, ids = byte values then merges
``minbpe-regex``   karpathy/minbpe ``RegexTokenizer``: the same over GPT-4 pre-tokens
``rasbt-simple``   rasbt/LLMs-from-scratch ``bpe-from-scratch-simple.ipynb``: the whole text, spaces as ``Ġ``
``rasbt``          rasbt/LLMs-from-scratch ``bpe-from-scratch.ipynb``: its pre-tokens, ids ``chr(0..255)``, ``Ġ``
``wordpiece``      `tokenizers`' ``WordPieceTrainer`` in BERT's setup (``BertNormalizer``, ``BertPreTokenizer``,
                   ``##``, ``[PAD] [UNK] [CLS] [SEP] [MASK]``); ``lowercase`` for uncased; ``vocab.txt``
``wordpiece-score`` the Hugging Face course's WordPiece chapter: ``BertPreTokenizer`` words, pairs ranked by
                   ``freq(ab) / (freq(a) freq(b))``, ties to the pair seen first; longest-match-first encoding;
                   ``vocab.txt`` (:mod:`hf_bpe.training.classic.wordpiece_score`)
=================  ==================================================================================================

Sizes are given as each system gives them: ``num_merges`` where it counts merges (subword-nmt's ``-s``, minbpe,
the paper), ``vocab_size`` for all (the initial symbols, special tokens and merges together).

>>> model = train_recipe([{"low": 5, "lower": 2, "newest": 6, "widest": 3}][0], "subword-nmt", num_merges=3,
...                      show_progress=False)
>>> model.merge_pairs
[('s', 't</w>'), ('e', 'st</w>'), ('l', 'o')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...core.bytelevel import token_to_str
from ...errors import InputError
from ...model.classic import ClassicModel
from ...model.segment import rasbt_pretokenize
from . import classic
from .recipe_table import RECIPES, Recipe
from .subword_nmt_loop import learn_like_subword_nmt, merges_stay_exact
from .wordpiece import bert_word_counts, train_wordpiece
from .wordpiece_score import bert_pretokenized_counts, train_wordpiece_score

__all__ = ["RECIPES", "Recipe", "train_recipe"]


def _size(name: str, vocab_size: int | None, num_merges: int | None, initial: int) -> int:
    """Return the number of merges to learn from whichever size the caller gave."""
    if vocab_size is not None and num_merges is not None:
        raise InputError(f"give vocab_size or num_merges, not both (got {vocab_size!r} and {num_merges!r})")
    if num_merges is not None:
        if not isinstance(num_merges, int) or isinstance(num_merges, bool) or num_merges < 0:
            raise InputError(f"num_merges must be an int >= 0, got {num_merges!r}")
        return num_merges
    if vocab_size is None:
        raise InputError(f"recipe {name!r} needs a size: vocab_size (CLI --vocab-size) or num_merges (--num-merges)")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < initial:
        raise InputError(
            f"vocab_size={vocab_size!r} is too small for recipe {name!r}: its initial symbols and special tokens "
            f"already number {initial}; give vocab_size >= {initial}"
        )
    return vocab_size - initial


def train_recipe(
    corpus: Any,
    recipe: str,
    *,
    vocab_size: int | None = None,
    num_merges: int | None = None,
    min_frequency: int | None = None,
    special_tokens: Sequence[str] | None = None,
    lowercase: bool = False,
    text_column: str = "text",
    show_progress: bool = True,
) -> ClassicModel:
    """Train a named recipe on a corpus; see the module docstring for the recipes.

    Args:
        corpus: as for :func:`hf_bpe.train`; a mapping of word -> count is taken as word counts by the word-based
            recipes (the paper's dictionary, subword-nmt's ``--dict-input``). The whole-text recipes read each
            file as one text, as the tutorials do.
        recipe: a name from :data:`RECIPES`.
        vocab_size: initial symbols + special tokens + merges.
        num_merges: the number of merges instead (the recipes that count merges).
        min_frequency: smallest pair count still merged (subword-nmt's ``--min-frequency``; default 2 there).
        special_tokens: for the recipes that have them (default ``["<|endoftext|>"]``).
        lowercase: the ``wordpiece`` recipe's uncased setup (BertNormalizer(lowercase=True)).
        text_column: the text column of a dataset.
        show_progress: a progress bar on stderr.

    Raises:
        InputError: an unknown recipe (the message lists them) or options the recipe does not have.
    """
    # 1. Check the options before reading the corpus.
    if recipe not in RECIPES:
        raise InputError(f"unknown recipe {recipe!r}; the recipes are: {', '.join(RECIPES)}")
    spec = RECIPES[recipe]
    if num_merges is not None and not spec.counts_merges:
        raise InputError(f"recipe {recipe!r} is sized by vocab_size (--vocab-size), not num_merges")
    if min_frequency is not None and recipe not in ("subword-nmt", "wordpiece"):
        raise InputError(f"recipe {recipe!r} has no min_frequency; subword-nmt and wordpiece have one")
    if lowercase and recipe != "wordpiece":
        raise InputError(f"lowercase belongs to the wordpiece recipe (BERT uncased); recipe {recipe!r} keeps case")
    if special_tokens is not None and not spec.takes_specials:
        raise InputError(f"recipe {recipe!r} has no special tokens; drop special_tokens (--special-token)")
    specials = list(dict.fromkeys(spec.default_specials if special_tokens is None else special_tokens))
    min_freq = spec.min_frequency if min_frequency is None else min_frequency
    if recipe in ("wordpiece", "wordpiece-score") and "[UNK]" not in specials:
        raise InputError(f"the {recipe} recipe needs '[UNK]' among the special tokens (WordPiece encodes unknown "
                         f"words as [UNK]); got {specials!r}; add it, e.g. --special-token '[UNK]'")
    whole = isinstance(corpus, Mapping)
    if whole and recipe not in ("sennrich-paper", "subword-nmt", "hf-course", "wordpiece", "wordpiece-score"):
        raise InputError(f"recipe {recipe!r} trains on text, not word counts; pass texts or files")
    texts = corpus if whole else classic.iter_corpus_texts(
        corpus, text_column=text_column, whole_files=recipe.startswith(("minbpe", "rasbt")))
    provenance = {"recipe": recipe, "source": spec.source, "lowercase": lowercase}
    if recipe == "wordpiece":
        counted = dict(texts) if whole else bert_word_counts(texts, lowercase=lowercase)  # type: ignore[arg-type]
        if not counted:
            raise InputError("the corpus is empty: it yielded no word to learn from")
        if vocab_size is None:
            raise InputError("recipe 'wordpiece' needs a size: vocab_size (CLI --vocab-size)")
        with classic.progress_bar(show_progress, vocab_size) as bar:
            tokens, merges = train_wordpiece(counted, vocab_size=vocab_size, special_tokens=specials,
                                             min_frequency=min_freq, progress=bar.update)
        return ClassicModel(recipe, tokens, merges, special_tokens={s: tokens.index(s) for s in specials},
                            provenance=provenance)
    if recipe == "wordpiece-score":
        counted = dict(texts) if whole else bert_pretokenized_counts(texts)  # type: ignore[arg-type]
        if vocab_size is None:
            raise InputError("recipe 'wordpiece-score' needs a size: vocab_size (CLI --vocab-size)")
        with classic.progress_bar(show_progress, None) as bar:
            tokens, merges = train_wordpiece_score(counted, vocab_size=vocab_size, special_tokens=specials,
                                                   progress=bar.update)
        return ClassicModel(recipe, tokens, merges, special_tokens={s: tokens.index(s) for s in specials},
                            provenance=provenance)

    # 2. Symbols as the recipe sees them, then the merge loop.
    def run(words: list, counts: list[int], tie_break: str, initial: int) -> list[tuple[str, str]]:
        if not words:
            raise InputError("the corpus is empty: it yielded no word to learn from")
        merges = _size(recipe, vocab_size, num_merges, initial)
        with classic.progress_bar(show_progress, merges) as bar:
            return classic.learn(words, counts, num_merges=merges, tie_break=tie_break, min_frequency=min_freq,
                                 progress=bar.update)

    if recipe in ("sennrich-paper", "subword-nmt"):
        words, counts = (classic.words_paper if recipe == "sennrich-paper" else classic.words_subword_nmt)(texts)
        alphabet = list(dict.fromkeys(s for w in words for s in w))
        pairs = run(words, counts, "first-seen" if recipe == "sennrich-paper" else "largest-pair", len(alphabet))
        if recipe == "subword-nmt" and not merges_stay_exact(words, pairs):
            # A word holds a tab, U+00A0, ... and learn-bpe's regex merge step matches across it: its loop, ported.
            with classic.progress_bar(show_progress, None) as bar:
                pairs = learn_like_subword_nmt(dict(zip(words, counts)), min_frequency=min_freq, progress=bar.update,
                                               num_merges=_size(recipe, vocab_size, num_merges, len(alphabet)))
        return _from_pairs(recipe, alphabet, pairs, {}, provenance)
    if recipe == "hf-course":
        if whole:
            raw, counts = [w.encode("utf-8") for w in texts], list(texts.values())  # type: ignore[union-attr]
        else:
            raw, counts = classic.words_regex(texts, "gpt2")
        words = [tuple(token_to_str(bytes([b])) for b in w) for w in raw]
        alphabet = sorted({s for w in words for s in w})
        pairs = run(words, counts, "first-seen", len(specials) + len(alphabet))
        return _from_pairs(recipe, specials + alphabet, pairs, specials, provenance)
    return _train_ids(recipe, list(texts), specials, vocab_size, num_merges, show_progress, provenance)


def _from_pairs(recipe: str, initial: list[str], pairs: list[tuple[str, str]], specials: list[str],
                provenance: dict[str, Any]) -> ClassicModel:
    """Build a model of string symbols: ids in order of first appearance, a merge's text reusing its id."""
    ids = {t: i for i, t in enumerate(initial)}
    tokens = list(initial)
    merges = []
    for a, b in pairs:
        # A side may be new too: subword-nmt's regex merge step can fuse three symbols into one (subword_nmt_loop).
        for text in (a, b, a + b):
            if text not in ids:
                ids[text] = len(tokens)
                tokens.append(text)
        merges.append((ids[a], ids[b], ids[a + b]))
    return ClassicModel(recipe, tokens, merges, special_tokens={s: ids[s] for s in specials}, provenance=provenance)


def _train_ids(recipe: str, texts: list[str], specials: list[str], vocab_size: int | None, num_merges: int | None,
               show_progress: bool, provenance: dict[str, Any]) -> ClassicModel:
    """The id-based recipes (minbpe, rasbt): each merge takes the next id, even when its text exists."""
    if recipe.startswith("minbpe"):
        # 1. minbpe: ids are byte values; sequences are whole texts or GPT-4 pre-tokens.
        tokens = [bytes([b]) for b in range(256)]
        if recipe == "minbpe-basic":
            sequences = [np.frombuffer(t.encode("utf-8"), np.uint8) for t in texts]
            counts = [1] * len(sequences)
        else:
            words, counts = classic.words_regex(texts, "gpt4")
            sequences = [np.frombuffer(w, np.uint8) for w in words]
        spell = [token_to_str(t) for t in tokens]
    else:
        # 2. rasbt: characters; chr(0..255), then other characters seen (sorted), then "Ġ", then specials.
        if recipe == "rasbt-simple":
            # Every space becomes "Ġ", except one at position 0, which the notebook drops.
            pieces = [t[1:].replace(" ", "Ġ") if t[:1] == " " else t.replace(" ", "Ġ") for t in texts]
        else:
            counted: dict[str, int] = {}
            for text in texts:
                for token in rasbt_pretokenize(text):
                    counted[token] = counted.get(token, 0) + 1
            pieces = list(counted)
        spell = [chr(i) for i in range(256)]
        spell += sorted(set().union(*map(set, pieces)) - set(spell))
        if "Ġ" not in spell:
            spell.append("Ġ")
        spell += [s for s in specials if s not in spell]
        index = {c: i for i, c in enumerate(spell)}
        sequences = [_char_ids(p, index) for p in pieces]
        counts = [1] * len(pieces) if recipe == "rasbt-simple" else list(counted.values())
        tokens = [s.encode("utf-8") for s in spell]
    if not any(len(s) for s in sequences):
        raise InputError("the corpus is empty: it yielded no text to learn from")
    merges_wanted = _size(recipe, vocab_size, num_merges, len(spell))
    with classic.progress_bar(show_progress, merges_wanted) as bar:
        vocab, merges = classic.learn_ids(sequences, counts, tokens, num_merges=merges_wanted, progress=bar.update)
    if recipe.startswith("minbpe"):
        names = [token_to_str(t) for t in vocab]
    else:
        names = [t.decode("utf-8") for t in vocab]
    return ClassicModel(recipe, names, merges, special_tokens={s: spell.index(s) for s in specials},
                        provenance=provenance)


def _char_ids(text: str, index: dict[str, int]) -> np.ndarray:
    """Map characters to ids: code points below 256 are their own id (rasbt's chr(0..255)), the few others looked up.

    >>> _char_ids("aĠb", {"Ġ": 256}).tolist()
    [97, 256, 98]
    """
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    high = codes >= 256
    others = np.unique(codes[high])
    table = np.array([index[chr(c)] for c in others.tolist()], dtype=np.int32)
    ids = codes.copy()
    ids[high] = table[np.searchsorted(others, codes[high])]
    return ids
