"""Build the ``BPEModel`` behind an ``HFBPETokenizer`` from whatever transformers hands its ``__init__``.

transformers calls the class with the files it found in a folder (``vocab_file``/``merges_file``, and
``tokenizer_file`` for a ``tokenizer.json``), or a user calls it with an in-memory vocabulary (``vocab=``/
``merges=``, transformers 5's constructor of ``GPT2Tokenizer``). Every path ends in the same ``BPEModel`` rules as
``BPEModel.load`` (:mod:`hf_bpe.formats.folder`): which entries are special, which spell bytes, GPT-2's defaults.

>>> from hf_bpe.core.bytelevel import token_to_str
>>> vocab = {token_to_str(bytes([b])): b for b in range(256)} | {"ab": 256, "<|endoftext|>": 257}
>>> kwargs = {"vocab": vocab, "merges": ["a b"]}
>>> model, record = load_model(None, None, kwargs)
>>> dict(model.special_tokens), kwargs["eos_token"], model.encode_ordinary("abab"), record
({'<|endoftext|>': 257}, '<|endoftext|>', [256, 256], None)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from transformers.tokenization_utils_base import AddedToken
from transformers.utils import logging

from ..formats import folder, gpt2, hf_config, manifest, tokenizer_json
from ..model.bpe import BPEModel
from ..model.vocab_checks import regular_tokens

__all__ = ["GPT2_DEFAULT_ROLES", "as_added_token", "check_pretrained_folder", "folder_training_record",
           "load_model", "named_specials"]

logger = logging.get_logger(__name__)

_END = "<|endoftext|>"
# GPT2Tokenizer's and GPT2TokenizerFast's defaults, applied when a GPT-2 vocabulary comes without roles.
GPT2_DEFAULT_ROLES = ("bos_token", "eos_token", "unk_token")
_VOCAB_NAMES = ("vocab.json", "merges.txt")


def load_model(
    vocab_file: str | os.PathLike[str] | None,
    merges_file: str | os.PathLike[str] | None,
    kwargs: dict[str, Any],
    *,
    pattern: str | None = None,
    add_prefix_space: bool | None = None,
    ignore_merges: bool | None = None,
) -> tuple[BPEModel, dict[str, Any] | None]:
    """Return the model and the training record of the folder's manifest (None when there is none).

    ``kwargs`` are the tokenizer's init kwargs: ``vocab``/``merges`` are taken out of it, ``tokenizer_file`` read,
    and GPT-2's default roles put into it, each one the kwargs do not name, for a GPT-2 vocabulary.

    Raises:
        TypeError: when no vocabulary is given, or one of the wrong type.
        ValueError, FileNotFoundError: naming the file or entry that is wrong.
    """
    vocab, merges = kwargs.pop("vocab", None), kwargs.pop("merges", None)
    tokenizer_file = kwargs.get("tokenizer_file")
    # As GPT2TokenizerFast's keyword defaults: each role not given (None counts as given) defaults on its own, so
    # unk_token="<unk>" keeps <|endoftext|> as bos and eos.
    defaulted = [role for role in GPT2_DEFAULT_ROLES if role not in kwargs]
    gpt2_defaults = bool(defaulted)
    wanted = named_specials(kwargs) | ({_END} if gpt2_defaults else set())
    options: dict[str, Any] = {"pattern": pattern, "add_prefix_space": add_prefix_space,
                               "ignore_merges": ignore_merges}
    # GPT2TokenizerFast loads vocabularies without some byte tokens (toy and character-level ones): so do we.
    partial = {"missing_bytes": "allow"}
    record = None
    if vocab is not None or merges is not None:
        model = _from_memory(vocab, merges, wanted, options)
    elif vocab_file is not None and merges_file is not None:
        record = folder_training_record(vocab_file, merges_file)
        model = BPEModel.from_files(vocab_file, merges_file, special_if_present=wanted,
                                    **_with_defaults(options, {}), **partial)
        if model.missing_bytes and tokenizer_file is not None:  # its BPE model may name an unk token
            info = tokenizer_json.load_tokenizer_json(tokenizer_file)
            if info["unk_token"] is not None:
                model = BPEModel(model.vocab, model.merges, special_tokens=model.special_tokens,
                                 pattern=model.pattern, add_prefix_space=model.add_prefix_space,
                                 ignore_merges=model.ignore_merges, missing_bytes="allow",
                                 unk_token=info["unk_token"], fuse_unk=info["fuse_unk"])
    elif tokenizer_file is not None:
        gpt2_defaults = False  # a tokenizer.json declares its own specials; GPT2TokenizerFast is not implied
        info = tokenizer_json.load_tokenizer_json(tokenizer_file)
        specials = {**info["others"], **{entry["content"]: entry["id"] for entry in info["added_tokens"]}}
        declared = {"pattern": folder.pattern_name(info["pattern_regex"]),
                    "add_prefix_space": info["add_prefix_space"], "ignore_merges": info["ignore_merges"]}
        folder.check_merges_present(tokenizer_file, info["merges"], info["tokens"], specials)
        model = BPEModel(regular_tokens(info["tokens"], info["merges"], specials), info["merges"],
                         special_tokens=specials, **_with_defaults(options, declared), **partial,
                         unk_token=info["unk_token"], fuse_unk=info["fuse_unk"])
    else:
        given = vocab_file if merges_file is None else merges_file
        raise TypeError(
            f"HFBPETokenizer needs a vocabulary: vocab_file + merges_file, tokenizer_file, vocab= + merges=, or "
            f"bpe_model=; got only {given!r}. To load a folder use HFBPETokenizer.from_pretrained(folder), which "
            "says which file it lacks"
        )
    if gpt2_defaults and _END in model.special_tokens:
        for role in defaulted:
            kwargs[role] = _END
    return model, record


def _with_defaults(given: dict[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """Options given explicitly win, then what the file declares, then GPT-2's."""
    defaults = {"pattern": "gpt2", "add_prefix_space": False, "ignore_merges": False}
    return {key: given[key] if given[key] is not None else declared.get(key, defaults[key]) for key in defaults}


def _from_memory(vocab: Any, merges: Any, wanted: set[str], options: dict[str, Any]) -> BPEModel:
    # transformers 5's GPT2Tokenizer(vocab=..., merges=...): a dict of byte-level strings (or a path) and a list of
    # "a b" strings or pairs (or a path).
    if isinstance(vocab, str | os.PathLike) and isinstance(merges, str | os.PathLike):
        return BPEModel.from_files(vocab, merges, special_if_present=wanted, **_with_defaults(options, {}),
                                   missing_bytes="allow")
    if isinstance(vocab, list | tuple):
        vocab = _vocab_from_scored_list(vocab)
    if not isinstance(vocab, Mapping) or not isinstance(merges, list | tuple):
        raise TypeError(f"vocab= must be a dict of token strings to ids (or a list of (token, score) pairs, ids "
                        f"being positions) and merges= a list of 'a b' strings or pairs (or both paths), got "
                        f"{type(vocab).__name__} and {type(merges).__name__}")
    tokens, others = gpt2.split_vocab("vocab=", "vocab", dict(vocab))
    parse = gpt2.merge_parser("merges=", tokens, "merges[{}]")
    pairs = []
    for rank, item in enumerate(merges):
        parts = item.split(" ") if isinstance(item, str) else list(item)
        if len(parts) != 2 or not all(isinstance(p, str) and p for p in parts):
            raise ValueError(f"merges[{rank}] is {item!r}; expected 'A B' or ('A', 'B') with two non-empty tokens")
        pairs.append(parse(parts[0], parts[1], rank))
    specials = dict(others)
    for name in wanted:
        idx = others.get(name, tokens.get(name.encode("utf-8")))
        if idx is not None:
            specials[name] = idx
    return BPEModel(regular_tokens(tokens, pairs, specials), pairs, special_tokens=specials,
                    **_with_defaults(options, {}), missing_bytes="allow")


def _vocab_from_scored_list(vocab: list[Any] | tuple[Any, ...]) -> dict[str, int]:
    """Turn ``[(token, score), ...]`` into ``{token: position}``.

    transformers 5 hands a tokenizer class without a ``model`` attribute the vocabulary in this form (its
    extractors' ``vocab_scores``: tokens in id order, the score 0.0 for BPE); the ids are the positions, as in a
    ``tokenizer.json`` list vocabulary.

    >>> _vocab_from_scored_list([("a", 0.0), ("b", 0.0)])
    {'a': 0, 'b': 1}
    """
    result: dict[str, int] = {}
    for idx, item in enumerate(vocab):
        token = item[0] if isinstance(item, list | tuple) and len(item) == 2 else None
        if not isinstance(token, str):
            raise TypeError(f"vocab= must be a dict of token strings to ids or a list of (token, score) pairs; "
                            f"vocab=[{idx}] is {item!r:.80}")
        if token in result:
            raise ValueError(f"vocab= lists {token!r:.80} at positions {result[token]} and {idx}; a token has one id")
        result[token] = idx
    return result


def check_pretrained_folder(path: object) -> None:
    """Before transformers reads a local folder: refuse a config that is not an object and a folder without files.

    transformers itself fails on these with ``AttributeError``/``TypeError`` or passes ``None`` files on.

    Raises:
        ValueError: naming ``tokenizer_config.json`` when it does not hold a JSON object, or its
            ``added_tokens_decoder`` holds an empty token or one text under two ids.
        FileNotFoundError: naming the missing file (the partner of a GPT-2 file, or any tokenizer file).
    """
    if not isinstance(path, str | os.PathLike) or not os.path.isdir(path):
        return
    directory = Path(path)
    config = directory / hf_config.TOKENIZER_CONFIG_FILE
    if config.is_file():
        hf_config.read_tokenizer_config_all(config)  # also refuses empty and duplicate added tokens
    folder.locate_tokenizer_files(directory)


def folder_training_record(
    vocab_file: str | os.PathLike[str], merges_file: str | os.PathLike[str]
) -> dict[str, Any] | None:
    """Return the training record of the manifest beside ``vocab.json`` + ``merges.txt``, or None.

    Only a folder holding both files under their standard names counts: a manifest describes those names.
    An unreadable manifest is logged and ignored (it must not stop the tokenizer from loading).
    """
    vocab_path, merges_path = Path(vocab_file), Path(merges_file)
    if (vocab_path.name, merges_path.name) != _VOCAB_NAMES:
        return None
    directory = vocab_path.parent
    if merges_path.parent != directory or not (directory / manifest.MANIFEST_NAME).is_file():
        return None
    try:
        return manifest.training_record(manifest.load_manifest(directory))
    except (OSError, ValueError) as exc:
        logger.warning(f"ignoring the unreadable {manifest.MANIFEST_NAME} in {os.fspath(directory)!r}: {exc}")
        return None


def named_specials(kwargs: Mapping[str, Any]) -> set[str]:
    """Name the special tokens the config gives (roles, added tokens flagged special).

    ``BPEModel.from_files`` makes vocabulary entries not spelled in the byte-level alphabet special by itself;
    byte-level spelled ones such as ``<|endoftext|>`` are special only when named. A named token the file lacks
    (one added later, saved in ``added_tokens.json``) is skipped there (``special_if_present``).
    """
    names = {str(token) for role in hf_config.ROLES if (token := kwargs.get(role)) is not None}
    for token in (kwargs.get("added_tokens_decoder") or {}).values():
        token = as_added_token(token)
        if token.special:
            names.add(token.content)
    return names


def as_added_token(token: Any) -> AddedToken:
    """Read an ``added_tokens_decoder`` value (an AddedToken, a str, or its dict form)."""
    if isinstance(token, AddedToken):
        return token
    if isinstance(token, str):
        return AddedToken(token, special=True, normalized=False)
    if isinstance(token, Mapping):
        fields = {k: v for k, v in token.items() if k != "__type"}
        return AddedToken(**fields)
    raise TypeError(f"added_tokens_decoder values must be AddedToken, str or dict, got {token!r}")
