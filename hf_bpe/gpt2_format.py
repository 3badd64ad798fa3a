"""Read and write GPT-2 format vocabularies: ``vocab.json``, ``merges.txt`` and ``tokenizer.json``.

Tokens are ``bytes`` inside hf_bpe; these files spell them in GPT-2's byte-level alphabet
(:mod:`hf_bpe.bytelevel`). The writers produce exactly the bytes that `tokenizers` writes
(``BPE.save`` for ``vocab.json``/``merges.txt``, ``Tokenizer.to_str()`` for ``tokenizer.json``): compact JSON in
serde_json's style (separators ``,`` and ``:``, UTF-8, only ``"``, ``\\`` and control characters escaped).
The readers accept every variant found in real files and fail with the file name (and line number) on anything else.
:func:`to_oniguruma`/:func:`from_oniguruma` translate a pre-tokenization regex between Python's `regex` (hf_bpe,
tiktoken) and Oniguruma (`tokenizers`), which read possessive intervals and ``^``/``$`` differently.

>>> text = dump_vocab_json({0: b"a", 1: b" b", 2: b"a b"}, {"<|endoftext|>": 3})
>>> text
'{"a":0,"Ġb":1,"aĠb":2,"<|endoftext|>":3}'
>>> dump_merges_txt([(b"a", b" b")])
'#version: 0.2\\na Ġb\\n'
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .bytelevel import str_to_token, token_to_str

__all__ = [
    "GPT2_PATTERN",
    "dump_merges_txt",
    "dump_tokenizer_json",
    "dump_vocab_json",
    "load_merges_txt",
    "load_tokenizer_json",
    "load_vocab_json",
    "from_oniguruma",
    "to_oniguruma",
]

# The pattern of `tokenizers`' ByteLevel pre-tokenizer with use_regex=true (== GPT-2's encoder.py pattern).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

_MAX_ID = 2**32 - 1  # tokenizers stores ids as u32
_HEADER = "#version: 0.2\n"
_EMPTY: Mapping[str, int] = MappingProxyType({})


# ----------------------------------------------------------------------------------------------------------------
# JSON in serde_json's compact style
# ----------------------------------------------------------------------------------------------------------------

def _to_json(value: Any) -> str:
    # Python's encoder with ensure_ascii=False escapes exactly what serde_json escapes: '"', '\\', \b \f \n \r \t
    # in short form and the other controls < U+0020 as \u00xx (lowercase hex, like serde); DEL, U+2028/2029 and all
    # non-ASCII characters are written raw. Lone surrogates cannot happen: every str is validated as UTF-8 first.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ----------------------------------------------------------------------------------------------------------------
# Validation of the in-memory inputs of the writers
# ----------------------------------------------------------------------------------------------------------------

def _check_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value <= _MAX_ID:
        raise ValueError(f"{what} must be in 0..{_MAX_ID} (tokenizers stores ids as u32), got {value!r}")
    return value


def _check_utf8(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {text!r} contains a lone surrogate and cannot be written as UTF-8; "
                         "remove it or pass a valid Unicode string") from None


def _spell_vocab(tokens: Mapping[int, bytes], special_tokens: Mapping[str, int]) -> dict[int, str]:
    """Return id -> spelling for the union of regular and special tokens, validated, sorted by id."""
    if not isinstance(tokens, Mapping):
        raise TypeError(f"tokens must be a mapping id -> bytes, got {type(tokens).__name__} {tokens!r:.80}")
    if not isinstance(special_tokens, Mapping):
        raise TypeError(f"special_tokens must be a mapping str -> id, got {type(special_tokens).__name__} "
                        f"{special_tokens!r:.80}")
    spelled: dict[int, str] = {}
    for idx, token in tokens.items():
        _check_id(idx, "a token id")
        if not isinstance(token, bytes):
            raise TypeError(f"token {idx} must be bytes, got {type(token).__name__} {token!r}; "
                            "encode str tokens with .encode('utf-8')")
        if not token:
            raise ValueError(f"token {idx} is empty (b''); every token must have at least one byte")
        spelled[idx] = token_to_str(token)
    special_owner: dict[int, str] = {}
    for name, idx in special_tokens.items():
        if not isinstance(name, str):
            raise TypeError(f"special token names must be str, got {type(name).__name__} {name!r}")
        if not name:
            raise ValueError("special token name is empty (''); give every special token a non-empty name")
        _check_utf8(name, "special token")
        _check_id(idx, f"the id of special token {name!r}")
        if idx in special_owner:
            raise ValueError(f"special tokens {special_owner[idx]!r} and {name!r} share id {idx}; "
                             "give each special token its own id")
        special_owner[idx] = name
        # A special that shares its id with a regular token replaces it: one entry, the special's spelling.
        spelled[idx] = name
    # A spelling may appear once: JSON objects cannot hold the same key twice and tokenizers maps str -> id.
    seen: dict[str, int] = {}
    for idx, text in spelled.items():
        if text in seen:
            raise ValueError(f"ids {seen[text]} and {idx} are both spelled {text!r}; "
                             "every token must be unique (a special token may only share the id of its own spelling)")
        seen[text] = idx
    return dict(sorted(spelled.items()))


def _check_merges(merges: Sequence[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(f"merges must be a sequence of (bytes, bytes) pairs, got {type(merges).__name__} "
                        f"{merges!r:.80}")
    out: list[tuple[bytes, bytes]] = []
    for rank, pair in enumerate(merges):
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
    spelled = _spell_vocab(tokens, special_tokens)
    return _to_json({text: idx for idx, text in spelled.items()})


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
    checked = _check_merges(merges)
    spell: dict[bytes, str] = {}  # memoized: parts repeat a lot
    lines = [_HEADER]
    for a, b in checked:
        sa = spell.get(a)
        if sa is None:
            sa = spell[a] = token_to_str(a)
        sb = spell.get(b)
        if sb is None:
            sb = spell[b] = token_to_str(b)
        lines.append(f"{sa} {sb}\n")
    return "".join(lines)


def dump_tokenizer_json(
    tokens: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    *,
    special_tokens: Mapping[str, int] = _EMPTY,
    pattern_regex: str | None = None,
    add_prefix_space: bool = False,
    ignore_merges: bool = False,
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
    split_regex = None if pattern_regex is None else _check_pattern(pattern_regex)

    # 2. vocabulary (id order) and merges, each merge checked against the vocabulary as tokenizers would.
    spelled = _spell_vocab(tokens, special_tokens)
    vocab = {text: idx for idx, text in spelled.items()}
    checked = _check_merges(merges)
    # Spelling is per byte, so spell(a + b) == spell(a) + spell(b); memoized because parts repeat a lot.
    spell: dict[bytes, str] = {}
    merge_pairs: list[list[str]] = []
    for rank, (left, right) in enumerate(checked):
        a = spell.get(left)
        if a is None:
            a = spell[left] = token_to_str(left)
        b = spell.get(right)
        if b is None:
            b = spell[right] = token_to_str(right)
        if a not in vocab or b not in vocab or a + b not in vocab:
            for part, what in ((a, "left part"), (b, "right part"), (a + b, "merged result")):
                if part not in vocab:
                    raise ValueError(f"merge {rank} {(left, right)!r}: its {what} {part!r} is not in the vocabulary "
                                     "(tokenizers refuses such a model); add the token or drop the merge")
        merge_pairs.append([a, b])

    # 3. the pipeline; key order is the one tokenizers serializes, so the text is stable through from_str/to_str.
    specials = sorted((idx, name) for name, idx in special_tokens.items())
    added_tokens = [
        {"id": idx, "content": name, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for idx, name in specials
    ]
    if pattern_regex is None:
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
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": vocab,
            "merges": merge_pairs,
        },
    }
    return _to_json(document)


def _check_pattern(pattern: object) -> str:
    """Validate a Python-`regex` pattern and return its Oniguruma spelling (see :func:`to_oniguruma`)."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern_regex must be a str or None, got {type(pattern).__name__} {pattern!r}")
    if not pattern:
        raise ValueError("pattern_regex is empty (''); pass None for GPT-2's pattern or a non-empty regex")
    _check_utf8(pattern, "pattern_regex")
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


# Python's `$` (no MULTILINE): end of text or before a final "\n"; `[\s\S]` is "any character" in both engines.
_END = r"(?![\s\S])"
_DOLLAR = r"(?=\n?(?![\s\S]))"


def to_oniguruma(pattern: str) -> str:
    r"""Rewrite a Python-`regex` pattern so that Oniguruma (used by `tokenizers`) matches exactly the same.

    hf_bpe (like tiktoken) splits text with Python-`regex` semantics; `tokenizers` compiles a ``Split`` regex with
    Oniguruma's Ruby syntax, which reads a few constructs differently. Rewritten (the result means the same in both):

    * ``X{n,m}+``, ``X{n}+``, ``X{n,}+`` (possessive in Python; in Ruby syntax ``(X{n,m})+``, e.g. cl100k's
      ``\p{N}{1,3}+`` would swallow every digit) -> ``(?>X{n,m})``;
    * ``X{n}?`` (exactly n in Python; optional in Ruby syntax) -> ``X{n}``;
    * ``^`` and ``$`` outside classes (line anchors in Ruby) -> ``\A`` and ``(?=\n?(?![\s\S]))``; ``\Z`` (end of text
      in Python, Ruby's is Python's ``$``) -> ``(?![\s\S])``.

    Inline flags other than ``i`` are refused (Ruby's ``m`` is Python's ``s``; ``x`` changes the parse).
    Not rewritten (measured over all code points, tokenizers 0.23.3): ``\s``, ``\S``, ``.`` agree exactly;
    ``\p{L}``/``\p{N}``/``\p{M}``/``\d`` differ only on ~4.7k characters that are new or recategorized in recent
    Unicode versions (`regex` knows a newer Unicode than Oniguruma); Oniguruma's ``\w`` also takes ``²³¹¼½¾``.

    Args:
        pattern: a pattern that compiles with the `regex` module.

    Returns:
        The Oniguruma spelling; the same string when nothing needs rewriting (GPT-2, Llama 3, Qwen2, o200k).

    Raises:
        ValueError: for inline flags other than ``i``.

    >>> to_oniguruma(r"\p{N}{1,3}+| ?\p{L}++|\s++$")
    '(?>\\p{N}{1,3})| ?\\p{L}++|\\s++(?=\\n?(?![\\s\\S]))'
    """
    return _translate(pattern, to_onig=True)


def from_oniguruma(pattern: str) -> str:
    r"""Rewrite an Oniguruma (`tokenizers`) pattern so that Python's `regex` matches exactly the same.

    The inverse reading of :func:`to_oniguruma`, for patterns found in ``tokenizer.json`` files: ``X{n,m}+`` ->
    ``(?:X{n,m})+``, ``X{n}?`` -> ``(?:X{n})?``, ``^``/``$`` -> ``(?m:^)``/``(?m:$)``, ``\Z`` ->
    ``(?=
?(?![\s\S]))``, ``\z`` -> ``(?![\s\S])``. ``from_oniguruma(to_oniguruma(p))`` means what ``p`` means.

    Args:
        pattern: a pattern as `tokenizers` compiles it.

    Returns:
        The Python-`regex` spelling; the same string for GPT-2, Llama 3, Qwen2 and o200k patterns.

    Raises:
        ValueError: for inline flags other than ``i``.

    >>> from_oniguruma(r"\p{N}{1,3}+|\s+$")
    '(?:\\p{N}{1,3})+|\\s+(?m:$)'
    """
    return _translate(pattern, to_onig=False)


def _translate(pattern: str, *, to_onig: bool) -> str:
    """Rewrite the constructs that Python `regex` and Oniguruma (Ruby syntax) read differently, one direction."""
    anchors = {"^": r"\A", "$": _DOLLAR} if to_onig else {"^": "(?m:^)", "$": "(?m:$)"}
    escapes = {r"\Z": _END} if to_onig else {r"\Z": _DOLLAR, r"\z": _END}
    frames: list[list[str]] = [[]]  # items of the open groups; an item is an atom with its quantifiers
    openers: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        items = frames[-1]
        if c == "\\":
            end = _escape_end(pattern, i)
            atom = pattern[i:end]
            items.append(escapes.get(atom, atom))
            i = end
        elif c == "[":
            end = _class_end(pattern, i)
            items.append(pattern[i:end])
            i = end
        elif c == "(" and pattern.startswith(("(?m:^)", "(?m:$)"), i):
            # Python's line anchors (what from_oniguruma writes for Ruby's ^ and $); Ruby's (?m) is dotall,
            # which leaves ^ and $ alone, so the text is valid Oniguruma as it is.
            items.append(pattern[i + 4] if to_onig else pattern[i:i + 6])
            i += 6
        elif c == "(":
            opener, i = _group_opener(pattern, i)
            if opener is None:  # a comment (?#...): dropped
                continue
            if opener.endswith(")"):  # inline flags (?i) or a named back-reference: a whole item
                items.append(opener)
                continue
            openers.append(opener)
            frames.append([])
        elif c == ")" and openers:
            inner = "".join(frames.pop())
            frames[-1].append(openers.pop() + inner + ")")
            i += 1
        elif c in "*+?{" and items:
            i = _quantify(pattern, i, items, to_onig=to_onig)
        elif c in anchors:
            items.append(anchors[c])
            i += 1
        else:
            items.append(c)
            i += 1
    # The pattern compiled with `regex`, so groups are balanced; join defensively anyway.
    while openers:
        inner = "".join(frames.pop())
        frames[-1].append(openers.pop() + inner)
    return "".join(frames[0])


def _escape_end(pattern: str, i: int) -> int:
    """End of the escape starting at pattern[i] == '\\'."""
    n = len(pattern)
    if i + 1 >= n:
        return n
    kind = pattern[i + 1]
    if kind in "pPNx" and i + 2 < n and pattern[i + 2] == "{":
        close = pattern.find("}", i + 3)
        return n if close < 0 else close + 1
    if kind in "pP":  # \pL
        return min(n, i + 3)
    if kind in "gk" and i + 2 < n and pattern[i + 2] == "<":
        close = pattern.find(">", i + 3)
        return n if close < 0 else close + 1
    width = {"x": 2, "u": 4, "U": 8}.get(kind)
    if width is not None:
        return min(n, i + 2 + width)
    if kind.isdigit():
        j = i + 1
        while j < n and pattern[j].isdigit():
            j += 1
        return j
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """End of the character class starting at pattern[i] == '[' (nested sets and [:posix:] allowed)."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":  # a leading ']' is a literal
        j += 1
    depth = 1
    while j < n:
        c = pattern[j]
        if c == "\\":
            j = _escape_end(pattern, j)
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def _group_opener(pattern: str, i: int) -> tuple[str | None, int]:
    """Return (opener text, next index) for the '(' at i; None for a comment; a text ending in ')' is complete."""
    import regex

    if not pattern.startswith("(?", i):
        return "(", i + 1
    if pattern.startswith("(?#", i):
        close = pattern.find(")", i)
        return None, (len(pattern) if close < 0 else close + 1)
    for fixed in ("(?:", "(?>", "(?=", "(?!", "(?<=", "(?<!", "(?|"):
        if pattern.startswith(fixed, i):
            return fixed, i + len(fixed)
    named = regex.match(r"\(\?P?<[^>]*>|\(\?P=[^)]*\)", pattern[i:])
    if named:
        return named.group(), i + named.end()
    flags = regex.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])", pattern[i:])
    if flags:
        letters = (flags.group(1) or "") + (flags.group(2) or "")
        if set(letters) - {"i"}:
            raise ValueError(f"pattern_regex {pattern!r}: inline flags {flags.group()!r} are not supported; "
                             "Oniguruma (tokenizers) reads flags other than 'i' differently (Ruby's m is Python's "
                             "s): rewrite the pattern without them")
        return flags.group(), i + flags.end()
    return "(?", i + 2  # unknown: passed through; the Oniguruma compile check reports it


def _quantify(pattern: str, i: int, items: list[str], *, to_onig: bool) -> int:
    """Attach the quantifier at pattern[i] to items[-1], rewriting the forms the two engines read differently."""
    import regex

    c = pattern[i]
    if c == "{":
        bound = regex.match(r"\{(\d*)(,\d*)?\}", pattern[i:])
        if bound is None or not (bound.group(1) or (bound.group(2) or ",")[1:]):
            items.append(r"\{")  # a literal brace, as in Python
            return i + 1
        quant, j = bound.group(), i + bound.end()
        exact = bound.group(2) is None
        suffix = pattern[j] if j < len(pattern) else ""
        if suffix == "+":  # possessive in Python; "one or more times" in Ruby syntax
            items[-1] = f"(?>{items[-1]}{quant})" if to_onig else f"(?:{items[-1]}{quant})+"
            return j + 1
        if suffix == "?" and exact:  # exactly n in Python (lazy of a fixed count); optional in Ruby syntax
            items[-1] = items[-1] + quant if to_onig else f"(?:{items[-1]}{quant})?"
            return j + 1
        if suffix == "?":  # lazy in both
            items[-1] += quant + "?"
            return j + 1
        items[-1] += quant
        return j
    j = i + 1
    if j < len(pattern) and pattern[j] in "?+":  # lazy / possessive: the same in both engines for *, +, ?
        j += 1
    items[-1] += pattern[i:j]
    return j


# ----------------------------------------------------------------------------------------------------------------
# Readers
# ----------------------------------------------------------------------------------------------------------------

def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """Return (display name, text) of a UTF-8 file; a UTF-8 byte order mark is dropped."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__} {path!r}")
    name = os.fspath(path)
    data = Path(name).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name!r} is not UTF-8 text: byte {data[exc.start]:#04x} at offset {exc.start} "
                         f"({exc.reason}); vocabulary files must be saved as UTF-8") from None
    return name, text.removeprefix("\ufeff")


def _no_duplicate_keys(name: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"{name!r}: key {key!r} appears twice in one JSON object; each key must be unique")
            out[key] = value
        return out

    return hook


def _parse_json(name: str, text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(name))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name!r} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _split_vocab(name: str, where: str, obj: object) -> tuple[dict[bytes, int], dict[str, int]]:
    """Split a JSON vocabulary into byte-level tokens and other entries; check ids."""
    if not isinstance(obj, dict):
        raise ValueError(f"{name!r}: {where} must be a JSON object mapping token -> id, got {type(obj).__name__}")
    tokens: dict[bytes, int] = {}
    others: dict[str, int] = {}
    owner: dict[int, str] = {}
    for text, idx in obj.items():
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(f"{name!r}: {where} entry {text!r} has id {idx!r}; ids must be non-negative integers")
        if idx > _MAX_ID:
            raise ValueError(f"{name!r}: {where} entry {text!r} has id {idx!r}, above {_MAX_ID} (u32 in tokenizers)")
        if idx in owner:
            raise ValueError(f"{name!r}: {where} entries {owner[idx]!r} and {text!r} share id {idx}; "
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
    name, text = _read_text(path)
    return _split_vocab(name, "the vocabulary", _parse_json(name, text))


def _merge_parser(name: str, vocab: Mapping[bytes, int] | None, label: str) -> Any:
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
        return ValueError(f"{name!r}: {label.format(index)}: the {what} {token_to_str(token)!r} ({token!r}) is not "
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
    name, text = _read_text(path)
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
    parse = _merge_parser(name, vocab, "line {}")
    merges: list[tuple[bytes, bytes]] = []
    for index in range(start, end):
        line = lines[index]
        if line.endswith("\r"):
            line = line[:-1]
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{name!r}: line {index + 1}: {line!r} is not a merge; expected two tokens separated "
                             "by one space, e.g. 'Ġ t'")
        merges.append(parse(parts[0], parts[1], index + 1))
    return merges


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
    name, text = _read_text(path)
    doc = _parse_json(name, text)
    # 1. the model.
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise ValueError(f"{name!r} is not a tokenizer.json: expected a JSON object with a 'model' object")
    model = doc["model"]
    if model.get("type") != "BPE":
        raise ValueError(f"{name!r}: model type is {model.get('type')!r}, expected 'BPE'; hf_bpe only reads "
                         "byte-level BPE tokenizers")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"{name!r}: model.dropout is {model['dropout']!r}; hf_bpe encodes without dropout (null)")
    if model.get("byte_fallback", False):
        raise ValueError(f"{name!r}: model.byte_fallback is true; hf_bpe reads byte-level BPE, not byte fallback")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ValueError(f"{name!r}: model.{key} is {model[key]!r}; hf_bpe supports none (null or '')")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise ValueError(f"{name!r}: model.ignore_merges is {ignore_merges!r}; expected true or false")
    tokens, others = _split_vocab(name, "model.vocab", model.get("vocab"))

    # 2. merges, in either spelling.
    raw_merges = model.get("merges", [])
    if not isinstance(raw_merges, list):
        raise ValueError(f"{name!r}: model.merges must be a list, got {type(raw_merges).__name__}")
    parse = _merge_parser(name, tokens, "model.merges[{}]")
    merges: list[tuple[bytes, bytes]] = []
    for rank, item in enumerate(raw_merges):
        parts = item.split(" ") if type(item) is str else item
        if type(parts) is not list or len(parts) != 2 or type(parts[0]) is not str or type(parts[1]) is not str \
                or not parts[0] or not parts[1]:
            raise ValueError(f"{name!r}: model.merges[{rank}] is {item!r}; expected \"A B\" or [\"A\", \"B\"] "
                             "with two non-empty tokens")
        merges.append(parse(parts[0], parts[1], rank))

    # 3. added tokens.
    added = doc.get("added_tokens", [])
    if not isinstance(added, list):
        raise ValueError(f"{name!r}: added_tokens must be a list, got {type(added).__name__}")
    for position, entry in enumerate(added):
        if (not isinstance(entry, dict) or not isinstance(entry.get("content"), str)
                or isinstance(entry.get("id"), bool) or not isinstance(entry.get("id"), int) or entry["id"] < 0):
            raise ValueError(f"{name!r}: added_tokens[{position}] is {entry!r}; expected an object with an "
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
    }
