r"""Name the pre-tokenization patterns, and spell a pattern for Oniguruma as `tokenizers` needs it.

:data:`PATTERNS` holds the exact regex of each named pre-tokenizer (GPT-2, GPT-4, GPT-4o, Llama 3, Qwen2);
:func:`to_oniguruma`/:func:`from_oniguruma` translate a pattern between Python's `regex` (hf_bpe, tiktoken) and
Oniguruma (`tokenizers`), which read possessive intervals and ``^``/``$`` differently.

>>> print(to_oniguruma(r"\p{N}{1,3}+"))
(?>\p{N}{1,3})
>>> to_oniguruma(PATTERNS["gpt2"]) == PATTERNS["gpt2"]
True
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["ALIASES", "GPT2_PATTERN", "PATTERNS", "from_oniguruma", "to_oniguruma"]

# Exact sources. gpt2: tokenizers' ByteLevel (byte_level.rs) == OpenAI's encoder.py. gpt4 and o200k: tiktoken 0.14
# (tiktoken_ext/openai_public.py). llama3: the Split pre-tokenizer of Meta's Llama 3 tokenizer.json -- the older
# spelling of cl100k that Hugging Face files carry; it differs from gpt4 in one place: a whitespace run that reaches
# the end of the text and contains a newline is cut after its last newline (llama3) or kept whole (gpt4's `\s++$`).
# qwen2: Qwen2's tokenizer.json Split pre-tokenizer, llama3 with single digits.
PATTERNS: Mapping[str, str] = MappingProxyType(
    {
        "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
        "gpt4": (
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"""
            r"""|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        "o200k": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "llama3": (
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
            r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
        ),
        "qwen2": (
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
            r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
        ),
    }
)

# Other names accepted for a pattern (looked up case-insensitively, like the names).
ALIASES: Mapping[str, str] = MappingProxyType(
    {"cl100k": "gpt4", "cl100k_base": "gpt4", "o200k_base": "o200k", "gpt4o": "o200k"}
)

# The pattern of `tokenizers`' ByteLevel pre-tokenizer with use_regex=true (== GPT-2's encoder.py pattern).
GPT2_PATTERN = PATTERNS["gpt2"]


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
    * ``\w`` and ``\W`` (also inside classes) -> the class Python's `regex` means, spelled out
      (``[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]``): Oniguruma's ``\w`` takes ``²³¹¼½¾`` and leaves out the
      join controls (U+200C, U+200D). ``\b`` and ``\B`` still use Oniguruma's ``\w``.

    Inline flags other than ``i`` are refused (Ruby's ``m`` is Python's ``s``; ``x`` changes the parse).
    Not rewritten (measured over all code points, tokenizers 0.23.3): ``\s``, ``\S``, ``.`` agree exactly;
    ``\p{L}``/``\p{N}``/``\p{M}``/``\d`` differ only on ~4.7k characters that are new or recategorized in recent
    Unicode versions (`regex` knows a newer Unicode than Oniguruma).

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


# Python `regex`'s \w is Unicode's (UTS #18): Alphabetic, marks, decimal digits, connector punctuation and join
# controls. Oniguruma's \w differs (it takes every number, e.g. U+00B2, and no join control, e.g. U+200D), so the
# class is spelled out for it; both engines then agree except on code points their Unicode versions disagree on.
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
_WORD_ESCAPES = {r"\w": f"[{_WORD}]", r"\W": f"[^{_WORD}]"}


def _class_to_onig(text: str) -> str:
    """Spell the \\w and \\W inside a character class for Oniguruma (nested sets are valid there)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            end = _escape_end(text, i)
            atom = text[i:end]
            out.append(_WORD if atom == r"\w" else _WORD_ESCAPES.get(atom, atom))
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _translate(pattern: str, *, to_onig: bool) -> str:
    """Rewrite the constructs that Python `regex` and Oniguruma (Ruby syntax) read differently, one direction."""
    anchors = {"^": r"\A", "$": _DOLLAR} if to_onig else {"^": "(?m:^)", "$": "(?m:$)"}
    escapes = {r"\Z": _END, **_WORD_ESCAPES} if to_onig else {r"\Z": _DOLLAR, r"\z": _END}
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
            items.append(_class_to_onig(pattern[i:end]) if to_onig else pattern[i:end])
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

