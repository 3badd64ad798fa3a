"""Read and write GPT-2 format vocabularies: ``vocab.json`` and ``merges.txt``.

Tokens are ``bytes`` inside hf_bpe; these files spell them in GPT-2's byte-level alphabet
(:mod:`hf_bpe.core.bytelevel`). The writers produce exactly the bytes that `tokenizers`' ``BPE.save`` writes: compact
JSON in serde_json's style (separators ``,`` and ``:``, UTF-8, only ``"``, ``\\`` and control characters escaped).
The readers accept every variant found in real files and fail with the file name (and line number) on anything else.
The helpers without a leading underscore (``to_json``, ``read_text``, ...) are shared with
:mod:`hf_bpe.formats.tokenizer_json`.

>>> text = dump_vocab_json({0: b"a", 1: b" b", 2: b"a b"}, {"<|endoftext|>": 3})
>>> text
'{"a":0,"Ġb":1,"aĠb":2,"<|endoftext|>":3}'
>>> dump_merges_txt([(b"a", b" b")])
'#version: 0.2\\na Ġb\\n'
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from ..core import _spelling
from ..core.bytelevel import str_to_token, strs_to_tokens, token_to_str
from ..errors import EXCERPT, excerpt

__all__ = [
    "dump_merges_txt",
    "dump_vocab_json",
    "load_merges_txt",
    "load_vocab_json",
    "lay_out_vocab",
    "merge_parts",
    "read_json",
    "read_line_file",
    "render_merges_txt",
    "render_vocab_json",
    "VocabLayout",
]

_MAX_ID = 2**32 - 1  # tokenizers stores ids as u32
_HEADER = "#version: 0.2\n"
_EMPTY: Mapping[str, int] = MappingProxyType({})


# ----------------------------------------------------------------------------------------------------------------
# JSON in serde_json's compact style
# ----------------------------------------------------------------------------------------------------------------

def to_json(value: Any) -> str:
    # Python's encoder with ensure_ascii=False escapes exactly what serde_json escapes: '"', '\\', \b \f \n \r \t
    # in short form and the other controls < U+0020 as \u00xx (lowercase hex, like serde); DEL, U+2028/2029 and all
    # non-ASCII characters are written raw. Lone surrogates cannot happen: every str is validated as UTF-8 first.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ----------------------------------------------------------------------------------------------------------------
# Validation of the in-memory inputs of the writers
# ----------------------------------------------------------------------------------------------------------------

def check_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value <= _MAX_ID:
        raise ValueError(f"{what} must be in 0..{_MAX_ID} (tokenizers stores ids as u32), got {value!r}")
    return value


def check_utf8(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text!r} contains a lone surrogate and cannot be written as UTF-8; "
                         "remove it or pass a valid Unicode string") from None


class VocabLayout(NamedTuple):
    """A vocabulary checked and laid out for the writers: its entries in id order.

    ``keys[i]`` is a regular token's bytes (spelled when written) or a special token's name as a JSON string literal;
    ``present`` holds the bytes of every token the written vocabulary spells (regular tokens, and the specials whose
    names are byte-level spellings), to check merges against.
    """

    keys: list[bytes | str]
    ids: list[int]
    present: frozenset[bytes]


def lay_out_vocab(tokens: Mapping[int, bytes], special_tokens: Mapping[str, int]) -> VocabLayout:
    """Check the union of regular and special tokens and lay it out in id order (see :class:`VocabLayout`).

    >>> layout = lay_out_vocab({1: b" ", 0: b"a"}, {"<s>": 2})
    >>> layout.keys, layout.ids, sorted(layout.present)
    ([b'a', b' ', '"<s>"'], [0, 1, 2], [b' ', b'<s>', b'a'])
    """
    if not isinstance(tokens, Mapping):
        raise TypeError(f"tokens must be a mapping id -> bytes, got {type(tokens).__name__} {tokens!r:.80}")
    if not isinstance(special_tokens, Mapping):
        raise TypeError(f"special_tokens must be a mapping str -> id, got {type(special_tokens).__name__} "
                        f"{special_tokens!r:.80}")
    ids, raw = list(tokens), list(tokens.values())
    # 1. The common case checked in bulk, in C loops (entry by entry cost ~10 ms per save of 32,000 tokens); the
    # loop names the first bad entry otherwise.
    if not (set(map(type, ids)) <= {int} and set(map(type, raw)) <= {bytes} and all(raw)
            and (not ids or (min(ids) >= 0 and max(ids) <= _MAX_ID))):
        for idx, token in tokens.items():
            check_id(idx, "a token id")
            if not isinstance(token, bytes):
                raise TypeError(f"token {idx} must be bytes, got {type(token).__name__} {token!r}; "
                                "encode str tokens with .encode('utf-8')")
            if not token:
                raise ValueError(f"token {idx} is empty (b''); every token must have at least one byte")
        raw = [bytes(token) for token in raw]  # bytes subclasses: the writers take exact bytes
    entries: dict[int, bytes | str] = dict(zip(ids, raw))
    # 2. A spelling may appear once: JSON objects cannot hold the same key twice and tokenizers maps str -> id.
    # Spelling is one-to-one on bytes, so two regular tokens collide exactly when their bytes are equal.
    if len(set(raw)) != len(raw):
        seen: dict[bytes, int] = {}
        for idx, token in zip(ids, raw):
            if token in seen:
                raise _same_spelling(seen[token], idx, token_to_str(token))
            seen[token] = idx
    # 3. The specials; one that shares its id with a regular token replaces it: one entry, the special's spelling.
    special_owner: dict[int, str] = {}
    for name, idx in special_tokens.items():
        if not isinstance(name, str):
            raise TypeError(f"special token names must be str, got {type(name).__name__} {name!r}")
        if not name:
            raise ValueError("special token name is empty (''); give every special token a non-empty name")
        check_utf8(name, "special token")
        check_id(idx, f"the id of special token {name!r}")
        if idx in special_owner:
            raise ValueError(f"special tokens {special_owner[idx]!r} and {name!r} share id {idx}; "
                             "give each special token its own id")
        special_owner[idx] = name
        entries[idx] = name
    present = {token for token in entries.values() if type(token) is bytes}
    for name, idx in special_tokens.items():
        try:
            spelled = str_to_token(name)
        except ValueError:
            continue  # not a byte-level spelling: it cannot equal a regular token's
        owner = next((i for i, token in entries.items() if token == spelled), None) if spelled in present else None
        if owner is not None and owner != idx:
            raise _same_spelling(min(owner, idx), max(owner, idx), name)
        present.add(spelled)
    order = sorted(entries)
    keys = [entries[i] for i in order]
    for i, key in enumerate(keys):
        if type(key) is str:
            keys[i] = to_json(key)
    return VocabLayout(keys, order, frozenset(present))


def _same_spelling(first: int, second: int, text: str) -> ValueError:
    return ValueError(f"ids {first} and {second} are both spelled {text!r}; every token must be unique (a special "
                      "token may only share the id of its own spelling)")


def check_merges(merges: Sequence[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(f"merges must be a sequence of (bytes, bytes) pairs, got {type(merges).__name__} "
                        f"{merges!r:.80}")
    given = list(merges)  # read once: `merges` may be an iterator
    # The common case checked in bulk, in C loops; the loop below names the first bad merge otherwise.
    if set(map(type, given)) <= {tuple} and set(map(len, given)) <= {2}:
        parts = [part for pair in given for part in pair]
        if set(map(type, parts)) <= {bytes} and all(parts):
            return given
    out: list[tuple[bytes, bytes]] = []
    for rank, pair in enumerate(given):
        if type(pair) is tuple and len(pair) == 2 and type(pair[0]) is bytes and type(pair[1]) is bytes \
                and pair[0] and pair[1]:
            out.append(pair)  # the common case, checked in one go
            continue
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"merge {rank} must be a pair (bytes, bytes), got {pair!r}")
        left, right = pair
        if not isinstance(left, bytes) or not isinstance(right, bytes):
            raise TypeError(f"merge {rank} must be a pair of bytes, got {pair!r}")
        if not left or not right:
            raise ValueError(f"merge {rank} has an empty part: {pair!r}; both parts need at least one byte")
        out.append((left, right))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------------------------------

def dump_vocab_json(tokens: Mapping[int, bytes], special_tokens: Mapping[str, int] = _EMPTY) -> str:
    """Render ``vocab.json`` exactly as `tokenizers`' ``BPE.save`` writes it.

    Entries are in id order; regular tokens are spelled in the byte-level alphabet, special tokens literally.
    Ids may have gaps: `tokenizers` writes the same (it skips missing ids) and, when loading, its vocabulary size
    is the number of entries, not the largest id + 1. No trailing newline (as `tokenizers`).

    Args:
        tokens: id -> token bytes.
        special_tokens: special token name -> id. A special that shares an id with a regular token replaces it
            (one entry, the special's spelling).

    Returns:
        The file's text (write it as UTF-8).

    Raises:
        TypeError: on wrongly typed ids, tokens or names.
        ValueError: on ids outside 0..2**32-1, empty tokens, two specials with one id, or one spelling for two ids.

    >>> dump_vocab_json({0: b"!", 1: b'"', 2: b"\\n"})
    '{"!":0,"\\\\"":1,"Ċ":2}'
    """
    return render_vocab_json(lay_out_vocab(tokens, special_tokens))


def dump_merges_txt(merges: Sequence[tuple[bytes, bytes]]) -> str:
    """Render ``merges.txt`` exactly as `tokenizers`' ``BPE.save`` writes it.

    Args:
        merges: the merges in rank order, each a pair of token bytes. Repeated merges are written as given.

    Returns:
        ``"#version: 0.2\\n"`` followed by one ``"A B\\n"`` line per merge, byte-level spelled.

    Raises:
        TypeError: when ``merges`` is not a sequence of (bytes, bytes) pairs.
        ValueError: when a part is empty.

    >>> dump_merges_txt([(b" ", b"t"), (b" t", b"he")])
    '#version: 0.2\\nĠ t\\nĠt he\\n'
    """
    return render_merges_txt(*merge_parts(merges))


def merge_parts(merges: Sequence[tuple[bytes, bytes]]) -> tuple[list[bytes], list[bytes]]:
    """Check the merges and return their left parts and their right parts.

    >>> merge_parts([(b" ", b"t"), (b" t", b"he")])
    ([b' ', b' t'], [b't', b'he'])
    """
    checked = check_merges(merges)
    return [left for left, _ in checked], [right for _, right in checked]


def render_vocab_json(layout: VocabLayout) -> str:
    """Render ``vocab.json`` from :func:`lay_out_vocab`'s result (in compiled code: one pass over the bytes)."""
    return _spelling.json_object(layout.keys, layout.ids)


def render_merges_txt(lefts: list[bytes], rights: list[bytes]) -> str:
    """Render ``merges.txt`` from :func:`merge_parts`' result."""
    return _HEADER + _spelling.merges_text(lefts, rights)


# ----------------------------------------------------------------------------------------------------------------
# Readers
# ----------------------------------------------------------------------------------------------------------------

def read_text(path: str | os.PathLike[str], *, lines: str | None = None) -> tuple[str, str]:
    """Return (display name, text) of a UTF-8 file; a UTF-8 byte order mark is dropped.

    Args:
        path: the file.
        lines: for a line-based file, what its lines are (e.g. ``"a merges file"``): then no line may be longer
            than :data:`MAX_LINE_BYTES`, checked while reading, so a huge line costs that much memory and no more.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__} {excerpt(path)}")
    name = os.fspath(path)
    data = Path(name).read_bytes() if lines is None else read_line_file(name, lines)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{name!r} is not UTF-8 text: byte {data[exc.start]:#04x} at offset {exc.start} (line {line}, "
                         f"{exc.reason}); model files must be saved as UTF-8") from None
    return name, text.removeprefix("\ufeff")


# The longest line a line-based model file (merges.txt, .tiktoken, subword-nmt codes) may have: 16 MiB. A line is
# one merge (two tokens, each byte spelled in up to 2 UTF-8 bytes) or one base64 token; real files' longest lines
# are under 1 KiB, and a token of 4 MiB would need a corpus with multi-megabyte runs. A longer line means a wrong
# or hostile file, refused after reading this much of it.
MAX_LINE_BYTES = 1 << 24


def read_line_file(name: str, what: str) -> bytes:
    """Return a file's bytes, read line by line, refusing a line longer than MAX_LINE_BYTES (naming its number).

    ``what`` names the file's kind in the error (``"a merges file"``).
    """
    parts = []
    with open(name, "rb") as handle:
        # No line of a file that holds at most MAX_LINE_BYTES is longer than that: one read (50,000 readline calls
        # cost ~13 ms of every GPT-2 load).
        whole = handle.read(MAX_LINE_BYTES + 1)
        if len(whole) <= MAX_LINE_BYTES:
            return whole
        del whole  # memory stays one bounded line at a time
        handle.seek(0)
        number = 0
        while line := handle.readline(MAX_LINE_BYTES + 1):  # each call consumes >= 1 byte: the loop advances
            number += 1
            if len(line) > MAX_LINE_BYTES and not (len(line) == MAX_LINE_BYTES + 1 and line.endswith(b"\n")):
                raise ValueError(f"{name!r}: line {number} is longer than {MAX_LINE_BYTES:,} bytes (it starts "
                                 f"{excerpt(line[:EXCERPT])}); {what} has short lines: is this the right file?")
            parts.append(line)
    return b"".join(parts)


def _no_duplicate_keys(name: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = dict(pairs)  # a C loop; the loop below only runs to name a key given twice
        if len(out) == len(pairs):
            return out
        out = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"{name!r}: key {excerpt(key)} appears twice in one JSON object; each key must be "
                                 "unique")
            out[key] = value
        return out

    return hook


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # the only way JSON text can spell a lone surrogate


def parse_json(name: str, text: str, *, unique_keys: bool = True) -> Any:
    """Parse the JSON text of file ``name``; every error is a ValueError naming the file.

    Refused: invalid JSON, nesting deeper than Python's parser allows (RecursionError otherwise), a lone surrogate
    (``"\\ud800"``, which `tokenizers` refuses too and no UTF-8 file can hold), and with ``unique_keys`` a key twice in
    one object.
    """
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys(name) if unique_keys else None)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name!r} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError(f"{name!r} is not JSON that hf_bpe reads: its arrays or objects are nested deeper than "
                         f"Python's JSON parser allows (about {sys.getrecursionlimit()} levels); model files nest "
                         "a few levels") from None
    if _SURROGATE_ESCAPE.search(text):
        _check_no_lone_surrogate(name, value)
    return value


def _check_no_lone_surrogate(name: str, value: Any) -> None:
    stack = [value]
    while stack:  # each step pops one value and pushes only its children: it ends
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{name!r}: the string {excerpt(item)} holds a lone surrogate "
                                 f"(U+{ord(item[exc.start]):04X}, written as a \\u escape), which is not Unicode "
                                 "text; tokenizers refuses such a file too: fix or regenerate it") from None


def read_json(path: str | os.PathLike[str], *, unique_keys: bool = True) -> tuple[str, Any]:
    """Return (display name, value) of a UTF-8 JSON file, every problem a ValueError naming it (:func:`parse_json`)."""
    name, text = read_text(path)
    return name, parse_json(name, text, unique_keys=unique_keys)


def split_vocab(name: str, where: str, obj: object) -> tuple[dict[bytes, int], dict[str, int]]:
    """Split a JSON vocabulary into byte-level tokens and other entries; check ids."""
    if not isinstance(obj, dict):
        raise ValueError(f"{name!r}: {where} must be a JSON object mapping token -> id, got {type(obj).__name__}")
    # 1. In bulk (C loops): every id an int in range and unique, every key a non-empty alphabet spelling; the
    #    loop below (the same result) runs only to name what is wrong, or to set apart entries that are no spelling.
    keys, ids = list(obj), list(obj.values())
    if (set(map(type, ids)) <= {int} and (not ids or (min(ids) >= 0 and max(ids) <= _MAX_ID))
            and len(set(ids)) == len(ids) and "" not in obj):
        spelled = strs_to_tokens(keys)
        if spelled is not None:
            return dict(zip(spelled, ids)), {}
    # 2. Entry by entry.
    tokens: dict[bytes, int] = {}
    others: dict[str, int] = {}
    owner: dict[int, str] = {}
    for text, idx in obj.items():
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(f"{name!r}: {where} entry {excerpt(text)} has id {excerpt(idx)}; ids must be "
                             "non-negative integers")
        if idx > _MAX_ID:
            raise ValueError(f"{name!r}: {where} entry {excerpt(text)} has id {idx!r}, above {_MAX_ID} (u32 in "
                             "tokenizers)")
        if idx in owner:
            raise ValueError(f"{name!r}: {where} entries {excerpt(owner[idx])} and {excerpt(text)} share id {idx}; "
                             "ids must be unique")
        owner[idx] = text
        try:
            token = str_to_token(text) if text else None
        except ValueError:
            token = None
        if token is None:
            # Not spellable in the byte-level alphabet (space, CJK, '' ...): only usable as an added/special token.
            others[text] = idx
        else:
            tokens[token] = idx
    return tokens, others


def load_vocab_json(path: str | os.PathLike[str]) -> tuple[dict[bytes, int], dict[str, int]]:
    """Read a ``vocab.json`` / ``encoder.json`` (any JSON style).

    Args:
        path: the file.

    Returns:
        ``(tokens, others)``: ``tokens`` maps the bytes of every entry spelled in the byte-level alphabet to its id
        (this includes specials such as ``"<|endoftext|>"``, which are plain ASCII); ``others`` maps the entries
        that are not byte-level spellings (e.g. with a space or CJK, or ``""``) to their id -- those can only be
        added/special tokens.

    Raises:
        FileNotFoundError: when the file does not exist.
        ValueError: naming the file, when it is not UTF-8, not JSON, not an object of str -> non-negative int,
            has a key twice or an id twice.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vocab.json"
    >>> _ = p.write_text('{"Ġa": 0, "<|im start|>": 1}', encoding="utf-8")
    >>> load_vocab_json(p)
    ({b' a': 0}, {'<|im start|>': 1})
    """
    name, value = read_json(path)
    return split_vocab(name, "the vocabulary", value)


def merge_parser(name: str, vocab: Mapping[bytes, int] | None, label: str) -> Any:
    """Return parse(left_text, right_text, index) -> (bytes, bytes); errors say ``label.format(index)``.

    Spellings are memoized (parts repeat a lot: 280k Llama 3 merges use ~128k distinct parts); the error label is
    only formatted on failure. ~1.5 microseconds per merge.
    """
    cache: dict[str, bytes] = {}

    def to_bytes(text: str, index: int) -> bytes:
        try:
            token = str_to_token(text)
        except ValueError as exc:
            raise ValueError(f"{name!r}: {label.format(index)}: {exc}") from None
        cache[text] = token
        return token

    def missing(token: bytes, what: str, index: int) -> ValueError:
        return ValueError(f"{name!r}: {label.format(index)}: the {what} {excerpt(token_to_str(token))} "
                          f"({excerpt(token)}) is not "
                          "in the vocabulary; merges must only use and produce vocabulary tokens")

    def parse(a: str, b: str, index: int) -> tuple[bytes, bytes]:
        left = cache.get(a)
        if left is None:
            left = to_bytes(a, index)
        right = cache.get(b)
        if right is None:
            right = to_bytes(b, index)
        if vocab is not None and (left not in vocab or right not in vocab or left + right not in vocab):
            for token, what in ((left, "left part"), (right, "right part"), (left + right, "merged result")):
                if token not in vocab:
                    raise missing(token, what, index)
        return left, right

    return parse


def load_merges_txt(
    path: str | os.PathLike[str], *, vocab: Mapping[bytes, int] | None = None
) -> list[tuple[bytes, bytes]]:
    """Read a ``merges.txt`` / ``vocab.bpe``.

    Accepted variants: a first line starting with ``#version`` is a header (optional, only on line 1); any other
    line starting with ``#`` is a merge (Llama 3 has ``# #``); blank lines at the end; CRLF line ends; a missing
    final newline. Repeated merges are kept in file order (the caller applies last-rank-wins).

    Args:
        path: the file.
        vocab: when given, every part and every merged result must be one of its tokens.

    Returns:
        The merges in rank order, as pairs of token bytes.

    Raises:
        FileNotFoundError: when the file does not exist.
        ValueError: naming the file and 1-based line: a line that is not two non-empty parts separated by one
            space, a part not spelled in the byte-level alphabet, a token missing from ``vocab``; an empty file
            (no header and no merge); a file that is not UTF-8.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "merges.txt"
    >>> _ = p.write_text("#version: 0.2\\nĠ t\\n# #\\n", encoding="utf-8")
    >>> load_merges_txt(p)
    [(b' ', b't'), (b'#', b'#')]
    """
    if vocab is not None and not isinstance(vocab, Mapping):
        raise TypeError(f"vocab must be a mapping bytes -> id or None, got {type(vocab).__name__} {vocab!r:.80}")
    name, text = read_text(path, lines="a merges file")
    lines = text.split("\n")
    # 1. header: only line 1, only '#version...' (tokenizers skips such lines anywhere; a later one would be a
    #    malformed merge here, which is the honest reading of the format).
    start = 1 if lines[0].startswith("#version") else 0
    has_header = start == 1
    # 2. trailing blank lines (incl. the '' after the final newline) are not merges.
    end = len(lines)
    while end > start and lines[end - 1].rstrip("\r") == "":
        end -= 1
    if not has_header and end == 0:
        raise ValueError(f"{name!r}: empty merges file (no '#version' header and no merge); "
                         "a merges file holds one 'A B' line per merge")
    if "\r" not in text:
        bulk = _merges_in_bulk(lines[start:end], vocab)
        if bulk is not None:
            return bulk
    # 3. Line by line: a CRLF file, or one with a problem to name (the same result otherwise).
    parse = merge_parser(name, vocab, "line {}")
    merges: list[tuple[bytes, bytes]] = []
    for index in range(start, end):
        line = lines[index]
        if line.endswith("\r"):
            line = line[:-1]
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{name!r}: line {index + 1}: {excerpt(line)} is not a merge; expected two tokens "
                             "separated by one space, e.g. 'Ġ t'")
        merges.append(parse(parts[0], parts[1], index + 1))
    return merges


def _merges_in_bulk(lines: list[str], vocab: Mapping[bytes, int] | None) -> list[tuple[bytes, bytes]] | None:
    """The merges of ``lines`` (each ``"A B"``) read with C loops, or None when a line is not a merge (or, with
    ``vocab``, uses or makes a token outside it): then the line-by-line reading names it. ~4x faster than
    :func:`merge_parser` on 50,000 merges."""
    pairs = [line.split(" ") for line in lines]
    if not set(map(len, pairs)) <= {2}:
        return None
    lefts = [pair[0] for pair in pairs]
    rights = [pair[1] for pair in pairs]
    if "" in lefts or "" in rights:
        return None
    distinct = list({*lefts, *rights})  # parts repeat a lot: each is spelled once
    spelled = strs_to_tokens(distinct)
    if spelled is None:
        return None
    table = dict(zip(distinct, spelled))
    left_tokens = list(map(table.__getitem__, lefts))
    right_tokens = list(map(table.__getitem__, rights))
    if vocab is not None:
        for tokens in (left_tokens, right_tokens, map(bytes.__add__, left_tokens, right_tokens)):
            if None in map(vocab.get, tokens):
                return None
    return list(zip(left_tokens, right_tokens))


