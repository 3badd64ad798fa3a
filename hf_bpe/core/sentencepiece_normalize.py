"""SentencePiece's normalizer (``normalizer.cc``), exactly: the pure-Python reference of the compiled one in
``csrc/sp_normalizer.hpp``.

The rules are data: the precompiled charsmap that SentencePiece ships in every model (``nmt_nfkc``, ``nfkc_cf``,
...) is a darts-clone double-array trie from UTF-8 sequences to their normalized forms plus the forms' blob. At each
position the *longest* sequence the trie knows is replaced (``NormalizePrefix``); then whitespace: leading pieces
that normalize to a space dropped, a dummy ``▁`` prefix, runs of spaces collapsed across pieces, spaces written as
``▁``, trailing ``▁`` removed. With ``user_symbols`` (a model's user-defined symbols, as ``sentencepiece`` encodes),
a symbol found at a position is copied as is, before the charsmap is asked.

``tokenizers``' ``Precompiled`` reads the same charsmap but looks each grapheme up whole and replaces it with the
form of its *shortest* known prefix: ``"ｓ\\u0301"`` (full-width s, combining acute) becomes ``"s"`` there and ``"ś"``
in SentencePiece. Training follows SentencePiece (this module); the converted ``tokenizer.json`` cannot, and the
README names the difference.

>>> from hf_bpe.training.sentencepiece.bpe import builtin_charsmap
>>> spec = {"precompiled_charsmap": builtin_charsmap("nmt_nfkc"), "add_dummy_prefix": True,
...         "remove_extra_whitespaces": True, "escape_whitespaces": True}
>>> SentencePieceNormalizer(spec).normalize("  ｓ\\u0301 Ａ  b ")
'▁ś▁A▁b'
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SentencePieceNormalizer", "parse_charsmap"]

_SPACE = "\u2581".encode()


def parse_charsmap(blob: bytes) -> tuple[tuple[int, ...], bytes]:
    """Split a precompiled charsmap into the trie's 32-bit units and the blob of normalized forms.

    >>> parse_charsmap(b"\\x04\\0\\0\\0" + b"\\x01\\0\\0\\0" + b"a\\0")
    ((1,), b'a\\x00')

    Raises:
        ValueError: naming ``precompiled_charsmap``: the blob is not a precompiled charsmap (4 bytes or fewer, or
            the trie size in its header is not a multiple of 4 or exceeds the bytes after the header).
    """
    if len(blob) <= 4:
        raise ValueError(f"precompiled_charsmap: {len(blob)} bytes; a precompiled charsmap holds a 4-byte trie size, "
                         "the trie and the normalized forms")
    (size,) = struct.unpack_from("<I", blob)
    if size > len(blob) - 4 or size % 4:
        raise ValueError(f"precompiled_charsmap: its header declares a {size}-byte trie; {len(blob) - 4} bytes "
                         "follow the 4-byte header and a trie is a multiple of 4 bytes")
    return struct.unpack_from(f"<{size // 4}I", blob, 4), blob[4 + size:]


def forms_not_utf8(exc: UnicodeDecodeError) -> str:
    """The message for a normalized text that is not UTF-8: a crafted charsmap's form (both paths say it so)."""
    return (f"precompiled_charsmap: its normalized forms make text that is not UTF-8 ({exc.reason} at byte "
            f"{exc.start} of the {len(exc.object)}-byte result); the charsmap is damaged")


class SentencePieceNormalizer:
    """``Normalizer::Normalize`` for a normalizer spec (the ``normalizer`` dict of a SentencePiece model).

    Args:
        spec: ``precompiled_charsmap`` (bytes; empty: identity), ``add_dummy_prefix``, ``remove_extra_whitespaces``,
            ``escape_whitespaces``; optionally ``treat_whitespace_as_suffix`` (a trainer option in a model, which
            sentencepiece's normalizer also reads: the dummy ``▁`` goes at the end).
        user_symbols: strings copied as they are wherever they start (longest first), as ``sentencepiece`` treats
            a model's user-defined symbols when encoding (training normalizes without them).
    """

    def __init__(self, spec: Mapping[str, Any], user_symbols: Iterable[str] = ()) -> None:
        charsmap = spec["precompiled_charsmap"]
        self.units, self.forms = parse_charsmap(charsmap) if charsmap else ((), b"")
        self.add_dummy_prefix = bool(spec["add_dummy_prefix"])
        self.remove_extra_whitespaces = bool(spec["remove_extra_whitespaces"])
        self.escape_whitespaces = bool(spec["escape_whitespaces"])
        self.dummy_as_suffix = bool(spec.get("treat_whitespace_as_suffix", False))
        self.user_symbols = sorted({s.encode() for s in user_symbols if s}, key=len, reverse=True)

    def _longest(self, data: bytes, start: int) -> tuple[int, int]:
        """darts-clone's commonPrefixSearch from ``start``: the longest match's (length, value), or (0, 0)."""
        units = self.units
        unit = units[0]
        node = (unit >> 10) << ((unit & 0x200) >> 6)
        best = (0, 0)
        for i in range(start, len(data)):
            byte = data[i]
            node ^= byte
            if node >= len(units):  # a crafted trie: walk no further (the compiled walk is bounded the same way)
                break
            unit = units[node]
            if unit & 0x800000FF != byte:  # the label
                break
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)  # the offset
            if node >= len(units):
                break
            if unit >> 8 & 1:  # has a leaf: a known sequence ends here
                best = (i - start + 1, units[node] & 0x7FFFFFFF)
                if best[1] >= len(self.forms):
                    raise ValueError(f"precompiled_charsmap: the trie points at form {best[1]}, past its "
                                     f"{len(self.forms)}-byte forms")
        return best

    def _prefix(self, data: bytes, start: int) -> tuple[bytes, int]:
        """NormalizePrefix: (the normalized form of the longest rule at ``start``, bytes consumed)."""
        for symbol in self.user_symbols:
            if data.startswith(symbol, start):
                return symbol, len(symbol)
        if self.units:
            length, value = self._longest(data, start)
            if length:
                end = self.forms.find(b"\0", value)  # a form runs to its NUL (or, crafted, to the blob's end)
                return self.forms[value:end if end >= 0 else len(self.forms)], length
        first = data[start]
        length = 1 if first < 0x80 else 2 if first < 0xE0 else 3 if first < 0xF0 else 4
        return data[start:start + length], length

    def normalize(self, text: str) -> str:
        """Return the normalized text (``▁`` for spaces when ``escape_whitespaces``)."""
        data = text.encode("utf-8")
        out = bytearray()
        pos = 0
        # 1. Leading pieces that normalize to a single space are dropped.
        if self.remove_extra_whitespaces:
            while pos < len(data):
                piece, length = self._prefix(data, pos)
                if piece != b" ":
                    break
                pos += length
        if pos == len(data):
            return ""
        space = _SPACE if self.escape_whitespaces else b" "
        if self.add_dummy_prefix and not self.dummy_as_suffix:
            out += space
        # 2. Piece by piece: leading spaces of a piece dropped after a space, spaces escaped.
        previous_space = self.remove_extra_whitespaces
        while pos < len(data):
            piece, length = self._prefix(data, pos)
            if previous_space:
                piece = piece.lstrip(b" ")
            if piece:
                out += piece.replace(b" ", space)
                previous_space = piece.endswith(b" ")
            pos += length
            if not self.remove_extra_whitespaces:
                previous_space = False
        # 3. Trailing spaces (escaped or not) removed.
        if self.remove_extra_whitespaces:
            while out.endswith(space):
                del out[-len(space):]
        # 4. treat_whitespace_as_suffix: the dummy space at the end, after the trailing ones were removed.
        if self.add_dummy_prefix and self.dummy_as_suffix:
            out += space
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(forms_not_utf8(exc)) from None
