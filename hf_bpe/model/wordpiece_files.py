"""The `transformers` files of a WordPiece recipe's folder: ``tokenizer.json`` and the configs beside ``vocab.txt``.

A ``vocab.txt`` alone loads in transformers with BERT's defaults (lowercasing, the 100-character word limit) and
``AutoTokenizer`` cannot tell its class; the files made here describe each recipe's own pipeline, so that
``AutoTokenizer``, ``PreTrainedTokenizerFast`` and ``BertTokenizerFast`` give the recipe's ids (``tokenizer(text,
add_special_tokens=False)``; with special tokens, ``[CLS] ... [SEP]`` around them, as BERT's):

* ``wordpiece`` (`tokenizers`' ``WordPieceTrainer``, BERT's setup): ``BertNormalizer`` (``lowercase`` as trained),
  ``BertPreTokenizer``, ``WordPiece`` (``[UNK]``, ``##``, words of at most 100 characters); the config names
  ``BertTokenizer``. Identical everywhere.
* ``wordpiece-score`` (the HF course's chapter 6.6): no normalizer (an identity ``BertNormalizer``),
  ``BertPreTokenizer``, ``WordPiece`` without a word-length limit; the config names ``PreTrainedTokenizerFast``.
  Identical through ``AutoTokenizer`` and ``PreTrainedTokenizerFast`` (transformers 4.x and 5.x) and
  ``BertTokenizerFast`` under 4.x.
  transformers 5's ``BertTokenizer(Fast)`` builds BERT's own normalizer instead of reading it: its ``clean_text``
  removes NUL, U+FFFD and the control and format characters (categories Cc, Cf) other than ``\\t \\n \\r``
  (``\\x08``, ``\\x0c``, ``\\x1f``, ``\\x7f``, ``\\u200b``, ...) before the words are split; where a text holds one,
  its ids differ from the recipe's (``"a\\x08b"``: the course's word ``a\\x08b`` is ``[UNK]``, BERT's is ``ab``;
  ``"x\\x0cy"``: the course's two words, BERT's one).

Everywhere, a special token's spelling in the text (``"[CLS]"``) is that special token for transformers (its added
tokens are matched first), while the recipes' own ``encode`` splits it as text (``[``, ``CL``, ``##S``, ``]``).

>>> import json
>>> files = wordpiece_files(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b"],
...                         ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], scheme="wordpiece", lowercase=False)
>>> sorted(files), json.loads(files["tokenizer_config.json"])["tokenizer_class"]
(['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json'], 'BertTokenizer')
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["wordpiece_files"]

# The role each of BERT's special tokens has in transformers.
_ROLES = {"[UNK]": "unk_token", "[SEP]": "sep_token", "[PAD]": "pad_token", "[CLS]": "cls_token",
          "[MASK]": "mask_token"}
_NO_LIMIT = 2**62  # WordPiece's max_input_chars_per_word for the course's encoder, which has none


def wordpiece_files(tokens: Sequence[str], special_tokens: Sequence[str], *, scheme: str,
                    lowercase: bool) -> dict[str, str]:
    """Return ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json`` for a WordPiece recipe.

    Args:
        tokens: the vocabulary, by id (``vocab.txt``'s lines).
        special_tokens: the special tokens (each one of ``tokens``); ``[UNK]`` must be one.
        scheme: ``"wordpiece"`` or ``"wordpiece-score"``.
        lowercase: the ``wordpiece`` recipe's ``lowercase`` (its ``BertNormalizer``).

    Raises:
        ValueError: an unknown scheme, or no ``[UNK]`` among the special tokens.
    """
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    from ..formats.hf_config import dumps

    if scheme not in ("wordpiece", "wordpiece-score"):
        raise ValueError(f"scheme must be 'wordpiece' or 'wordpiece-score', got {scheme!r}")
    if "[UNK]" not in special_tokens:
        raise ValueError(f"a WordPiece folder needs '[UNK]' among its special tokens, got {list(special_tokens)!r}")
    vocab = {token: index for index, token in enumerate(tokens)}
    bert = scheme == "wordpiece"
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##",
                                           max_input_chars_per_word=100 if bert else _NO_LIMIT))
    # wordpiece-score: every BertNormalizer option off is the identity (the course normalizes nothing).
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=bert, handle_chinese_chars=bert, strip_accents=None if bert else False,
        lowercase=lowercase and bert)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    if "[CLS]" in special_tokens and "[SEP]" in special_tokens:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.add_special_tokens(list(special_tokens))
    roles = {_ROLES[token]: token for token in special_tokens if token in _ROLES}
    extra = [token for token in special_tokens if token not in _ROLES]
    # BertTokenizer's options, equal to the normalizer above (transformers 4 rebuilds a normalizer that differs).
    config = {"tokenizer_class": "BertTokenizer" if bert else "PreTrainedTokenizerFast",
              "do_lower_case": lowercase and bert, "strip_accents": None if bert else False,
              "tokenize_chinese_chars": bert, "clean_up_tokenization_spaces": False, **roles}
    if extra:
        config["additional_special_tokens"] = extra
    special_map = {**roles, **({"additional_special_tokens": extra} if extra else {})}
    return {"tokenizer.json": tokenizer.to_str(pretty=True) + "\n", "tokenizer_config.json": dumps(config),
            "special_tokens_map.json": dumps(special_map)}
