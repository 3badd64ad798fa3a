"""What the raw API does as tiktoken does: surrogates in text to encode, and decoding with character offsets.

* A Python ``str`` may hold surrogate code points, which have no UTF-8 form. tiktoken encodes such text after
  ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``: a high surrogate followed by a low one
  becomes the character the pair spells, any other surrogate becomes U+FFFD. :func:`repair_surrogates` is that
  step; ``BPEModel`` applies it only to text that failed to encode, so valid text pays nothing.
* :func:`offsets_of` gives tiktoken's ``decode_with_offsets`` result from each token's bytes.

>>> repair_surrogates("\\ud83d\\udc4d \\udc4d\\ud83d")
'👍 ��'
>>> offsets_of([b"h", b"\\xe4\\xbd", b"\\xa0!"])
('h你!', [0, 1, 1])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence, Set
from typing import Literal, TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")

__all__ = [
    "Surrogates", "check_surrogates", "encode_repairing", "offsets_of", "repair_each", "repair_surrogates",
    "resolve_allowed", "resolve_disallowed",
]

Surrogates = Literal["replace", "strict"]

# UTF-8 continuation bytes: every other byte starts a character.
_CONTINUATION = bytes(range(0x80, 0xC0))


def check_surrogates(surrogates: object) -> None:
    """Refuse a ``surrogates=`` option other than ``"replace"`` and ``"strict"``."""
    if surrogates != "replace" and surrogates != "strict":
        raise ValueError(
            f"surrogates must be 'replace' (tiktoken: a surrogate pair becomes its character, any other surrogate "
            f"U+FFFD) or 'strict' (raise UnicodeEncodeError, as tokenizers does), got {surrogates!r:.80}"
        )


def encode_repairing(encode: Callable[[_T], _R], text: _T, surrogates: Surrogates,
                     repair: Callable[[_T], _T]) -> _R:
    """Return ``encode(text)``; if that raises ``UnicodeEncodeError``, ``encode(repair(text))``, unless
    ``surrogates`` is ``"strict"``.

    Only text without a UTF-8 form takes the second call: the fix-up costs valid text nothing (as in tiktoken).

    >>> encode_repairing(lambda t: t.encode("utf-8"), "a\\ud83d", "replace", repair_surrogates)
    b'a\\xef\\xbf\\xbd'
    """
    if surrogates != "replace":
        check_surrogates(surrogates)
    try:
        return encode(text)
    except UnicodeEncodeError:
        if surrogates == "strict":
            raise
    return encode(repair(text))


def repair_surrogates(text: str) -> str:
    """Return ``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD, as tiktoken does.

    Text without surrogates comes back equal.

    >>> repair_surrogates("a\\ud83d")
    'a�'
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def repair_each(texts: list[str]) -> list[str]:
    """Return ``texts`` with :func:`repair_surrogates` applied to each text that holds a surrogate."""
    # Compiled here, at the first batch that failed to encode: the class is 0.12 MiB of every training run's
    # memory otherwise (re caches it).
    surrogate = re.compile("[\ud800-\udfff]")
    return [repair_surrogates(text) if surrogate.search(text) else text for text in texts]


def offsets_of(token_bytes: Sequence[bytes]) -> tuple[str, list[int]]:
    """Return the text of the tokens and the character offset where each token starts, as tiktoken's
    ``Encoding.decode_with_offsets``.

    A token whose first byte continues a character started by an earlier token gets that character's offset.

    Raises:
        UnicodeDecodeError: the tokens' bytes are not valid UTF-8 (as tiktoken, which decodes strictly).
    """
    characters = 0  # characters started by the tokens so far
    offsets: list[int] = []
    for token in token_bytes:
        inside = 0x80 <= token[0] < 0xC0 if token else False
        offsets.append(max(0, characters - inside))
        characters += len(token.translate(None, _CONTINUATION))
    return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets


def resolve_allowed(specials: Mapping[str, int], allowed_special: object) -> frozenset[str]:
    """Return the specials that ``allowed_special`` (``"all"`` or a set of names) allows."""
    if allowed_special == "all":
        return frozenset(specials)
    if isinstance(allowed_special, str) or not isinstance(allowed_special, Set | Collection):
        raise TypeError(f"allowed_special must be 'all' or a set of special tokens, got {allowed_special!r}")
    unknown = set(allowed_special) - specials.keys()
    if unknown:
        raise ValueError(f"allowed_special names unknown special tokens {sorted(unknown)!r}; "
                         f"this model's are {sorted(specials)!r}")
    return frozenset(allowed_special)


def resolve_disallowed(specials: Mapping[str, int], disallowed_special: object,
                       allowed: frozenset[str]) -> frozenset[str]:
    """Return the specials whose text ``disallowed_special`` (``"all"`` or a collection) refuses."""
    if disallowed_special == "all":
        return frozenset(specials) - allowed
    if isinstance(disallowed_special, str) or not isinstance(disallowed_special, Collection):
        raise TypeError(f"disallowed_special must be 'all' or a collection of special tokens, "
                        f"got {disallowed_special!r}")
    return frozenset(disallowed_special) - allowed
