"""Read and write ``tokenizer.json`` for byte-level BPE, exactly as `tokenizers`' ``Tokenizer.to_str()`` writes it.

The pre-tokenizer is written as `tokenizers` needs it: GPT-2's ``ByteLevel`` for the default pattern, else a
``Split`` whose regex is spelled for Oniguruma (:func:`hf_bpe.core.patterns.to_oniguruma`) before a
``ByteLevel(use_regex=false)``, with a ``Metaspace`` step for ``add_prefix_space``.

>>> import json
>>> doc = json.loads(dump_tokenizer_json({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"b")]))
>>> doc["model"]["merges"], doc["pre_tokenizer"]["type"]
([['a', 'b']], 'ByteLevel')
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..core import _spelling
from ..core.bytelevel import token_to_str
from ..core.patterns import from_oniguruma, to_oniguruma
from ..errors import excerpt
from .gpt2 import (
    VocabLayout,
    check_utf8,
    lay_out_vocab,
    merge_parts,
    merge_parser,
    parse_json,
    read_text,
    render_vocab_json,
    split_vocab,
    to_json,
)

__all__ = ["check_pattern", "dump_tokenizer_json", "load_tokenizer_json", "render_tokenizer_json"]

_EMPTY: Mapping[str, int] = MappingProxyType({})


def dump_tokenizer_json(
    tokens: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    *,
    special_tokens: Mapping[str, int] = _EMPTY,
    pattern_regex: str | None = None,
    add_prefix_space: bool = False,
    ignore_merges: bool = False,
    unk_token: str | None = None,
    fuse_unk: bool = False,
) -> str:
    """Render a ``tokenizer.json`` that `tokenizers` loads and that encodes exactly like hf_bpe.

    The text equals ``tokenizers.Tokenizer.from_str(text).to_str()`` (compact JSON) when the merges have no repeats.
    Layout: model BPE (no dropout, no unk, ``merges`` as ``[a, b]`` pairs, vocabulary = ``vocab.json``'s entries),
    ``added_tokens`` = the specials (special, not normalized, no strip), normalizer null, post-processor and decoder
    ByteLevel as in GPT-2's own ``tokenizer.json``.

    Pre-tokenizer:

    * ``pattern_regex=None`` (GPT-2's pattern): ``ByteLevel(add_prefix_space, trim_offsets=true, use_regex=true)``.
    * otherwise ``Sequence[Split(Regex(pattern), "isolated"), ByteLevel(add_prefix_space=false, use_regex=false)]``
      as in Llama 3 / Qwen2, the pattern rewritten by :func:`to_oniguruma` where Oniguruma would read it differently
      (cl100k's ``\\p{N}{1,3}+``, ``$``). With ``add_prefix_space=True`` a ``Metaspace(replacement=" ",
      prepend_scheme="always", split=false)`` comes first: it prepends ``" "`` to each non-empty piece of text
      between special tokens that does not start with ``" "`` and changes nothing else (it replaces ``" "`` with
      ``" "``) -- ByteLevel's own semantics. ``ByteLevel(add_prefix_space=true)`` after ``Split`` would instead
      prefix every split.

    Args:
        tokens: id -> token bytes (regular tokens).
        merges: the merges in rank order; every part and every merged result must be in the vocabulary.
        special_tokens: special token name -> id; written to the vocabulary and to ``added_tokens``.
        pattern_regex: the pre-tokenization regex, or None for GPT-2's.
        add_prefix_space: prepend a space to text that does not start with one.
        ignore_merges: emit a pre-token that is a whole vocabulary entry without merging (Llama 3).

    Returns:
        The JSON text (write it as UTF-8).

    Raises:
        TypeError: on wrongly typed arguments.
        ValueError: on invalid vocabularies (see :func:`dump_vocab_json`), a merge whose part or result is not in
            the vocabulary, or a pattern that `regex` or `tokenizers` (Oniguruma) cannot compile.

    >>> import json
    >>> doc = json.loads(dump_tokenizer_json({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"b")]))
    >>> doc["model"]["merges"], doc["pre_tokenizer"]["type"]
    ([['a', 'b']], 'ByteLevel')
    """
    # 1. validate the scalar options first: they are cheap and their errors are the most common.
    for name, flag in (("add_prefix_space", add_prefix_space), ("ignore_merges", ignore_merges)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__} {flag!r}")
    split_regex = None if pattern_regex is None else check_pattern(pattern_regex)

    # 2. vocabulary (id order) and merges.
    lefts, rights = merge_parts(merges)
    return render_tokenizer_json(lay_out_vocab(tokens, special_tokens), lefts, rights, special_tokens=special_tokens,
                                 split_regex=split_regex, add_prefix_space=add_prefix_space,
                                 ignore_merges=ignore_merges, unk_token=unk_token, fuse_unk=fuse_unk)


def render_tokenizer_json(
    layout: VocabLayout,
    lefts: list[bytes],
    rights: list[bytes],
    *,
    special_tokens: Mapping[str, int],
    split_regex: str | None,
    add_prefix_space: bool,
    ignore_merges: bool,
    unk_token: str | None,
    fuse_unk: bool,
) -> str:
    """Render :func:`dump_tokenizer_json`'s text from the laid-out vocabulary and the merges' parts
    (``gpt2.lay_out_vocab``, ``gpt2.merge_parts``) and the pre-tokenizer's regex as :func:`check_pattern` returns it
    (None: GPT-2's).

    Raises:
        ValueError: for a merge whose part or result is not in the vocabulary.
    """
    # 1. Each merge checked against the vocabulary as tokenizers would: in bulk, then merge by merge to name one.
    has = layout.present.__contains__
    if not (all(map(has, lefts)) and all(map(has, rights)) and all(map(has, map(bytes.__add__, lefts, rights)))):
        for rank, (a, b) in enumerate(zip(lefts, rights)):
            for part, what in ((a, "left part"), (b, "right part"), (a + b, "merged result")):
                if part not in layout.present:
                    raise ValueError(f"merge {rank} {(a, b)!r}: its {what} {token_to_str(part)!r} is not in the "
                                     "vocabulary (tokenizers refuses such a model); add the token or drop the merge")

    # 2. the pipeline; key order is the one tokenizers serializes, so the text is stable through from_str/to_str.
    specials = sorted((idx, name) for name, idx in special_tokens.items())
    added_tokens = [
        {"id": idx, "content": name, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for idx, name in specials
    ]
    if split_regex is None:
        pre_tokenizer: dict[str, Any] = {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
                                         "trim_offsets": True, "use_regex": True}
    else:
        steps: list[dict[str, Any]] = []
        if add_prefix_space:
            steps.append({"type": "Metaspace", "replacement": " ", "prepend_scheme": "always", "split": False})
        steps.append({"type": "Split", "pattern": {"Regex": split_regex}, "behavior": "Isolated", "invert": False})
        steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False})
        pre_tokenizer = {"type": "Sequence", "pretokenizers": steps}
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        # GPT-2's tokenizer.json has exactly these two; the post-processor only touches offsets (trim_offsets false).
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk_token,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": fuse_unk,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
        },
    }
    # 3. The text: "model" is the document's last key, and "vocab" and "merges" the model's last two; they are
    # rendered in compiled code and spliced in, the rest by json.
    head = to_json(document)
    vocab = render_vocab_json(layout)  # vocab.json's text: tokenizers writes the same object in both files
    return f'{head[:-2]},"vocab":{vocab},"merges":{_spelling.merges_json(lefts, rights)}}}}}'



def check_pattern(pattern: object) -> str:
    """Validate a Python-`regex` pattern and return its Oniguruma spelling (see :func:`to_oniguruma`)."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern_regex must be a str or None, got {type(pattern).__name__} {pattern!r}")
    if not pattern:
        raise ValueError("pattern_regex is empty (''); pass None for GPT-2's pattern or a non-empty regex")
    check_utf8(pattern, "pattern_regex")
    import regex

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"pattern_regex {pattern!r} does not compile with the regex module: {exc}") from None
    translated = to_oniguruma(pattern)
    # tokenizers compiles with Oniguruma; fail here rather than when the file is loaded.
    try:
        from tokenizers import Regex
    except ImportError:  # pragma: no cover - tokenizers is a dependency; without it nothing can be checked
        return translated
    try:
        Regex(translated)
    except Exception as exc:  # tokenizers raises a bare Exception for Oniguruma errors
        raise ValueError(f"pattern_regex {pattern!r} does not compile in tokenizers (Oniguruma) as "
                         f"{translated!r}: {exc}") from None
    return translated



def _pre_tokenizer_options(name: str, pre: object) -> tuple[str | None, bool]:
    """Map a pre_tokenizer JSON to (pattern_regex, add_prefix_space), or explain why hf_bpe cannot express it."""

    def unsupported(why: str) -> ValueError:
        return ValueError(f"{name!r}: pre_tokenizer {json.dumps(pre)[:300]} is not supported: {why}; hf_bpe "
                          "supports ByteLevel(use_regex=true) or [Metaspace(' ', always, split=false)?, "
                          "Split(Regex, isolated), ByteLevel(add_prefix_space=false, use_regex=false)]")

    if not isinstance(pre, dict):
        raise unsupported("expected a JSON object")
    steps = pre.get("pretokenizers") if pre.get("type") == "Sequence" else [pre]
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise unsupported("a Sequence needs a list 'pretokenizers' of objects")
    types = [s.get("type") for s in steps]
    if types == ["ByteLevel"]:
        (step,) = steps
        if not step.get("use_regex", True):
            raise unsupported("ByteLevel without a regex does not split text into pre-tokens")
        return None, bool(step.get("add_prefix_space", True))
    add_prefix_space = False
    if types[:1] == ["Metaspace"]:
        meta = steps[0]
        if meta.get("replacement") != " " or meta.get("prepend_scheme") != "always" or meta.get("split") is not False:
            raise unsupported("only Metaspace(replacement=' ', prepend_scheme='always', split=false) is a prefix space")
        add_prefix_space = True
        steps, types = steps[1:], types[1:]
    if types != ["Split", "ByteLevel"]:
        raise unsupported(f"unexpected sequence of steps {types}")
    split, level = steps
    pattern = split.get("pattern")
    if not isinstance(pattern, dict) or not isinstance(pattern.get("Regex"), str):
        raise unsupported("the Split pattern must be a Regex")
    try:
        python_pattern = from_oniguruma(pattern["Regex"])
    except ValueError as exc:
        raise unsupported(str(exc)) from None
    if split.get("behavior") != "Isolated" or split.get("invert", False):
        raise unsupported("the Split must be behavior 'Isolated', invert false")
    if level.get("use_regex", True):
        raise unsupported("ByteLevel after Split must have use_regex false")
    if level.get("add_prefix_space", True):
        raise unsupported("ByteLevel(add_prefix_space=true) after Split prefixes every split, not each text")
    return python_pattern, add_prefix_space


def load_tokenizer_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a BPE ``tokenizer.json`` that hf_bpe can reproduce.

    Args:
        path: the file.

    Returns:
        A dict with ``tokens`` (dict[bytes, int], the byte-level entries of ``model.vocab``), ``others``
        (dict[str, int], the other entries), ``merges`` (list[tuple[bytes, bytes]], from either spelling:
        ``"a b"`` strings or ``["a", "b"]`` pairs), ``added_tokens`` (list of the file's dicts), ``ignore_merges``
        (bool), ``pattern_regex`` (the Split regex read with :func:`from_oniguruma`, so that Python's `regex`
        splits as `tokenizers` does; None for GPT-2's pattern) and ``add_prefix_space`` (bool).

    Raises:
        FileNotFoundError: when the file does not exist.
        ValueError: naming the file: not UTF-8/JSON, ``model.type`` not ``"BPE"``, malformed vocabulary or merges,
            a merge outside the vocabulary, or a feature hf_bpe does not reproduce (normalizer, byte fallback,
            dropout, subword prefix/suffix, a pre-tokenizer other than the ones :func:`dump_tokenizer_json` writes).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tokenizer.json"
    >>> _ = p.write_text(dump_tokenizer_json({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"b")]), encoding="utf-8")
    >>> info = load_tokenizer_json(p)
    >>> info["merges"], info["pattern_regex"], info["add_prefix_space"]
    ([(b'a', b'b')], None, False)
    """
    name, text = read_text(path)
    doc = parse_json(name, text)
    # 1. the model.
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise ValueError(f"{name!r} is not a tokenizer.json: expected a JSON object with a 'model' object")
    model = doc["model"]
    if model.get("type") != "BPE":
        raise ValueError(f"{name!r}: model type is {excerpt(model.get('type'))}, expected 'BPE'; hf_bpe only reads "
                         "byte-level BPE tokenizers")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"{name!r}: model.dropout is {excerpt(model['dropout'])}; hf_bpe encodes without dropout "
                         "(null)")
    if model.get("byte_fallback", False):
        raise ValueError(f"{name!r}: model.byte_fallback is true; hf_bpe reads byte-level BPE, not byte fallback")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ValueError(f"{name!r}: model.{key} is {excerpt(model[key])}; hf_bpe supports none (null or '')")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise ValueError(f"{name!r}: model.ignore_merges is {excerpt(ignore_merges)}; expected true or false")
    unk_token, fuse_unk = model.get("unk_token"), model.get("fuse_unk", False)
    if unk_token is not None and not isinstance(unk_token, str) or not isinstance(fuse_unk, bool):
        raise ValueError(f"{name!r}: model.unk_token {excerpt(unk_token)} / fuse_unk {excerpt(fuse_unk)}; expected "
                         "a string or null, and true or false")
    tokens, others = split_vocab(name, "model.vocab", model.get("vocab"))

    # 2. merges, in either spelling.
    raw_merges = model.get("merges", [])
    if not isinstance(raw_merges, list):
        raise ValueError(f"{name!r}: model.merges must be a list, got {type(raw_merges).__name__}")
    parse = merge_parser(name, tokens, "model.merges[{}]")
    merges: list[tuple[bytes, bytes]] = []
    for rank, item in enumerate(raw_merges):
        parts = item.split(" ") if type(item) is str else item
        if type(parts) is not list or len(parts) != 2 or type(parts[0]) is not str or type(parts[1]) is not str \
                or not parts[0] or not parts[1]:
            raise ValueError(f"{name!r}: model.merges[{rank}] is {excerpt(item)}; expected \"A B\" or [\"A\", \"B\"] "
                             "with two non-empty tokens")
        merges.append(parse(parts[0], parts[1], rank))

    # 3. added tokens.
    added = doc.get("added_tokens", [])
    if not isinstance(added, list):
        raise ValueError(f"{name!r}: added_tokens must be a list, got {type(added).__name__}")
    for position, entry in enumerate(added):
        if (not isinstance(entry, dict) or not isinstance(entry.get("content"), str)
                or isinstance(entry.get("id"), bool) or not isinstance(entry.get("id"), int) or entry["id"] < 0):
            raise ValueError(f"{name!r}: added_tokens[{position}] is {excerpt(entry)}; expected an object with an "
                             "integer 'id' >= 0 and a string 'content'")

    # 4. the text pipeline.
    if doc.get("normalizer") is not None:
        raise ValueError(f"{name!r}: normalizer {json.dumps(doc['normalizer'])[:200]} is not supported; hf_bpe "
                         "encodes the raw text (normalizer null)")
    pattern_regex, add_prefix_space = _pre_tokenizer_options(name, doc.get("pre_tokenizer"))
    return {
        "tokens": tokens,
        "others": others,
        "merges": merges,
        "added_tokens": added,
        "ignore_merges": ignore_merges,
        "pattern_regex": pattern_regex,
        "add_prefix_space": add_prefix_space,
        "unk_token": unk_token,
        "fuse_unk": fuse_unk,
    }
