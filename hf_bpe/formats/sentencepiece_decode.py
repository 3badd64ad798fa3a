"""SentencePiece's decoding of ids to text (``SentencePieceProcessor::Decode``), exactly, in plain Python.

For each id, by its piece's type:

- CONTROL (``<s>``, ``</s>``): nothing.
- UNKNOWN: the model's ``unk_surface`` (``" \\u2047 "`` unless the trainer spec says otherwise).
- BYTE (``<0x41>``): consecutive byte pieces are joined and read as UTF-8 one character at a time, each byte that
  does not start a valid character becoming U+FFFD on its own (sentencepiece's ``DecodeUTF8``: strict, no
  surrogates, no overlong forms, nothing above U+10FFFF; which is where it differs from Python's ``"replace"``,
  which replaces a maximal invalid subsequence once).
- any other piece: its text with ``▁`` as a space; the first such piece loses one leading ``▁`` when the normalizer
  adds a dummy prefix or removes extra whitespace (with ``remove_extra_whitespaces``, each piece does while no text
  was made).

>>> from hf_bpe.formats.sentencepiece_model import Piece
>>> pieces = [Piece("<unk>", 0.0, 2), Piece("<s>", 0.0, 3), Piece("▁hi", -1.0, 1), Piece("▁", -2.0, 1),
...           Piece("<0xC3>", 0.0, 6), Piece("<0xA9>", 0.0, 6)]
>>> decode_ids(pieces, [1, 2, 3, 4, 5, 0, 4], unk_surface=" \\u2047 ", add_dummy_prefix=True,
...            remove_extra_whitespaces=True)
'hi é ⁇ �'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .sentencepiece_model import BYTE, CONTROL, UNKNOWN, Piece

__all__ = ["decode_ids"]

_SPACE = "\u2581"
_REPLACEMENT = "\ufffd"


def decode_ids(pieces: Sequence[Piece], ids: Iterable[int], *, unk_surface: str, add_dummy_prefix: bool,
               remove_extra_whitespaces: bool) -> str:
    """Return the text ``sentencepiece`` decodes ``ids`` to, for a model whose pieces are ``pieces``.

    Args:
        pieces: the model's pieces in id order.
        ids: the ids to decode.
        unk_surface: the text of an unknown piece (the trainer spec's ``unk_surface``).
        add_dummy_prefix, remove_extra_whitespaces: the normalizer spec's flags (either one strips the first
            piece's leading ``▁``; with ``remove_extra_whitespaces`` every leading piece loses one while no text was
            made).

    Raises:
        TypeError: an id that is not an int.
        ValueError: an id outside ``0 .. len(pieces) - 1``, or a byte piece whose text is not ``<0xHH>``.
    """
    out: list[str] = []
    made = False  # any text so far
    raw = bytearray()  # a run of byte pieces, read when the run ends
    is_bos_ws, seen = True, False  # sentencepiece's is_bos_ws and bos_ws_seen
    strip = add_dummy_prefix or remove_extra_whitespaces
    for token in ids:
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"ids must be ints, got {type(token).__name__} {token!r:.80}")
        if not 0 <= token < len(pieces):
            raise ValueError(f"id {token} is out of range; this model's ids are 0..{len(pieces) - 1}")
        piece = pieces[token]
        if piece.type == BYTE:
            raw.append(_byte_of(piece.piece))
            continue
        if raw:
            text = _utf8_as_sentencepiece(bytes(raw))
            raw.clear()
            out.append(text)
            made = made or bool(text)
        if seen or made:
            is_bos_ws = False
        if piece.type == CONTROL:
            text, seen = "", False
        elif piece.type == UNKNOWN:
            text, seen = unk_surface, False
        else:
            text, seen = piece.piece, False
            if is_bos_ws and strip and text.startswith(_SPACE):
                text, seen = text[1:], not remove_extra_whitespaces
            text = text.replace(_SPACE, " ")
        out.append(text)
        made = made or bool(text)
    if raw:
        out.append(_utf8_as_sentencepiece(bytes(raw)))
    return "".join(out)


def _byte_of(text: str) -> int:
    if len(text) != 6 or not text.startswith("<0x") or not text.endswith(">"):
        raise ValueError(f"byte piece {text!r:.20} is not of the form <0xHH>")
    try:
        return int(text[3:5], 16)
    except ValueError:
        raise ValueError(f"byte piece {text!r:.20} is not of the form <0xHH>") from None


def _utf8_as_sentencepiece(data: bytes) -> str:
    """``data`` read as sentencepiece reads byte pieces: a valid character at a time, else one U+FFFD per byte."""
    out = []
    at, n = 0, len(data)
    while at < n:  # advances by at least one byte per turn
        lead = data[at]
        size = (1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110
                else 4 if lead >> 3 == 0b11110 else 0)
        if size and at + size <= n:
            try:
                out.append(data[at:at + size].decode("utf-8"))
                at += size
                continue
            except UnicodeDecodeError:
                pass
        out.append(_REPLACEMENT)
        at += 1
    return "".join(out)
