"""Convert byte-level BPE tokenizers between tiktoken files, GPT-2 files and ``tokenizer.json``, losslessly.

Three formats, detected from the path (:func:`detect_format`):

* ``"tiktoken"``: a ``.tiktoken`` file (base64 token + rank per line). Ranks are ids and merge priorities; the
  merge list is recovered from them. Special tokens are not part of the format: they live in a
  ``special_tokens.json`` (``{token: id}``) beside the file, which :func:`convert` writes and :func:`load_any` reads.
  The file does not say how text is pre-tokenized either: OpenAI's published files (r50k/p50k/cl100k/o200k_base,
  recognised by their sha256) get their pattern and specials from tiktoken's own definitions; any other needs
  ``pattern=`` (CLI ``--pattern``).
* ``"gpt2"``: ``vocab.json`` + ``merges.txt`` (or ``encoder.json`` + ``vocab.bpe``), with the options of a
  ``tokenizer_config.json`` beside them (hf_bpe's ``"pattern"``, ``add_prefix_space``, ``ignore_merges``,
  ``added_tokens_decoder``) and, for what that does not say, of a ``tokenizer.json`` beside them.
* ``"tokenizers"``: a ``tokenizer.json`` of a byte-level BPE model.

Round trips are exact: tiktoken -> gpt2 -> tiktoken gives the same file byte for byte, gpt2 -> tiktoken -> gpt2 the
same ``vocab.json`` and ``merges.txt`` (for vocabularies whose ids follow merge order; RoBERTa's do not, so it has
no tiktoken form and converting it says so).

>>> import tempfile, pathlib
>>> from hf_bpe.model import BPEModel
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> vocab = {bytes([b]): b for b in range(256)} | {b"ab": 256}
>>> _ = BPEModel(vocab, [(b"a", b"b")], pattern="gpt4").save(folder / "tok")
>>> detect_format(folder / "tok")
'gpt2'
>>> out = convert(folder / "tok", to="tiktoken", out=folder / "tt")
>>> sorted(p.name for p in out.iterdir())
['special_tokens.json', 'tok.tiktoken']
>>> load_any(folder / "tt" / "tok.tiktoken", pattern="gpt4").encode("abab")
[256, 256]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..formats import atomic
from ..formats import tokenizer_json
from ..formats import tiktoken as tiktoken_format
from ..formats import folder, gpt2, hf_config
from ..model.bpe import BPEModel
from ..model.vocab_checks import regular_tokens
from ..core.specials import check_special_ids
from ..core.patterns import PATTERNS
from ..core.pretokenize import Pretokenizer

__all__ = ["FORMATS", "SPECIAL_TOKENS_FILE", "Format", "convert", "detect_format", "load_any"]

Format = Literal["tiktoken", "gpt2", "tokenizers"]
FORMATS: tuple[str, ...] = ("tiktoken", "gpt2", "tokenizers")
SPECIAL_TOKENS_FILE = "special_tokens.json"

_GPT2_PAIRS = folder.GPT2_PAIRS
_TOKENIZER_JSON = "tokenizer.json"
# A .tiktoken line: base64 (or Whisper's lone '=' for the empty token), one space, decimal rank.
_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]*={0,2} [0-9]+\r?$")

# OpenAI's published rank files (sha256 as in tiktoken_ext/openai_public.py, tiktoken 0.14), with the pre-tokenizer
# and the special tokens tiktoken's Encoding gives them. r50k/p50k use GPT-2's pattern (tiktoken's spelling is an
# equivalent, faster one).
_KNOWN_TIKTOKEN: Mapping[str, tuple[str, str, Mapping[str, int]]] = MappingProxyType({
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": ("r50k_base", "gpt2", {"<|endoftext|>": 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": ("p50k_base", "gpt2", {"<|endoftext|>": 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": (
        "cl100k_base", "gpt4",
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|endofprompt|>": 100276},
    ),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": (
        "o200k_base", "o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
})


# ----------------------------------------------------------------------------------------------------------------
# Detection
# ----------------------------------------------------------------------------------------------------------------

def _check_path(value: object, what: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or os.PathLike, got {type(value).__name__} {value!r:.80}")
    return Path(value)


def _looks_like_tiktoken(path: Path) -> bool:
    """Whether the first non-blank line of a file reads ``BASE64 RANK`` (for files without a .tiktoken suffix)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)  # bounded: a file whose first line is 1 GB is not read whole to sniff it
    except OSError:
        return False
    for line in head.split(b"\n"):
        if line.strip():
            return bool(_TIKTOKEN_LINE.match(line))
    return False


def _describe_folder(folder: Path) -> str:
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
    if not names:
        return "it is empty"
    shown = ", ".join(names[:20]) + (f", ... ({len(names)} entries)" if len(names) > 20 else "")
    return f"it holds {shown}"


_EXPECTED = ("expected a .tiktoken file, a folder (or one file of a pair) with vocab.json + merges.txt or "
             "encoder.json + vocab.bpe, a tokenizer.json file or a folder holding one, or a SentencePiece .model file")


def _locate(src: str | os.PathLike[str]) -> tuple[Format, Path]:
    """Return the format and the file that holds it (for GPT-2 files: the vocabulary file)."""
    path = _check_path(src, "src")
    if not path.exists():
        raise FileNotFoundError(f"{os.fspath(src)!r} does not exist; {_EXPECTED}")
    if path.is_dir():
        # 1. A folder: GPT-2 files win over tokenizer.json (they are the hf_bpe/transformers files of the folder).
        for vocab_name, merges_name in _GPT2_PAIRS:
            if (path / vocab_name).is_file() and (path / merges_name).is_file():
                return "gpt2", path / vocab_name
        if (path / _TOKENIZER_JSON).is_file():
            return "tokenizers", path / _TOKENIZER_JSON
        tiktokens = sorted(p for p in path.iterdir() if p.suffix == ".tiktoken" and p.is_file())
        if len(tiktokens) == 1:
            return "tiktoken", tiktokens[0]
        if len(tiktokens) > 1:
            listed = ", ".join(p.name for p in tiktokens)
            raise ValueError(f"{os.fspath(src)!r} holds several .tiktoken files ({listed}); pass the one to convert")
        raise ValueError(f"cannot tell the tokenizer format of the folder {os.fspath(src)!r}: "
                         f"{_describe_folder(path)}; {_EXPECTED}")
    # 2. A file: by name, then by content for tiktoken files without the suffix (e.g. tiktoken's cache files).
    name = path.name
    if path.suffix == ".tiktoken":
        return "tiktoken", path
    if name.endswith(_TOKENIZER_JSON):
        return "tokenizers", path
    for vocab_name, merges_name in _GPT2_PAIRS:
        if name in (vocab_name, merges_name):
            partner = merges_name if name == vocab_name else vocab_name
            if not (path.parent / partner).is_file():
                raise FileNotFoundError(f"{os.fspath(src)!r} is one file of a GPT-2 pair, but {partner!r} is not "
                                        f"beside it in {os.fspath(path.parent)!r}; put both files in one folder")
            return "gpt2", path.parent / vocab_name
    if _looks_like_tiktoken(path):
        return "tiktoken", path
    raise ValueError(f"cannot tell the tokenizer format of the file {os.fspath(src)!r}; {_EXPECTED}")


def detect_format(src: str | os.PathLike[str]) -> Format:
    """Return the tokenizer format at ``src``: ``"tiktoken"``, ``"gpt2"`` or ``"tokenizers"``.

    ``src`` may be a ``.tiktoken`` file (or a file whose first line reads ``BASE64 RANK``); a folder, or one file
    of the pair, with ``vocab.json`` + ``merges.txt`` or ``encoder.json`` + ``vocab.bpe``; a ``tokenizer.json`` or a
    folder holding one; or a folder holding exactly one ``.tiktoken`` file. A folder with both GPT-2 files and a
    ``tokenizer.json`` is ``"gpt2"``.

    Raises:
        TypeError: when ``src`` is not a str or path.
        FileNotFoundError: when ``src`` does not exist, or the partner of a GPT-2 file is missing.
        ValueError: when the format cannot be told; the message lists what the folder holds.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.tiktoken"
    >>> _ = p.write_bytes(b"YQ== 0\\n")
    >>> detect_format(p), detect_format(p.parent)
    ('tiktoken', 'tiktoken')
    """
    return _locate(src)[0]


# ----------------------------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------------------------

def _read_json(path: Path) -> Any:
    return gpt2.read_json(path, unique_keys=False)[1]


def _resolve_pattern(declared: str | None, explicit: str | None, where: str, default: str | None) -> str:
    """Apply the rule: the source's own pattern, else the caller's, else the default (or an error)."""
    if declared is not None:
        if explicit is not None and Pretokenizer(explicit).regex != Pretokenizer(declared).regex:
            raise ValueError(f"{where} declares the pattern {declared!r}, but pattern={explicit!r} was given; "
                             "leave the pattern out to keep the source's, or edit the source")
        return declared
    if explicit is not None:
        Pretokenizer(explicit)  # fail early, with Pretokenizer's message, on an unknown name or a bad regex
        return explicit
    if default is None:
        raise ValueError(f"{where} does not say how text is pre-tokenized (a .tiktoken file holds only ranks); "
                         f"pass the pattern it was made with: pattern= (CLI --pattern), one of {sorted(PATTERNS)} "
                         "or a regex")
    return default


def _load_tiktoken(path: Path, pattern: str | None, extra: Mapping[str, int]) -> BPEModel:
    # 1. Ranks, and what is known about the file: OpenAI's definitions, then the special_tokens.json beside it.
    ranks = tiktoken_format.load_tiktoken(path)
    known = _KNOWN_TIKTOKEN.get(hashlib.sha256(path.read_bytes()).hexdigest())
    specials: dict[str, int] = dict(known[2]) if known else {}
    sidecar = path.parent / SPECIAL_TOKENS_FILE
    if sidecar.is_file():
        specials.update(check_special_ids(_read_json(sidecar), repr(os.fspath(sidecar))))
    specials.update(extra)
    where = f"{os.fspath(path)!r}" + (f" ({known[0]})" if known else "")
    chosen = _resolve_pattern(known[1] if known else None, pattern, where, None)
    # 2. The merge list implied by the ranks. The empty token (Whisper) never merges; a vocabulary cannot hold it.
    try:
        merges = tiktoken_format.merges_from_ranks(ranks)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)!r}: {exc}") from None
    vocab = {token: rank for token, rank in ranks.items() if token}
    # A special may carry the id of its own spelling (GPT-2's <|endoftext|>); the model then holds it once.
    spelled = {idx: text.encode("utf-8") for text, idx in specials.items()}
    vocab = {token: idx for token, idx in vocab.items() if spelled.get(idx) != token}
    try:
        return BPEModel(vocab, merges, special_tokens=specials, pattern=chosen)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)!r}: {exc}") from None


def _load_gpt2(vocab_file: Path, pattern: str | None, extra: Mapping[str, int]) -> BPEModel:
    # The folder's options and specials (tokenizer_config.json, then tokenizer.json), read as every loader reads them.
    merges_file = vocab_file.parent / dict(_GPT2_PAIRS)[vocab_file.name]
    contents = folder.read_folder(vocab_file.parent)
    options = dict(contents.options)
    specials = {**contents.specials, **extra}
    where = f"the files in {os.fspath(vocab_file.parent)!r}"
    options["pattern"] = _resolve_pattern(options.get("pattern"), pattern, where, "gpt2")
    for key in ("add_prefix_space", "ignore_merges"):
        if not isinstance(options.get(key, False), bool):
            raise ValueError(f"{where}: {key} is {options[key]!r}; expected true or false")
    try:
        # The roles as the folder loads in transformers (GPT2TokenizerFast's defaults for GPT-2 files without a
        # config: <|endoftext|> is bos, eos and unk); an extension or conversion keeps them (issue 33.7).
        if contents.files.get("vocab") == vocab_file:
            return BPEModel(regular_tokens(contents.tokens, contents.merges, specials), contents.merges,
                            special_tokens=specials, roles=contents.roles, **options)
        return BPEModel.from_files(vocab_file, merges_file, special_tokens=specials, roles=contents.roles, **options)
    except ValueError as exc:
        if os.fspath(vocab_file.parent) in str(exc):  # the readers' messages already name the file and line
            raise
        raise ValueError(f"{where}: {exc}") from None


def _load_tokenizer_json(path: Path, pattern: str | None, extra: Mapping[str, int]) -> BPEModel:
    info = tokenizer_json.load_tokenizer_json(path)
    # Entries of model.vocab not spelled in the byte-level alphabet can only be added tokens; the listed added
    # tokens (special or not: tokenizers splits all of them out first) are hf_bpe's special tokens.
    specials = dict(info["others"])
    specials.update({entry["content"]: entry["id"] for entry in info["added_tokens"]})
    specials.update(extra)
    tokens = regular_tokens(info["tokens"], info["merges"], specials)
    chosen = _resolve_pattern(folder.pattern_name(info["pattern_regex"]), pattern, repr(os.fspath(path)), None)
    # A folder's tokenizer.json: the roles its tokenizer_config.json gives (a bare tokenizer.json has none).
    config_file = path.parent / hf_config.TOKENIZER_CONFIG_FILE
    roles = {}
    if path.name == _TOKENIZER_JSON and config_file.is_file():
        roles = folder.config_roles(hf_config.load_tokenizer_config(config_file), specials)
    try:
        return BPEModel(tokens, info["merges"], special_tokens=specials, pattern=chosen, roles=roles,
                        add_prefix_space=info["add_prefix_space"], ignore_merges=info["ignore_merges"])
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)!r}: {exc}") from None


def load_any(
    src: str | os.PathLike[str], *, pattern: str | None = None, special_tokens: Mapping[str, int] | None = None
) -> BPEModel:
    """Load a tokenizer in any of the three formats (see :func:`detect_format`) as a ``BPEModel``.

    Args:
        src: a file or folder.
        pattern: the pre-tokenizer (a name in ``hf_bpe.PATTERNS`` or a regex) when the source does not say; a
            source that does say (``tokenizer_config.json``'s ``"pattern"``, a ``tokenizer.json`` pre-tokenizer, one
            of OpenAI's files) keeps its own, and a different ``pattern`` is an error. GPT-2 files that say nothing
            get ``"gpt2"``; a ``.tiktoken`` file that is not OpenAI's needs it.
        special_tokens: special tokens to add to those the source declares (``{token: id}``; same token: this id).

    Returns:
        The model.

    Raises:
        TypeError: on arguments of the wrong type.
        FileNotFoundError: when ``src`` (or a file it needs) does not exist.
        ValueError: when the format cannot be told, the files are malformed (the message names the file, and the
            line where there is one), the pattern is missing or conflicts with the source's.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bytes.tiktoken"
    >>> _ = p.write_text("".join(f"{__import__('base64').b64encode(bytes([b])).decode()} {b}\\n" for b in range(256)))
    >>> load_any(p, pattern="gpt2", special_tokens={"<|end|>": 256}).encode("hi<|end|>", allowed_special="all")
    [104, 105, 256]
    """
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a name in {sorted(PATTERNS)} or a regex) or None, "
                        f"got {type(pattern).__name__} {pattern!r:.80}")
    extra = {} if special_tokens is None else check_special_ids(special_tokens, "special_tokens")
    kind, path = _locate(src)
    if kind == "tiktoken":
        return _load_tiktoken(path, pattern, extra)
    if kind == "gpt2":
        return _load_gpt2(path, pattern, extra)
    return _load_tokenizer_json(path, pattern, extra)


# ----------------------------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------------------------

def _output_name(located: Path, kind: str) -> str:
    """The stem of the .tiktoken file to write: the source .tiktoken file's stem, or the source folder's name."""
    stem = located.stem if kind == "tiktoken" else located.parent.resolve().name
    stem = re.sub(r"[^\w.+-]", "_", stem).strip(".")
    return stem or "tokenizer"


def _tiktoken_files(model: BPEModel, name: str, where: str) -> dict[str, str]:
    """Return the .tiktoken text (ranks = ids, recovered from the merges) and the special_tokens.json text."""
    vocab = dict(model.vocab)
    try:
        ranks = tiktoken_format.ranks_from_merges(vocab, list(model.merges))
    except ValueError as exc:
        raise ValueError(f"{where} cannot be written as tiktoken ranks: {exc}") from None
    # tiktoken has no prefix space. (ignore_merges needs no check: tiktoken always looks a whole piece up first.)
    if model.add_prefix_space:
        raise ValueError(f"{where} has add_prefix_space=True; tiktoken has no such option, so the .tiktoken file "
                         "would encode differently")
    # tiktoken merges any adjacent pair whose concatenation has a rank; that equals merging by this merge list
    # exactly when the list is the one the ranks imply (merges_from_ranks), e.g. not when a token is listed as
    # a + bc but a + b merges first (the model never makes it, tiktoken would). Checked, so that nothing encodes
    # differently. Vocabularies converted *from* tiktoken with every split listed (Llama 3) fail the check but
    # say ignore_merges (the whole-piece lookup tiktoken always does), so they pass as they are.
    effective: dict[tuple[bytes, bytes], None] = {}
    for merge in model.merges:  # a repeated merge keeps its last position
        effective.pop(merge, None)
        effective[merge] = None
    try:
        implied = tiktoken_format.merges_from_ranks(ranks)
    except ValueError as exc:
        if not model.ignore_merges:
            raise ValueError(
                f"{where} cannot be written as tiktoken ranks without changing how it encodes: {exc}. A vocabulary "
                "made from tiktoken ranks that lists every split of a token (Llama 3) encodes like tiktoken only "
                "with ignore_merges, which its tokenizer_config.json or tokenizer.json must then say"
            ) from None
        implied = list(effective)
    if implied != list(effective) and not model.ignore_merges:
        first = next((i for i, (a, b) in enumerate(zip(implied, effective)) if a != b),
                     min(len(implied), len(effective)))
        listed = list(effective)[first] if first < len(effective) else "no merge"
        raise ValueError(
            f"{where} cannot be written as tiktoken ranks without changing how it encodes: tiktoken merges any pair "
            f"whose concatenation has a rank, and for merge {first} {listed!r} the ranks imply "
            f"{(implied[first] if first < len(implied) else 'no merge')!r} (its token is reached another way, or "
            "not at all, by this merge list)"
        )
    specials = dict(model.special_tokens)
    # Regular tokens that no merge makes (GPT-2's <|endoftext|> when no config marks it special) cannot be ranks
    # (tiktoken would merge into them); written as special tokens they keep their id and spelling.
    for token, idx in vocab.items():
        if token not in ranks:
            try:
                text = token.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{where}: token {token!r} (id {idx}) is made by no merge and is not UTF-8 text, so "
                                 "it can be neither a tiktoken rank nor a special token") from None
            specials.setdefault(text, idx)
    ordered = dict(sorted(specials.items(), key=lambda item: item[1]))
    return {f"{name}.tiktoken": tiktoken_format.dump_tiktoken(ranks),
            SPECIAL_TOKENS_FILE: json.dumps(ordered, ensure_ascii=False, indent=2) + "\n"}


def convert(
    src: str | os.PathLike[str],
    *,
    to: str,
    out: str | os.PathLike[str],
    pattern: str | None = None,
    force: bool = False,
    tokenizer_class: str | None = None,
) -> Path:
    """Convert the tokenizer at ``src`` into the format ``to``, written into the folder ``out``.

    * ``to="gpt2"``: ``vocab.json``, ``merges.txt``, ``tokenizer.json``, ``tokenizer_config.json`` (with the pattern)
      and ``special_tokens_map.json``: the folder loads with ``HFBPETokenizer.from_pretrained`` and
      ``AutoTokenizer.from_pretrained`` (``BPEModel.save``).
    * ``to="tiktoken"``: ``<name>.tiktoken`` (ranks = ids, named after the source file or folder) and
      ``special_tokens.json`` (``{token: id}``; specials are not part of the .tiktoken format).
    * ``to="tokenizers"``: ``tokenizer.json``.

    Files are written all-or-nothing (``hf_bpe.formats.atomic``); other files in ``out`` are left alone.

    Args:
        src: the source file or folder (format detected, see :func:`detect_format`).
        to: ``"gpt2"``, ``"tiktoken"`` or ``"tokenizers"``.
        out: the output folder (created when absent).
        pattern: the pre-tokenizer when the source does not say (see :func:`load_any`).
        force: replace files of the same names in ``out``.
        tokenizer_class: what ``tokenizer_config.json`` names, for the outputs that have one (``to="gpt2"``: as
            ``BPEModel.save``; a SentencePiece ``.model``: as ``save_sentencepiece``); None: their default
            (``PreTrainedTokenizerFast`` where the folder has an exact ``tokenizer.json``).

    Returns:
        The output folder.

    Raises:
        TypeError: on arguments of the wrong type.
        ValueError: on an unknown ``to``, malformed sources, a model the target cannot express (a vocabulary
            whose ids do not follow merge order, or with ``add_prefix_space``, as tiktoken), or a
            ``tokenizer_class`` for an output without ``tokenizer_config.json`` or of the wrong kind.
        FileNotFoundError: when ``src`` does not exist.
        FileExistsError: when an output file exists and ``force`` is false.
    """
    if not isinstance(to, str):
        raise TypeError(f"to must be a str, one of {list(FORMATS)}, got {type(to).__name__} {to!r:.80}")
    if to not in FORMATS:
        raise ValueError(f"to must be one of {list(FORMATS)}, got {to!r}")
    out_path = _check_path(out, "out")
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, got {type(force).__name__} {force!r}")
    source = _check_path(src, "src")
    if tokenizer_class is not None and not isinstance(tokenizer_class, str):
        raise TypeError(f"tokenizer_class must be a str or None, got {type(tokenizer_class).__name__}")
    if source.suffix == ".model" and source.is_file():
        return _convert_sentencepiece(source, to, out_path, force, tokenizer_class)
    if tokenizer_class is not None and to != "gpt2":
        raise ValueError(f"tokenizer_class names the class in tokenizer_config.json, which to={to!r} does not write "
                         "for a byte-level tokenizer; convert with to='gpt2' (vocab.json, merges.txt, "
                         "tokenizer.json and the configs)")
    kind, located = _locate(src)
    model = load_any(src, pattern=pattern)
    if to == "gpt2":
        return model.save(out_path, force=force, tokenizer_class=tokenizer_class or hf_config.SHARING_TOKENIZER_CLASS)
    if to == "tiktoken":
        files = _tiktoken_files(model, _output_name(located, kind), repr(os.fspath(src)))
    else:
        files = {_TOKENIZER_JSON: model.files()[_TOKENIZER_JSON]}
    return atomic.replace_folder(out_path, files, force=force)


def _convert_sentencepiece(path: Path, to: str, out: Path, force: bool, tokenizer_class: str | None) -> Path:
    """A SentencePiece BPE or unigram ``.model`` as an exact Hugging Face folder (``tokenizer.json`` and configs, and the
    model itself as ``tokenizer.model``): see :mod:`hf_bpe.integrations.sentencepiece_hf`."""
    from ..formats.sentencepiece_model import SentencePieceModel
    from ..integrations.sentencepiece_hf import folder_class, sentencepiece_files

    if to != "tokenizers":
        raise ValueError(f"a SentencePiece model converts only to 'tokenizers' (a tokenizer.json folder), not {to!r}: "
                         "its pieces are not byte-level BPE, so it has no GPT-2 or tiktoken form")
    data = path.read_bytes()  # read once: parsed here, written unchanged as tokenizer.model
    model = SentencePieceModel.read(data, os.fspath(path))
    folder_class(model, tokenizer_class)  # a class of the wrong kind: its own error, not "cannot be converted"
    try:
        files = sentencepiece_files(model, data, tokenizer_class=tokenizer_class)
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)!r} cannot be converted exactly: {exc}") from None
    return atomic.replace_folder(out, files, force=force)
