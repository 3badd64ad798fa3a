"""Find special (added) tokens in text: leftmost-longest, as `tokenizers`' matcher does.

>>> special_tokens_regex(["<|end|>", "<|end|>x"]).findall("a<|end|>xb<|end|>")
['<|end|>x', '<|end|>']
>>> special_tokens_regex([]) is None
True
>>> check_special_ids({"<s>": 0, "</s>": 1})
{'<s>': 0, '</s>': 1}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

__all__ = ["check_special_ids", "special_tokens_regex"]


def special_tokens_regex(tokens: Iterable[str]) -> regex.Pattern[str] | None:
    """Return a regex whose leftmost match is the leftmost-longest special token, or None for no tokens.

    For literal alternatives tried longest first, the regex's leftmost-first match is the leftmost-longest one, which
    is what `tokenizers`' Aho-Corasick automaton (``MatchKind::LeftmostLongest``) returns. Ties in length are broken
    by the text itself, so the regex does not depend on the order the tokens come in.
    """
    import regex  # loaded by the first model with special tokens to find, not by training

    alternatives = sorted(set(tokens), key=lambda t: (-len(t), t))
    return regex.compile("|".join(map(regex.escape, alternatives))) if alternatives else None


def check_special_ids(special_tokens: object, what: str = "special_tokens") -> dict[str, int]:
    """Check a mapping of special-token strings to ids; return it as a dict.

    Args:
        special_tokens: the mapping to check.
        what: how to name it in messages (an argument name, or a file and key).

    Raises:
        TypeError: when it is not a mapping of str to int ids.
        ValueError: for an empty token, a negative id, or two tokens sharing an id.
    """
    if not isinstance(special_tokens, Mapping):
        raise TypeError(
            f"{what} must be a mapping of special-token strings to int ids, e.g. {{'<|endoftext|>': 50256}}, got "
            f"{type(special_tokens).__name__} {special_tokens!r:.80}; for a list of names, number them first, "
            "e.g. {t: i for i, t in enumerate(names)}"
        )
    out: dict[str, int] = {}
    owner: dict[int, str] = {}
    for text, idx in special_tokens.items():
        if not isinstance(text, str) or isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"{what} must map non-empty str to non-negative int ids, got {text!r}: {idx!r}")
        if not text or idx < 0:
            raise ValueError(f"{what}: entry {text!r}: {idx!r} is not a non-empty token string with a non-negative "
                             "int id")
        if idx in owner:
            raise ValueError(f"{what}: special tokens {owner[idx]!r} and {text!r} share id {idx}; give each special "
                             "token its own id")
        owner[idx] = text
        out[text] = idx
    return out
