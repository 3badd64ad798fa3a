"""The named recipes and what each fixes: a table the CLI reads without importing the trainers (and numpy).

>>> RECIPES["subword-nmt"].min_frequency
2
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["BERT_SPECIAL_TOKENS", "RECIPES", "Recipe"]

# BERT's special tokens, in the order its vocab.txt lists them (the wordpiece recipe's defaults).
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Recipe(NamedTuple):
    """What a named recipe fixes: its tie-break, whether it counts merges, and its defaults.

    A NamedTuple, not a dataclass: ``dataclasses`` imports ``inspect`` (~10 ms), paid by every ``hf-bpe`` command.
    """

    source: str
    counts_merges: bool
    min_frequency: int = 0
    default_specials: tuple[str, ...] = ()
    takes_specials: bool = False


RECIPES: Mapping[str, Recipe] = {
    "sennrich-paper": Recipe("Sennrich et al. 2016, 'Neural Machine Translation of Rare Words with Subword Units'",
                             counts_merges=True),
    "subword-nmt": Recipe("rsennrich/subword-nmt learn_bpe.py (0.3.8)", counts_merges=True, min_frequency=2),
    "hf-course": Recipe("Hugging Face course, chapter 6.5 'Byte-Pair Encoding tokenization'", counts_merges=False,
                        default_specials=("<|endoftext|>",), takes_specials=True),
    "minbpe-basic": Recipe("karpathy/minbpe BasicTokenizer", counts_merges=True),
    "minbpe-regex": Recipe("karpathy/minbpe RegexTokenizer (GPT-4 split pattern)", counts_merges=True),
    "rasbt-simple": Recipe("rasbt/LLMs-from-scratch ch02/05 bpe-from-scratch-simple.ipynb", counts_merges=False,
                           default_specials=("<|endoftext|>",), takes_specials=True),
    "rasbt": Recipe("rasbt/LLMs-from-scratch ch02/05 bpe-from-scratch.ipynb", counts_merges=False,
                    default_specials=("<|endoftext|>",), takes_specials=True),
    "wordpiece": Recipe("tokenizers WordPieceTrainer with BertNormalizer and BertPreTokenizer (BERT cased)",
                        counts_merges=False, default_specials=BERT_SPECIAL_TOKENS, takes_specials=True),
    "wordpiece-score": Recipe("Hugging Face course, chapter 6.6 'WordPiece tokenization' (the likelihood score)",
                              counts_merges=False, default_specials=BERT_SPECIAL_TOKENS, takes_specials=True),
}
