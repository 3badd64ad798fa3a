"""Read a tokenizer folder in any of the forms the Hugging Face stack writes, into plain data.

Forms, looked for in this order:

1. GPT-2 files: ``vocab.json`` + ``merges.txt`` (or OpenAI's ``encoder.json`` + ``vocab.bpe``), with what a
   ``tokenizer_config.json`` beside them says (hf_bpe's ``"pattern"``, ``add_prefix_space``, ``ignore_merges``,
   ``added_tokens_decoder``, the roles) and, for what it does not say, what a ``tokenizer.json`` beside them says
   (GPT-2's own folder declares ``<|endoftext|>`` only there);
2. a ``tokenizer.json`` alone (what transformers 5 saves), with the same ``tokenizer_config.json`` rules.

The model layer builds a ``BPEModel`` from the result (``BPEModel.load``); ``hf-bpe convert`` and
``HFBPETokenizer.from_pretrained`` read folders through the same function, so every loader agrees on the specials.

>>> import tempfile, pathlib, json
>>> from hf_bpe.core.bytelevel import token_to_str
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> vocab = {token_to_str(bytes([b])): b for b in range(256)} | {"<|end|>": 256}
>>> _ = (d / "vocab.json").write_text(json.dumps(vocab)); _ = (d / "merges.txt").write_text("#version: 0.2\\n")
>>> _ = (d / "tokenizer_config.json").write_text('{"pattern": "gpt4", "added_tokens_decoder": {"256": {"content": "<|end|>"}}}')
>>> contents = read_folder(d)
>>> contents.form, contents.specials, contents.options
('gpt2', {'<|end|>': 256}, {'pattern': 'gpt4'})
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import patterns
from ..core.patterns import PATTERNS
from ..errors import excerpt
from . import gpt2, hf_config, tokenizer_json

__all__ = ["check_merges_present", "config_roles", "FolderContents", "locate_tokenizer_files", "GPT2_PAIRS",
           "TOKENIZER_JSON", "pattern_name", "read_folder"]

GPT2_PAIRS = (("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe"))
TOKENIZER_JSON = "tokenizer.json"
_GPT2_END = "<|endoftext|>"
_ADDED_LOOK = re.compile(rb"<[^<>]*>|\[[^\[\]]*\]")


@dataclass(frozen=True)
class FolderContents:
    """What a tokenizer folder holds.

    Attributes:
        form: ``"gpt2"`` (GPT-2 files, maybe with a tokenizer.json) or ``"tokenizers"`` (a tokenizer.json alone).
        tokens: the byte-level vocabulary, token bytes -> id (specials that spell bytes included).
        merges: the merges in rank order.
        specials: special (added) token text -> id.
        options: what the folder declares of ``pattern`` (a name in ``PATTERNS`` or a regex), ``add_prefix_space``
            and ``ignore_merges``; keys it does not declare are absent.
        roles: special-token roles (``{"eos_token": "<|endoftext|>"}``) that the config gives to specials; for
            GPT-2 files whose config names no role, ``<|endoftext|>`` (when the vocabulary has it) is special and
            bos/eos/unk, as ``GPT2TokenizerFast`` makes it.
        config: the ``tokenizer_config.json`` object (empty when there is none).
        files: the files read, by role (``vocab``, ``merges``, ``tokenizer``, ``config``).
    """

    form: str
    tokens: dict[bytes, int]
    merges: list[tuple[bytes, bytes]]
    specials: dict[str, int]
    options: dict[str, Any]
    roles: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)


def pattern_name(pattern_regex: str | None) -> str:
    """Map a tokenizer.json Split regex (as ``tokenizer_json`` reads it) back to a ``PATTERNS`` name when it is one.

    >>> pattern_name(None), pattern_name(PATTERNS["gpt4"]), pattern_name(r"\\w+")
    ('gpt2', 'gpt4', '\\\\w+')
    """
    if pattern_regex is None:  # ByteLevel(use_regex=true): GPT-2's pattern
        return "gpt2"
    for name, source in PATTERNS.items():
        if pattern_regex in {source, patterns.from_oniguruma(patterns.to_oniguruma(source))}:
            return name
    return pattern_regex


def _describe(folder: Path) -> str:
    names = sorted(p.name for p in folder.iterdir())
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"it holds {shown}" if names else "it is empty"


def read_folder(directory: str | os.PathLike[str]) -> FolderContents:
    """Read a tokenizer folder (see the module docstring for the forms).

    Args:
        directory: the folder.

    Returns:
        Its contents; nothing is validated beyond the files' own formats (the model checks the whole).

    Raises:
        TypeError: when ``directory`` is not a str or path.
        FileNotFoundError: when it is not a folder, or holds no tokenizer (the message names what is missing).
        ValueError: naming the file (and line where there is one) when a file is malformed, including a
            ``tokenizer_config.json`` that is not a JSON object, and a ``merges.txt`` with no merges beside a
            vocabulary whose tokens need them (a truncated file; `tokenizers` loads it and never uses them).
    """
    if not isinstance(directory, str | os.PathLike):
        raise TypeError(f"directory must be a str or os.PathLike, got {type(directory).__name__} {directory!r:.80}")
    folder = Path(directory)
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is a file, not a folder"
        raise FileNotFoundError(f"{os.fspath(directory)!r} {what}; expected a tokenizer folder (vocab.json + "
                                "merges.txt, or tokenizer.json)")
    # 1. The configuration: options and specials that it declares win over tokenizer.json's.
    config: dict[str, Any] = {}
    options: dict[str, Any] = {}
    specials: dict[str, int] = {}
    files: dict[str, Path] = {}
    config_path = folder / hf_config.TOKENIZER_CONFIG_FILE
    if config_path.is_file():
        config, options, specials = hf_config.read_tokenizer_config_all(config_path)
        files["config"] = config_path
    declares_specials = "added_tokens_decoder" in config
    tokenizer_file = folder / TOKENIZER_JSON

    # 2. GPT-2 files, completed by tokenizer.json; or tokenizer.json alone.
    form, found = locate_tokenizer_files(folder)
    if form == "gpt2":
        vocab_file, merges_file = found
        tokens, others = gpt2.load_vocab_json(vocab_file)
        merges = gpt2.load_merges_txt(merges_file, vocab=tokens)
        files.update(vocab=vocab_file, merges=merges_file)
        # tokenizer.json completes what the config leaves out; a vocabulary without some byte tokens also needs its
        # BPE model's unk_token, which only tokenizer.json holds.
        partial = any(bytes([b]) not in tokens for b in range(256))
        if tokenizer_file.is_file() and (partial or not declares_specials
                                         or not set(hf_config.PRETOKENIZER_KEYS) <= options.keys()):
            info = tokenizer_json.load_tokenizer_json(tokenizer_file)
            files["tokenizer"] = tokenizer_file
            _complete_options(options, info)
            if not declares_specials:
                specials = {entry["content"]: entry["id"] for entry in info["added_tokens"]}
    else:
        info = tokenizer_json.load_tokenizer_json(tokenizer_file)
        files["tokenizer"] = tokenizer_file
        tokens, others, merges = info["tokens"], info["others"], info["merges"]
        _complete_options(options, info)
        # tokenizers splits every added token out first, special or not: all are hf_bpe specials.
        specials = {**{entry["content"]: entry["id"] for entry in info["added_tokens"]}, **specials}
    # Entries of the vocabulary not spelled in the byte-level alphabet can only be added tokens.
    specials = {**others, **specials}
    roles = config_roles(config, specials)
    if form == "gpt2" and not {"bos_token", "eos_token", "unk_token"} & config.keys():
        # GPT2TokenizerFast's defaults: <|endoftext|> is bos, eos and unk when no config says otherwise.
        idx = specials.get(_GPT2_END, tokens.get(_GPT2_END.encode()))
        if idx is not None:
            specials[_GPT2_END] = idx
            roles.update(dict.fromkeys(("bos_token", "eos_token", "unk_token"), _GPT2_END))
    check_merges_present(files.get("merges", tokenizer_file), merges, tokens, specials)
    return FolderContents(form=form, tokens=tokens, merges=merges, specials=specials, options=options,
                          roles=roles, config=config, files=files)


def config_roles(config: dict[str, Any], specials: dict[str, int]) -> dict[str, str]:
    """The roles a config gives to special tokens (an entry may be a str or an AddedToken dict)."""
    roles = {}
    for role in hf_config.ROLES:
        value = config.get(role)
        content = value.get("content") if isinstance(value, dict) else value
        if isinstance(content, str) and content in specials:
            roles[role] = content
    return roles


def locate_tokenizer_files(folder: Path) -> tuple[str, Any]:
    """Return ``("gpt2", (vocab_file, merges_file))`` or ``("tokenizers", tokenizer_file)`` for a folder.

    Raises:
        FileNotFoundError: naming what is missing (a GPT-2 file's partner, or any tokenizer file).
    """
    for vocab_name, merges_name in GPT2_PAIRS:
        if (folder / vocab_name).is_file() and (folder / merges_name).is_file():
            return "gpt2", (folder / vocab_name, folder / merges_name)
    if (folder / TOKENIZER_JSON).is_file():
        return "tokenizers", folder / TOKENIZER_JSON
    present = [name for pair_names in GPT2_PAIRS for name in pair_names if (folder / name).is_file()]
    if present:
        partner = dict(GPT2_PAIRS + tuple((m, v) for v, m in GPT2_PAIRS))[present[0]]
        raise FileNotFoundError(f"{os.fspath(folder)!r} has {present[0]} but not {partner}; GPT-2 files come "
                                f"in pairs: copy {partner} beside it (or add the folder's tokenizer.json)")
    raise FileNotFoundError(f"{os.fspath(folder)!r} holds no tokenizer: expected vocab.json + merges.txt, "
                            f"encoder.json + vocab.bpe or tokenizer.json, but {_describe(folder)}")


def _complete_options(options: dict[str, Any], info: dict[str, Any]) -> None:
    """Fill in the pre-tokenizer options that the config left out from a read tokenizer.json."""
    options.setdefault("pattern", pattern_name(info["pattern_regex"]))
    options.setdefault("add_prefix_space", info["add_prefix_space"])
    options.setdefault("ignore_merges", info["ignore_merges"])
    # The BPE model's own unknown token (what a byte without a token becomes), only ever in tokenizer.json.
    if info["unk_token"] is not None:
        options.setdefault("unk_token", info["unk_token"])
        options.setdefault("fuse_unk", info["fuse_unk"])


def check_merges_present(path: str | os.PathLike[str], merges: list[tuple[bytes, bytes]], tokens: dict[bytes, int],
                         specials: dict[str, int]) -> None:
    """Refuse an empty merge list beside a vocabulary whose tokens need merges (a truncated ``merges.txt``).

    `tokenizers` loads such a pair and never produces those tokens; hf_bpe says so instead.

    Raises:
        ValueError: naming ``path`` and the first token that no merge can make.
    """
    if merges:
        return
    # Tokens spelled like added tokens ("<|endoftext|>", "[PAD]") need no merge.
    longer = [token for token in tokens if len(token) > 1 and not _ADDED_LOOK.fullmatch(token)
              and token.decode("utf-8", "replace") not in specials]
    if longer:
        raise ValueError(
            f"{os.fspath(path)!r} has no merges, but the vocabulary has {len(longer)} tokens of several bytes (first: "
            f"{excerpt(longer[0])}) that only merges can make: the merges are probably truncated or missing; copy the "
            "complete file (a vocabulary of single bytes and added tokens needs no merges)"
        )
