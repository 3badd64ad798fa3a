"""Write the `transformers` config files of a tokenizer folder.

A folder written by hf_bpe holds ``vocab.json``, ``merges.txt`` and ``tokenizer.json`` beside the two files made
here: ``tokenizer_config.json`` (read by ``from_pretrained``: the tokenizer class, the pre-tokenizer options, the
special tokens with their roles) and ``special_tokens_map.json`` (the roles again, for older loaders). The same
folder then loads as ``HFBPETokenizer``, as ``PreTrainedTokenizerFast`` and, for the GPT-2 pattern, as
``GPT2TokenizerFast``. By default the config names ``PreTrainedTokenizerFast``, so that ``AutoTokenizer`` loads the
folder with the same ids for everyone, under transformers 4.x and 5.x, with or without hf_bpe; naming
``HFBPETokenizer`` is the explicit choice (``AutoTokenizer`` then builds hf_bpe's class, and transformers 4.x
refuses the folder where hf_bpe is not imported).

This module never imports `transformers` (importing it costs over a second).

>>> files = tokenizer_config_files(special_tokens={"<|endoftext|>": 256}, pattern="gpt2", add_prefix_space=False,
...                                ignore_merges=False, roles={"eos_token": "<|endoftext|>"})
>>> sorted(files)
['special_tokens_map.json', 'tokenizer_config.json']
>>> import json
>>> config = json.loads(files["tokenizer_config.json"])
>>> config["tokenizer_class"], config["eos_token"], config["added_tokens_decoder"]["256"]["special"]
('PreTrainedTokenizerFast', '<|endoftext|>', True)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ..core.specials import check_special_ids

# json and gpt2 (with the compiled _spelling) are imported where files are written or read: a model built by
# training checks its roles here (check_roles) and loads neither before it saves.

__all__ = [
    "check_added_contents",
    "check_roles",
    "load_tokenizer_config",
    "read_tokenizer_config_all",
    "ROLES",
    "SENTENCEPIECE_CLASS",
    "SHARING_TOKENIZER_CLASS",
    "TOKENIZER_CLASS",
    "TOKENIZER_CLASSES",
    "TOKENIZER_CONFIG_FILE",
    "SPECIAL_TOKENS_MAP_FILE",
    "tokenizer_config",
    "tokenizer_config_files",
    "render_config_files",
    "special_tokens_map",
    "dumps",
    "folder_tokenizer_class",
    "read_tokenizer_config",
]

# hf_bpe's own class: named only when asked for (save(tokenizer_class=...), --tokenizer-class HFBPETokenizer).
TOKENIZER_CLASS = "HFBPETokenizer"
# The class a folder names by default: transformers 4.x and 5.x both load it from tokenizer.json without hf_bpe
# (4.x's AutoTokenizer refuses a tokenizer_class it does not know; 5.x falls back to the fast tokenizer).
SHARING_TOKENIZER_CLASS = "PreTrainedTokenizerFast"
TOKENIZER_CLASSES = (TOKENIZER_CLASS, SHARING_TOKENIZER_CLASS)
# hf_bpe's class for SentencePiece folders: what a folder without tokenizer.json names, or asked for explicitly
# (integrations/sentencepiece_hf.py writes those folders).
SENTENCEPIECE_CLASS = "HFSentencePieceTokenizer"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"
# The named special-token roles of transformers (PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES), in its order.
ROLES: tuple[str, ...] = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_ADDED_TOKEN_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def dumps(obj: Any) -> str:
    """Serialize a config as transformers' ``save_pretrained`` does (sorted keys, indent 2, UTF-8, final newline).

    >>> dumps({"b": 1, "a": [True]})
    '{\\n  "a": [\\n    true\\n  ],\\n  "b": 1\\n}\\n'
    """
    import json

    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _added_token_entry(content: str) -> dict[str, Any]:
    # transformers' AddedToken.__getstate__ for a special token as tokenizers' trainer creates it.
    return {"content": content, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True}


def tokenizer_config(
    *,
    special_tokens: Mapping[str, int],
    pattern: str,
    add_prefix_space: bool,
    ignore_merges: bool,
    roles: Mapping[str, str] = MappingProxyType({}),
    tokenizer_class: str = SHARING_TOKENIZER_CLASS,
) -> dict[str, Any]:
    """Build the ``tokenizer_config.json`` content of an hf_bpe folder (``added_tokens_decoder`` keyed by int).

    Args:
        special_tokens: special token strings to ids (the model's specials).
        pattern: the pre-tokenizer pattern name or regex (``BPEModel.pattern``).
        add_prefix_space: ``BPEModel.add_prefix_space``.
        ignore_merges: ``BPEModel.ignore_merges``.
        roles: transformers roles to special tokens, e.g. ``{"eos_token": "<|endoftext|>"}``; every role value must
            be one of ``special_tokens``. Specials without a role are listed as ``additional_special_tokens``
            (transformers 5 reads it as ``extra_special_tokens``; transformers 4 wants a dict under that name).
        tokenizer_class: the class ``AutoTokenizer`` builds: ``"PreTrainedTokenizerFast"`` (the default: the fast
            tokenizer of ``tokenizer.json``, same ids, under transformers 4.x and 5.x, with or without hf_bpe) or
            ``"HFBPETokenizer"`` (hf_bpe's class; the folder then loads only where hf_bpe is imported).

    Returns:
        The config, with every one of the seven roles present (``None`` when unset) so that loaders with role
        defaults (``GPT2TokenizerFast`` defaults three roles to ``<|endoftext|>``) do not invent tokens.

    Raises:
        TypeError: on arguments of the wrong type.
        ValueError: on an unknown role or a role naming a token that is not a special token, or an unknown
            ``tokenizer_class``.

    >>> c = tokenizer_config(special_tokens={"<s>": 0}, pattern="gpt2", add_prefix_space=True, ignore_merges=False)
    >>> c["additional_special_tokens"], c["bos_token"], c["add_prefix_space"]
    (['<s>'], None, True)
    """
    check_special_ids(special_tokens)
    if not isinstance(pattern, str) or not pattern:
        raise TypeError(f"pattern must be a non-empty str (a hf_bpe.PATTERNS name or a regex), got {pattern!r}")
    if not isinstance(add_prefix_space, bool) or not isinstance(ignore_merges, bool):
        raise TypeError(f"add_prefix_space and ignore_merges must be bool, got {add_prefix_space!r}, {ignore_merges!r}")
    check_roles(roles, special_tokens)
    if tokenizer_class not in TOKENIZER_CLASSES:
        raise ValueError(f"tokenizer_class must be one of {list(TOKENIZER_CLASSES)!r}, got {tokenizer_class!r:.80}; "
                         f"use {SHARING_TOKENIZER_CLASS!r} for a folder that loads without hf_bpe")
    by_id = sorted(special_tokens.items(), key=lambda item: item[1])
    config: dict[str, Any] = {
        "add_prefix_space": add_prefix_space,
        "added_tokens_decoder": {idx: _added_token_entry(text) for text, idx in by_id},
        "errors": "replace",
        "ignore_merges": ignore_merges,
        "pattern": pattern,
        "tokenizer_class": tokenizer_class,
    }
    for role in ROLES:
        config[role] = roles.get(role)
    named = set(roles.values())
    extra = [text for text, _ in by_id if text not in named]
    if extra:
        config["additional_special_tokens"] = extra
    return config


def check_roles(roles: object, special_tokens: Mapping[str, int]) -> dict[str, str]:
    """Check roles (``{"eos_token": "<|endoftext|>"}``) against the special tokens; return them as a dict.

    Raises:
        TypeError: when ``roles`` is not a mapping.
        ValueError: on an unknown role or a role naming a token that is not a special token.

    >>> check_roles({"eos_token": "</s>"}, {"</s>": 2})
    {'eos_token': '</s>'}
    """
    if not isinstance(roles, Mapping):
        raise TypeError(f"roles must be a mapping like {{'eos_token': '<|endoftext|>'}}, got {roles!r:.80}")
    for role, token in roles.items():
        if role not in ROLES:
            raise ValueError(f"unknown special-token role {role!r}; expected one of {list(ROLES)!r}")
        if token not in special_tokens:
            raise ValueError(
                f"role {role!r} names {token!r}, which is not one of the special tokens {sorted(special_tokens)!r}; "
                "add it to special_tokens first"
            )
    return dict(roles)


def special_tokens_map(config: Mapping[str, Any]) -> dict[str, Any]:
    """Derive ``special_tokens_map.json`` (the legacy roles file) from a ``tokenizer_config.json`` dict.

    Roles map to the token's full ``AddedToken`` state (without ``special``, as transformers 4 wrote it); the
    specials without a role are ``additional_special_tokens``.

    >>> special_tokens_map(tokenizer_config(special_tokens={"<s>": 0, "</s>": 1}, pattern="gpt2",
    ...     add_prefix_space=False, ignore_merges=False, roles={"eos_token": "</s>"}))["eos_token"]["content"]
    '</s>'
    """
    entries = {entry["content"]: entry for entry in config.get("added_tokens_decoder", {}).values()}

    def legacy(content: str) -> dict[str, Any]:
        entry = dict(entries.get(content) or _added_token_entry(content))
        entry.pop("special", None)
        return entry

    result: dict[str, Any] = {role: legacy(config[role]) for role in ROLES if config.get(role)}
    extra = config.get("additional_special_tokens") or config.get("extra_special_tokens") or []
    if isinstance(extra, Mapping):  # transformers 4's named extra tokens
        extra = list(extra.values())
    if extra:
        result["additional_special_tokens"] = [legacy(str(token)) for token in extra]
    return result


def render_config_files(config: Mapping[str, Any]) -> dict[str, str]:
    """Render a ``tokenizer_config.json`` dict and its derived ``special_tokens_map.json`` as file texts.

    ``HFBPETokenizer.save_pretrained`` and :func:`tokenizer_config_files` both write through this function, so a
    folder written by one reloads and re-saves byte for byte.
    """
    normalized = dict(config)
    if "added_tokens_decoder" in normalized:
        # Int keys sort numerically (2 before 10) as transformers writes them; JSON gives them back as str.
        normalized["added_tokens_decoder"] = {
            int(idx): {flag: entry[flag] for flag in ("content", *_ADDED_TOKEN_FLAGS) if flag in entry}
            for idx, entry in normalized["added_tokens_decoder"].items()
        }
    return {TOKENIZER_CONFIG_FILE: dumps(normalized), SPECIAL_TOKENS_MAP_FILE: dumps(special_tokens_map(normalized))}


def tokenizer_config_files(
    *,
    special_tokens: Mapping[str, int],
    pattern: str,
    add_prefix_space: bool,
    ignore_merges: bool,
    roles: Mapping[str, str] = MappingProxyType({}),
    tokenizer_class: str = SHARING_TOKENIZER_CLASS,
) -> dict[str, str]:
    """Return the texts of ``tokenizer_config.json`` and ``special_tokens_map.json`` for an hf_bpe folder.

    The arguments are those of :func:`tokenizer_config`. The texts equal what ``HFBPETokenizer.save_pretrained``
    writes for the tokenizer loaded from the folder, so save/load round trips are lossless.

    >>> files = tokenizer_config_files(special_tokens={}, pattern="gpt2", add_prefix_space=False, ignore_merges=False)
    >>> files["special_tokens_map.json"]
    '{}\\n'
    """
    return render_config_files(
        tokenizer_config(special_tokens=special_tokens, pattern=pattern, add_prefix_space=add_prefix_space,
                         ignore_merges=ignore_merges, roles=roles, tokenizer_class=tokenizer_class)
    )


# The keys of tokenizer_config.json through which hf_bpe records its pre-tokenizer.
PRETOKENIZER_KEYS = ("pattern", "add_prefix_space", "ignore_merges")


def read_tokenizer_config(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, int]]:
    """Read what a ``tokenizer_config.json`` says about the model: hf_bpe's pre-tokenizer options and the specials.

    Returns:
        ``(options, specials)``: the keys of :data:`PRETOKENIZER_KEYS` that the file has, and the
        ``added_tokens_decoder`` entries as content -> id.

    Raises:
        ValueError: naming the file, when it is not UTF-8 JSON holding an object, or ``added_tokens_decoder`` is not
            a mapping of ids to ``{"content": ...}`` entries.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tokenizer_config.json"
    >>> _ = p.write_text('{"pattern": "gpt4", "added_tokens_decoder": {"7": {"content": "<s>"}}}', encoding="utf-8")
    >>> read_tokenizer_config(p)
    ({'pattern': 'gpt4'}, {'<s>': 7})
    """
    return read_tokenizer_config_all(path)[1:]


def read_tokenizer_config_all(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """Read a ``tokenizer_config.json``: ``(the whole object, options, specials)`` (see :func:`read_tokenizer_config`).

    Raises:
        ValueError: as :func:`read_tokenizer_config`.
    """
    config = load_tokenizer_config(path)
    name = os.fspath(path)
    options = {key: config[key] for key in PRETOKENIZER_KEYS if key in config}
    decoder = config.get("added_tokens_decoder") or {}
    try:
        entries = [(int(idx), entry["content"]) for idx, entry in decoder.items()]
    except (AttributeError, TypeError, KeyError, ValueError):
        raise ValueError(f"{name!r}: added_tokens_decoder must map ids to {{'content': ...}} entries") from None
    return config, options, check_added_contents(entries, f"{name!r}: added_tokens_decoder")


def check_added_contents(entries: Iterable[tuple[int, object]], what: str) -> dict[str, int]:
    """Check ``(id, content)`` pairs of an ``added_tokens_decoder``; return content -> id.

    Every content must be a non-empty str (an empty token would match everywhere) and name one id only (with two,
    loaders disagree on which id the text encodes to and which token stays special).

    Raises:
        ValueError: naming ``what``, the id(s) and the content.

    >>> check_added_contents([(0, "<pad>"), (1, "<pad>")], "added_tokens_decoder")
    Traceback (most recent call last):
    ...
    ValueError: added_tokens_decoder gives ids 0 and 1 the same content '<pad>'; keep one of the two entries
    """
    specials: dict[str, int] = {}
    for idx, content in entries:
        if not isinstance(content, str) or not content:
            raise ValueError(f"{what}: id {idx} has content {content!r:.80}; an added token needs a non-empty "
                             "string (fix or remove the entry)")
        if content in specials:
            raise ValueError(f"{what} gives ids {specials[content]} and {idx} the same content {content!r:.80}; "
                             "keep one of the two entries")
        specials[content] = idx
    return specials


def load_tokenizer_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``tokenizer_config.json`` and check that it holds a JSON object.

    Raises:
        ValueError: naming the file, when it is not UTF-8, not JSON, or not an object (``[]``, ``null``, ...).
    """
    from .gpt2 import read_json

    name, config = read_json(path, unique_keys=False)
    if not isinstance(config, dict):
        raise ValueError(f"{name!r} must hold a JSON object ({{...}}), got {type(config).__name__} {config!r:.60}; "
                         "fix or delete the file")
    return config


def folder_tokenizer_class(folder: str | os.PathLike[str] | None) -> str:
    """Return the ``tokenizer_class`` to write again for a tokenizer read from ``folder``: the one its config names
    when hf_bpe writes that class, the default (:data:`SHARING_TOKENIZER_CLASS`) otherwise.

    >>> folder_tokenizer_class(None)
    'PreTrainedTokenizerFast'
    """
    if folder is None:
        return SHARING_TOKENIZER_CLASS
    try:
        named = load_tokenizer_config(os.path.join(folder, TOKENIZER_CONFIG_FILE)).get("tokenizer_class")
    except (OSError, ValueError):
        named = None  # no config, or a broken one (what reads the folder reports it)
    return named if named in TOKENIZER_CLASSES else SHARING_TOKENIZER_CLASS
