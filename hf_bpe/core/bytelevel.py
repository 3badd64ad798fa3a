"""Map raw bytes to GPT-2's printable byte-level alphabet and back.

Tokens are ``bytes`` everywhere inside hf_bpe. This alphabet is only used at the edges that need strings:
``vocab.json``/``merges.txt``/``tokenizer.json`` and the ``transformers`` tokenizer.

The 256 symbols, sorted by code point, give the id order of the byte tokens in a trained vocabulary
(``BYTE_ORDER``): printable ASCII ``!``..``~`` first, then Latin-1 ``¡``..``¬``, ``®``..``ÿ``, and last the
remaining bytes (controls, space, DEL, NBSP, soft hyphen) shifted to U+0100 and up, in byte order.

>>> token_to_str(b" hello\\n")
'ĠhelloĊ'
>>> str_to_token("ĠhelloĊ")
b' hello\\n'
>>> BYTE_ORDER[:3], BYTE_ORDER[-1]
((33, 34, 35), 173)
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from itertools import accumulate

from ..errors import excerpt

__all__ = ["BYTE_TO_UNICODE", "UNICODE_TO_BYTE", "BYTE_ORDER", "token_to_str", "str_to_token", "strs_to_tokens"]


def _bytes_to_unicode() -> dict[int, str]:
    # GPT-2's table: bytes that are printable stay themselves; the 68 others are shifted past U+00FF so that
    # every token is a printable, whitespace-free string.
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shift = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shift)
            shift += 1
    return table


BYTE_TO_UNICODE: dict[int, str] = _bytes_to_unicode()
UNICODE_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_UNICODE.items()}
# Byte values in the order of their symbols' code points: the id order `tokenizers` gives the alphabet.
BYTE_ORDER: tuple[int, ...] = tuple(sorted(range(256), key=lambda b: ord(BYTE_TO_UNICODE[b])))

_SPELLING = "".join(BYTE_TO_UNICODE[b] for b in range(256))
_charmap_decode = codecs.charmap_decode

# Latin-1 characters outside the alphabet (space, controls, ...) are sent past U+00FF so that the final
# latin-1 encode rejects them instead of passing them through as bytes.
_DECODE_TABLE = str.maketrans(
    {**{chr(c): "\uffff" for c in range(256) if chr(c) not in UNICODE_TO_BYTE},
     **{c: chr(b) for c, b in UNICODE_TO_BYTE.items()}}
)


def token_to_str(token: bytes) -> str:
    """Spell a token's bytes in the byte-level alphabet.

    Args:
        token: the raw bytes of a token.

    Returns:
        One alphabet character per byte.

    >>> token_to_str(b"\\xe4\\xbd\\xa0")
    'ä½ł'
    """
    # A charmap codec with a 256-character str as its table: one C loop, ~1.6x faster than decoding as latin-1
    # and translating (a 32,000-token vocabulary is spelled on every save).
    return _charmap_decode(token, None, _SPELLING)[0]


def str_to_token(text: str) -> bytes:
    """Turn a byte-level alphabet string back into the token's bytes.

    Args:
        text: a string made only of byte-level alphabet characters.

    Returns:
        The raw bytes.

    Raises:
        ValueError: if ``text`` has a character outside the alphabet.

    >>> str_to_token("Ġt")
    b' t'
    """
    latin = text.translate(_DECODE_TABLE)
    try:
        return latin.encode("latin-1")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(
            f"{excerpt(text)} is not a byte-level token: {bad!r} (U+{ord(bad):04X}) is not one of the 256 GPT-2 "
            "byte symbols; byte-level vocabularies spell every byte with one of them"
        ) from None


def strs_to_tokens(texts: Sequence[str]) -> list[bytes] | None:
    """Turn many byte-level alphabet strings into their tokens' bytes at once, or return None if one is not.

    One ``translate`` and one ``encode`` of all the strings joined (the table maps each character to one
    character, so the lengths line up), then slices: loading a 50,000-token vocabulary called :func:`str_to_token`
    once per entry, ~40 ms of every load. None means a string holds a character outside the alphabet: the caller
    then goes entry by entry, which names it.

    >>> strs_to_tokens(["Ġt", "", "Ċ"]), strs_to_tokens(["a", "a b"])
    ([b' t', b'', b'\\n'], None)
    """
    try:
        raw = "".join(texts).translate(_DECODE_TABLE).encode("latin-1")
    except UnicodeEncodeError:
        return None
    ends = list(accumulate(map(len, texts)))
    return [raw[start:end] for start, end in zip([0, *ends[:-1]], ends)]
