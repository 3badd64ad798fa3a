"""A SentencePiece BPE or unigram model as a ``tokenizers`` pipeline that encodes like ``sentencepiece``.

Unigram models (``model_type=unigram``) become tokenizers' ``Unigram`` model (the pieces and scores in id order,
the unknown id, ``byte_fallback``) behind the same normalizer, special tokens and decoder as BPE below. What
``Unigram`` cannot reproduce: user-defined symbols (sentencepiece scores them ``0.1 * bytes - 0.1`` in its
Viterbi) and UNUSED pieces (sentencepiece skips them) -- such models get no ``tokenizer.json``
(:func:`tokenizer_json_blocker`), ``HFSentencePieceTokenizer`` encodes them exactly; ``Unigram`` also looks up the
spelling of control, unknown and byte pieces in the text (``"<s>"`` in a text is the BOS id there, characters in
``sentencepiece``), and adds path scores in float64 where sentencepiece adds float32, so that of two segmentations
of the *same* score (a run of one repeated character: ``"□" + "□□□□"`` against ``"□□□□" + "□"``) it may keep the
other one (tests/test_unigram_convert.py measures and pins both; ``HFSentencePieceTokenizer`` is exact).

SentencePiece's BPE encoder (``bpe_model.cc``) starts from the characters of the normalized text (user-defined
symbols matched first and frozen), repeatedly merges the adjacent pair whose concatenation is a piece with the
highest score (ties: the leftmost pair), then maps each symbol to its piece, its UTF-8 bytes (``byte_fallback``)
or ``<unk>`` (runs of unknowns fused). Its normalizer (``normalizer.cc``) applies the precompiled charsmap, drops
leading and trailing spaces and collapses runs (``remove_extra_whitespaces``), prepends ``▁`` (``add_dummy_prefix``)
and writes spaces as ``▁``. The ``tokenizers`` equivalent built here:

- normalizer: ``Precompiled(charsmap)``; ``Replace(" {2,}", " ")`` and ``Replace("\\A | \\z", "")`` (U+0020 only,
  as SentencePiece: ``Strip`` would also remove tabs and newlines); ``Prepend("▁")``; ``Replace(" ", "▁")``;
- no pre-tokenizer (SentencePiece merges over the whole text);
- BPE: every split ``piece = left + right`` of a mergeable piece into two mergeable pieces is a merge, ranked by the
  piece's score (descending). Pieces of equal score would be ranked by position in SentencePiece and by rank here,
  which differ in general; the one such group real models have, Llama 2's runs of ``▁`` (all at -1e9), gives the
  same result when the splits with the longer left side come first (a run then fills pieces of at most 16 from the
  left, as SentencePiece does; checked for every run length). Models with other ties are refused;
- control symbols (and ``<unk>``) as special added tokens that are not matched in text
  (``tokenizer.encode_special_tokens = True`` here, ``"split_special_tokens": true`` in ``tokenizer_config.json``):
  ``sentencepiece`` encodes ``"<s>"`` in a text as characters. Models with user-defined symbols get no
  ``tokenizer.json`` (SentencePiece copies them unnormalized and matches them again after the dummy prefix is added,
  ``tokenizers``' added tokens match once, before it): ``HFSentencePieceTokenizer`` encodes them exactly;
- decoder: ``▁`` → space, byte pieces → bytes, the dummy prefix's space removed.

One difference is ``tokenizers``' own: its ``Precompiled`` replaces a grapheme by the form of the grapheme's
*shortest* prefix the charsmap knows, where SentencePiece takes the longest (``"ｓ\u0301"`` gives ``"s"`` here,
``"ś"`` in SentencePiece), so text holding such combining sequences can encode differently through
``tokenizer.json``; ``HFSentencePieceTokenizer`` normalizes as SentencePiece
(:mod:`hf_bpe.core.sentencepiece_normalize`).

>>> from hf_bpe.formats.sentencepiece_model import Piece, SentencePieceModel
>>> pieces = [Piece("<unk>", 0, 2), Piece("▁", -4, 1), Piece("a", -5, 1), Piece("b", -6, 1), Piece("▁a", -1, 1),
...           Piece("▁ab", -2, 1)]
>>> bpe = {"model_type": 2, "byte_fallback": False, "treat_whitespace_as_suffix": False}
>>> tok = sentencepiece_tokenizer(SentencePieceModel(tuple(pieces), trainer=bpe))
>>> tok.encode("ab a").tokens
['▁ab', '▁a']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..formats.hf_config import SENTENCEPIECE_CLASS, SHARING_TOKENIZER_CLASS
from ..training.sentencepiece.normalizer import SPACE, sentencepiece_normalizer
from ..formats.sentencepiece_model import CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, SentencePieceModel

__all__ = ["NO_TOKENIZER_JSON", "SENTENCEPIECE_CLASS", "SENTENCEPIECE_CLASSES", "check_expressible", "folder_class",
           "missing_tokenizer_json", "save_sentencepiece", "sentencepiece_config", "tokenizer_json_blocker",
           "sentencepiece_files", "sentencepiece_merges", "sentencepiece_tokenizer", "user_symbols"]


def user_symbols(model: SentencePieceModel) -> list[str]:
    """The model's user-defined symbols (which ``sentencepiece`` copies unnormalized and never splits)."""
    return [p.piece for p in model.pieces if p.type == USER_DEFINED]


def check_expressible(model: SentencePieceModel, *, user_symbols_ok: bool = False) -> None:
    """Raise ValueError naming what a ``tokenizers`` pipeline cannot reproduce exactly in ``model``
    (``user_symbols_ok``: except what ``HFSentencePieceTokenizer`` encodes itself: user-defined symbols, and a
    unigram model's UNUSED pieces)."""
    if model.model_type not in ("bpe", "unigram"):
        why = {"char": "a char model splits text into single characters, with no merges",
               "word": "a word model keeps whole whitespace-separated words"}.get(model.model_type, "")
        raise ValueError(f"this is a SentencePiece {model.model_type} model; it does not convert exactly to a "
                         f"tokenizers pipeline ({why + ': ' if why else ''}not supported here)")
    if not user_symbols_ok and (blocker := _suffix_blocker(model)):
        raise ValueError(blocker)
    if model.model_type == "unigram":
        if not user_symbols_ok and (blocker := _unigram_blocker(model)):
            raise ValueError(blocker)
        return
    if any(p.type == UNUSED for p in model.pieces):
        raise ValueError("the model has UNUSED pieces, which SentencePiece merges and then splits again; a tokenizers "
                         "BPE model cannot express that")
    user = user_symbols(model)
    if user and not user_symbols_ok:
        listed = ", ".join(map(repr, user[:3])) + (", ..." if len(user) > 3 else "")
        raise ValueError(f"the model has user-defined symbols ({listed}),"
                         " which SentencePiece matches in the normalized text after the dummy prefix; tokenizers' "
                         "added tokens match before it (the leading '▁' would be lost): not supported yet")
    ties: dict[float, list[str]] = {}
    for piece in model.pieces:
        if piece.type == NORMAL and len(piece.piece) > 1:
            ties.setdefault(piece.score, []).append(piece.piece)
    for score, group in ties.items():
        if len(group) > 1 and not all(set(p) == {SPACE} for p in group):
            raise ValueError(f"pieces {sorted(group)[:4]!r} share the score {score!r}: SentencePiece breaks such ties "
                             "by position in the text, which a ranked merge list cannot express")


def _unigram_blocker(model: SentencePieceModel) -> str | None:
    """Why tokenizers' ``Unigram`` cannot encode this unigram model as sentencepiece does, or None."""
    user = user_symbols(model)
    if user:
        listed = ", ".join(map(repr, user[:3])) + (", ..." if len(user) > 3 else "")
        return (f"the model has user-defined symbols ({listed}), which SentencePiece copies unnormalized and scores "
                "0.1 * bytes - 0.1 in its Viterbi; tokenizers' Unigram has no such pieces")
    if any(p.type == UNUSED for p in model.pieces):
        return ("the model has UNUSED pieces, which SentencePiece's unigram encoder skips; tokenizers' Unigram "
                "would produce them")
    return None


def _suffix_blocker(model: SentencePieceModel) -> str | None:
    """treat_whitespace_as_suffix with the dummy space: what no ``tokenizers`` pipeline expresses, or None."""
    if model.trainer.get("treat_whitespace_as_suffix") and model.normalizer["add_dummy_prefix"]:
        return ("the model has treat_whitespace_as_suffix=true, which appends the dummy '▁' at the end; tokenizers "
                "has no normalizer that appends (its Metaspace cannot express it)")
    return None


def tokenizer_json_blocker(model: SentencePieceModel) -> str | None:
    """Why the converted folder of ``model`` gets no ``tokenizer.json`` (HFSentencePieceTokenizer encodes it
    exactly), or None."""
    if blocker := _suffix_blocker(model):
        return blocker
    if model.model_type == "unigram":
        return _unigram_blocker(model)
    return "the model has user-defined symbols" if user_symbols(model) else None


def sentencepiece_merges(model: SentencePieceModel) -> list[tuple[str, str]]:
    """Return the BPE merges, in rank order, that reproduce SentencePiece's score-ordered merging.

    >>> from hf_bpe.formats.sentencepiece_model import Piece, SentencePieceModel
    >>> sentencepiece_merges(SentencePieceModel((Piece("a", -3, 1), Piece("b", -4, 1), Piece("ab", -1, 1))))
    [('a', 'b')]
    """
    mergeable = {p.piece: i for i, p in enumerate(model.pieces) if p.type == NORMAL}
    ranked = []
    for piece, piece_id in mergeable.items():
        score = model.pieces[piece_id].score
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in mergeable and right in mergeable:
                # Score first; within a piece (and within Llama 2's run-of-▁ tie group) longer left sides first.
                ranked.append((-score, -len(left), piece_id, mergeable[left], mergeable[right], left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def sentencepiece_tokenizer(model: SentencePieceModel, *, user_symbols_ok: bool = False) -> Any:
    """Build the ``tokenizers.Tokenizer`` that encodes exactly as ``sentencepiece`` does with ``model``.

    With ``user_symbols_ok``, a model with user-defined symbols gets a pipeline that knows them as pieces but does
    not match them (the caller splits them off, as ``HFSentencePieceTokenizer`` does).

    Raises:
        ValueError: what the model holds that cannot be expressed exactly (see :func:`check_expressible`).
    """
    from tokenizers import AddedToken, Tokenizer, decoders

    check_expressible(model, user_symbols_ok=user_symbols_ok)
    spec = model.normalizer
    tokenizer = Tokenizer(_unigram_model(model) if model.model_type == "unigram" else _bpe_model(model))
    # 1. Normalizer: normalizer.cc's steps (training.sentencepiece.normalizer).
    tokenizer.normalizer = sentencepiece_normalizer(spec)
    # 2. Decoder: sentencepiece's DecodeIds (the leading space of the dummy prefix dropped).
    parts: list[Any] = [decoders.Replace(SPACE, " ")] if spec["escape_whitespaces"] else []
    parts += [decoders.ByteFallback(), decoders.Fuse()]
    if spec["add_dummy_prefix"]:
        parts.append(decoders.Strip(" ", 1, 0))
    tokenizer.decoder = decoders.Sequence(parts)
    # 3. Control pieces are special tokens, for ids and decoding; sentencepiece never finds them in text.
    tokenizer.add_special_tokens([AddedToken(p.piece, normalized=False, special=True) for p in model.pieces
                                  if p.type in (CONTROL, UNKNOWN)])
    tokenizer.encode_special_tokens = True
    return tokenizer


def _bpe_model(model: SentencePieceModel) -> Any:
    from tokenizers.models import BPE

    vocab = {p.piece: i for i, p in enumerate(model.pieces)}
    unk = next((p.piece for p in model.pieces if p.type == UNKNOWN), None)
    try:
        return BPE(vocab=vocab, merges=sentencepiece_merges(model), unk_token=unk, fuse_unk=True,
                   byte_fallback=bool(model.trainer["byte_fallback"]))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception
        raise ValueError(f"pieces: tokenizers cannot build a BPE model of them ({exc})") from None


def _unigram_model(model: SentencePieceModel) -> Any:
    """tokenizers' ``Unigram`` of a unigram model: the pieces and scores in id order. Its unknown-character score is
    the lowest score of *all* its pieces minus 10, sentencepiece's the lowest NORMAL one's: pieces outside
    sentencepiece's trie (control, unknown, byte; scored 0, never matched there) are given that lowest NORMAL score,
    which keeps the two equal and makes them as unlikely as can be when ``Unigram`` (whose trie holds every piece)
    finds their spelling in a text."""
    from tokenizers.models import Unigram

    lowest = min((p.score for p in model.pieces if p.type == NORMAL), default=0.0)
    vocab = [(p.piece, p.score if p.type in (NORMAL, USER_DEFINED, UNUSED) else lowest) for p in model.pieces]
    unk = next(i for i, p in enumerate(model.pieces) if p.type == UNKNOWN)
    try:
        return Unigram(vocab, unk, bool(model.trainer["byte_fallback"]))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception
        raise ValueError(f"pieces: tokenizers cannot build a Unigram model of them ({exc})") from None


SENTENCEPIECE_CLASSES = (SHARING_TOKENIZER_CLASS, SENTENCEPIECE_CLASS)


def folder_class(model: SentencePieceModel, tokenizer_class: str | None = None) -> str:
    """Return the ``tokenizer_class`` of the folder of ``model``: by default ``PreTrainedTokenizerFast`` where the
    folder has an exact ``tokenizer.json`` (transformers 4.x and 5.x load it without hf_bpe, with sentencepiece's
    ids), ``HFSentencePieceTokenizer`` where it has none (:func:`tokenizer_json_blocker`).

    Raises:
        ValueError: an unknown class, or ``PreTrainedTokenizerFast`` for a model that gets no ``tokenizer.json``.

    >>> from hf_bpe.formats.sentencepiece_model import Piece, SentencePieceModel
    >>> model = SentencePieceModel((Piece("<unk>", 0, 2), Piece("a", -1, 1)), trainer={"model_type": 2})
    >>> folder_class(model), folder_class(model, "HFSentencePieceTokenizer")
    ('PreTrainedTokenizerFast', 'HFSentencePieceTokenizer')
    """
    blocker = tokenizer_json_blocker(model)
    if tokenizer_class is None:
        return SENTENCEPIECE_CLASS if blocker else SHARING_TOKENIZER_CLASS
    if tokenizer_class not in SENTENCEPIECE_CLASSES:
        raise ValueError(f"tokenizer_class must be one of {list(SENTENCEPIECE_CLASSES)!r} for a SentencePiece "
                         f"folder, got {tokenizer_class!r:.80}")
    if tokenizer_class == SHARING_TOKENIZER_CLASS and blocker:
        raise ValueError(f"tokenizer_class {tokenizer_class!r} reads tokenizer.json, which this folder cannot have "
                         f"({blocker}); leave tokenizer_class out (the folder names {SENTENCEPIECE_CLASS!r})")
    return tokenizer_class


def sentencepiece_config(model: SentencePieceModel, *, tokenizer_class: str | None = None) -> dict[str, Any]:
    """Return the ``tokenizer_config.json`` of the converted folder (``tokenizer_class``: see :func:`folder_class`)
    with the model's roles (bos/eos/unk/pad from the trainer spec), adding no special tokens (as
    ``sentencepiece.encode``) and never matching them in text (``split_special_tokens``).
    """
    roles: dict[str, Any] = {}
    for role in ("bos", "eos", "unk", "pad"):
        index = model.trainer[f"{role}_id"]
        if 0 <= index < len(model.pieces) and model.pieces[index].type in (CONTROL, UNKNOWN, USER_DEFINED):
            roles[f"{role}_token"] = model.pieces[index].piece
    return {"tokenizer_class": folder_class(model, tokenizer_class), "add_bos_token": False, "add_eos_token": False,
            "clean_up_tokenization_spaces": False, "split_special_tokens": True,
            "model_max_length": 1000000000000000019884624838656, **roles}


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


NO_TOKENIZER_JSON = ("tokenizer.json left out: the model has user-defined symbols (or, unigram, UNUSED pieces; or "
                     "treat_whitespace_as_suffix=true), which no tokenizers pipeline encodes as sentencepiece does; "
                     "the folder names tokenizer_class HFSentencePieceTokenizer: it loads with "
                     "hf_bpe.HFSentencePieceTokenizer (and AutoTokenizer with hf_bpe imported), which encodes exactly")


def missing_tokenizer_json(folder: str | os.PathLike[str]) -> str | None:
    """:data:`NO_TOKENIZER_JSON` for a SentencePiece folder written without ``tokenizer.json``, else None."""
    folder = Path(folder)
    missing = (folder / "tokenizer.model").is_file() and not (folder / "tokenizer.json").exists()
    return NO_TOKENIZER_JSON if missing else None


def sentencepiece_files(model: SentencePieceModel, source: bytes, *,
                        tokenizer_class: str | None = None) -> dict[str, str | bytes]:
    """The converted folder's files: ``tokenizer.json`` (left out for a model with user-defined symbols:
    :data:`NO_TOKENIZER_JSON`), ``tokenizer_config.json`` (naming ``tokenizer_class``: :func:`folder_class`),
    ``special_tokens_map.json`` and the model itself as ``tokenizer.model``."""
    check_expressible(model, user_symbols_ok=True)
    config = sentencepiece_config(model, tokenizer_class=tokenizer_class)
    roles = {k: v for k, v in config.items() if k.endswith("_token") and isinstance(v, str)}
    files: dict[str, str | bytes] = {"tokenizer_config.json": _json(config), "special_tokens_map.json": _json(roles),
                                     "tokenizer.model": source}
    if tokenizer_json_blocker(model) is None:
        files["tokenizer.json"] = sentencepiece_tokenizer(model).to_str(pretty=True) + "\n"
    return files


def save_sentencepiece(model: SentencePieceModel, directory: str | os.PathLike[str], *, force: bool = False,
                       tokenizer_class: str | None = None) -> Path:
    """Write a SentencePiece BPE or unigram model as a folder: ``tokenizer.model`` (``sentencepiece`` loads it) and
    the ``tokenizer.json`` (not for user-defined symbols, nor a unigram model's UNUSED pieces:
    :data:`NO_TOKENIZER_JSON`), ``tokenizer_config.json`` and ``special_tokens_map.json`` that encode like it, all or
    nothing. Returns the folder.

    Args:
        model: the SentencePiece BPE or unigram model.
        directory: the folder to write (created if missing).
        force: replace existing files.
        tokenizer_class: the class ``tokenizer_config.json`` names for ``AutoTokenizer``. By default
            ``"PreTrainedTokenizerFast"`` when the folder has ``tokenizer.json`` (transformers 4.x and 5.x load it,
            with or without hf_bpe, with sentencepiece's ids), else ``"HFSentencePieceTokenizer"``;
            ``"HFSentencePieceTokenizer"`` (hf_bpe's exact class; the folder then needs hf_bpe imported wherever
            ``AutoTokenizer`` loads it) when given.

    Raises:
        ValueError: the model cannot be expressed exactly as a tokenizer.json (see :func:`check_expressible`), or
            a ``tokenizer_class`` that :func:`folder_class` refuses.
        FileExistsError: the files exist and ``force`` is false.
    """
    from ..formats import atomic

    files = sentencepiece_files(model, model.to_bytes(), tokenizer_class=tokenizer_class)
    return atomic.replace_folder(directory, files, force=force)
