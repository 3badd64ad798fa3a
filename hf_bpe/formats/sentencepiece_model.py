"""SentencePiece ``.model`` files: read the ``ModelProto`` (pieces, trainer and normalizer options) without protobuf.

A ``.model`` file is one protobuf message (``sentencepiece_model.proto``). Only the fields that decide how a model
encodes or which pieces BPE training makes are decoded here: the pieces (text, score, type), the trainer's
``model_type``, ``byte_fallback``, ``treat_whitespace_as_suffix``, special-token ids/pieces and its BPE options
(``character_coverage``, ``max_sentencepiece_length``, ``split_*``, symbols, ...), and the normalizer spec (rule
name, the precompiled charsmap, ``add_dummy_prefix``, ``remove_extra_whitespaces``, ``escape_whitespaces``). Absent
fields take the proto's defaults. Other fields are skipped (their wire types say how long they are) and kept, with
which decoded fields were present, so that a model read from a file writes that file back byte for byte.

>>> model = SentencePieceModel.from_bytes(bytes.fromhex("0a0e0a053c756e6b3e15000000001802" "12021802"))
>>> model.pieces, model.model_type, model.trainer["byte_fallback"]
((Piece(piece='<unk>', score=0.0, type=2),), 'bpe', False)
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core.sentencepiece_normalize import parse_charsmap
from ..errors import EXCERPT

__all__ = ["DEFAULT_UNK_SURFACE", "MODEL_TYPES", "PIECE_TYPES", "TRAINER_DEFAULTS", "Piece", "SentencePieceModel",
           "check_with_sentencepiece"]

# What decoding writes for an unknown piece unless a model's trainer spec says otherwise (sentencepiece's
# kDefaultUnknownSymbol, " \u2047 "): spelled once here for the model's default, spm_train's and the loader's.
DEFAULT_UNK_SURFACE = " \u2047 "

# sentencepiece_model.proto's enums.
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# Field numbers (ModelProto: 1 pieces, 2 trainer_spec, 3 normalizer_spec; SentencePiece: 1 piece, 2 score, 3 type).
_TRAINER_FIELDS = {
    3: ("model_type", "varint"), 4: ("vocab_size", "varint"), 24: ("treat_whitespace_as_suffix", "bool"),
    35: ("byte_fallback", "bool"), 40: ("unk_id", "int32"), 41: ("bos_id", "int32"), 42: ("eos_id", "int32"),
    43: ("pad_id", "int32"), 45: ("unk_piece", "str"), 46: ("bos_piece", "str"), 47: ("eos_piece", "str"),
    48: ("pad_piece", "str"), 44: ("unk_surface", "str"),
    # The trainer's options that decide which pieces BPE training makes (hf_bpe.extend_sentencepiece reads them).
    10: ("character_coverage", "float"), 18: ("max_sentence_length", "int32"),
    20: ("max_sentencepiece_length", "int32"), 21: ("split_by_unicode_script", "bool"),
    22: ("split_by_whitespace", "bool"), 23: ("split_by_number", "bool"), 25: ("split_digits", "bool"),
    26: ("allow_whitespace_only_pieces", "bool"), 30: ("control_symbols", "strs"),
    31: ("user_defined_symbols", "strs"), 33: ("hard_vocab_limit", "bool"), 36: ("required_chars", "str"),
    # The other options hf_bpe's trainers accept, recorded as spm_train records them (issue 33.6): what was used.
    # (spm_train records none of accept_language, self_test_sample_size, mining_/training_sentence_size,
    # train_extremely_large_corpus, differential_privacy_noise_level/_clipping_threshold: they are skipped fields.)
    7: ("input_format", "str"), 11: ("input_sentence_size", "varint"), 14: ("seed_sentencepiece_size", "int32"),
    15: ("shrinking_factor", "float"), 16: ("num_threads", "int32"), 17: ("num_sub_iterations", "int32"),
    19: ("shuffle_input_sentence", "bool"), 32: ("vocabulary_output_piece_score", "bool"),
    34: ("use_all_vocab", "bool"), 50: ("enable_differential_privacy", "bool"),
    55: ("auto_character_coverage", "bool"),
}
_TRAINER_DEFAULTS: dict[str, Any] = {
    "model_type": 1, "vocab_size": 8000, "treat_whitespace_as_suffix": False, "byte_fallback": False,
    "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "unk_piece": "<unk>", "bos_piece": "<s>",
    "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": DEFAULT_UNK_SURFACE,
    "character_coverage": 0.9995, "max_sentence_length": 4192, "max_sentencepiece_length": 16,
    "split_by_unicode_script": True, "split_by_whitespace": True, "split_by_number": True, "split_digits": False,
    "allow_whitespace_only_pieces": False, "control_symbols": (), "user_defined_symbols": (),
    "hard_vocab_limit": True, "required_chars": "",
    "input_format": "", "input_sentence_size": 0, "seed_sentencepiece_size": 1000000, "shrinking_factor": 0.75,
    "num_threads": 16, "num_sub_iterations": 2, "shuffle_input_sentence": True, "vocabulary_output_piece_score": True,
    "use_all_vocab": False, "enable_differential_privacy": False, "auto_character_coverage": False,
}
# TrainerSpec's fields as decoded here, with the proto's defaults (what sentencepiece reads where a file has none).
TRAINER_DEFAULTS: Mapping[str, Any] = MappingProxyType(_TRAINER_DEFAULTS)
_NORMALIZER_FIELDS = {
    1: ("name", "str"), 2: ("precompiled_charsmap", "bytes"), 3: ("add_dummy_prefix", "bool"),
    4: ("remove_extra_whitespaces", "bool"), 5: ("escape_whitespaces", "bool"),
}
_NORMALIZER_DEFAULTS: dict[str, Any] = {
    "name": "", "precompiled_charsmap": b"", "add_dummy_prefix": True, "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
}


@dataclass(frozen=True)
class Piece:
    """One vocabulary entry: its text (``▁`` for spaces), score and type (a key of :data:`PIECE_TYPES`)."""

    piece: str
    score: float
    type: int


@dataclass(frozen=True)
class SentencePieceModel:
    """The decoded parts of a SentencePiece ``ModelProto``; ids are positions in ``pieces``.

    ``source`` (set by :meth:`from_bytes`, not compared) is how the file spelled what this class does not decode:
    the fields it skips (kept as they were) and which decoded fields were present, so that :meth:`to_bytes` gives
    back the file it was read from byte for byte (for files sentencepiece wrote: fields in number order).
    """

    pieces: tuple[Piece, ...]
    trainer: dict[str, Any] = field(default_factory=lambda: dict(_TRAINER_DEFAULTS))
    normalizer: dict[str, Any] = field(default_factory=lambda: dict(_NORMALIZER_DEFAULTS))

    @property
    def encoding_normalizer(self) -> dict[str, Any]:
        """The normalizer spec with what sentencepiece's normalizer also reads from the trainer spec
        (``treat_whitespace_as_suffix``: the dummy ``▁`` at the end), for encoding."""
        return {**self.normalizer, "treat_whitespace_as_suffix": bool(self.trainer.get("treat_whitespace_as_suffix"))}
    source: _Source | None = field(default=None, repr=False, compare=False)

    @property
    def model_type(self) -> str:
        """``"bpe"``, ``"unigram"``, ``"word"`` or ``"char"``."""
        return MODEL_TYPES.get(self.trainer["model_type"], f"unknown ({self.trainer['model_type']})")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SentencePieceModel:
        """Read a ``.model`` file.

        Raises:
            FileNotFoundError: no such file.
            ValueError: the file is not a SentencePiece model (naming the path and what is wrong).
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{os.fspath(path)!r} is not a file; pass a SentencePiece .model file")
        return cls.read(path.read_bytes(), os.fspath(path))

    @classmethod
    def read(cls, data: bytes, name: str) -> SentencePieceModel:
        """Decode the bytes of the model file ``name``, refusing what ``sentencepiece`` itself refuses.

        Raises:
            ValueError: naming the file and, where it can be told, the field: a model ``sentencepiece`` does not
                load (:func:`check_with_sentencepiece`) or that this reader cannot decode.
        """
        try:
            check_with_sentencepiece(data)
            return cls.from_bytes(data)
        except ValueError as exc:
            raise ValueError(f"{name!r} is not a SentencePiece model: {exc}") from None

    def to_bytes(self) -> bytes:
        """Serialize as a ``ModelProto`` that ``sentencepiece`` loads: the pieces and the decoded spec fields.

        >>> model = SentencePieceModel((Piece("<unk>", 0.0, UNKNOWN), Piece("a", -1.0, NORMAL)))
        >>> SentencePieceModel.from_bytes(model.to_bytes()) == model
        True
        """
        out = bytearray()
        for piece in self.pieces:
            body = _field(1, piece.piece.encode("utf-8")) + _key(2, 5) + struct.pack("<f", piece.score)
            if piece.type != NORMAL:
                body += _key(3, 0) + _varint_bytes(piece.type)
            out += _field(1, body)
        source = self.source
        if source is None:
            out += _field(2, _encode(_TRAINER_FIELDS, self.trainer))
            out += _field(3, _encode(_NORMALIZER_FIELDS, self.normalizer))
            return bytes(out)
        out += _field(2, _encode(_TRAINER_FIELDS, self.trainer, source.trainer, _TRAINER_DEFAULTS))
        out += _field(3, _encode(_NORMALIZER_FIELDS, self.normalizer, source.normalizer, _NORMALIZER_DEFAULTS))
        for number, wire, value in source.model:
            out += _raw(number, wire, value)
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes) -> SentencePieceModel:
        """Decode a serialized ``ModelProto``.

        Raises:
            ValueError: the bytes are not a ``ModelProto`` this reader decodes, hold no pieces, or carry a damaged
                ``precompiled_charsmap`` (the message names the field).
        """
        pieces: list[Piece] = []
        trainer = dict(_TRAINER_DEFAULTS)
        normalizer = dict(_NORMALIZER_DEFAULTS)
        other: list[tuple[int, int, int | bytes]] = []
        trainer_source = normalizer_source = _MessageSource(frozenset(), ())
        for number, wire, value in _fields(data):
            if number == 1 and isinstance(value, bytes):
                pieces.append(_piece(value, len(pieces)))
            elif number == 2 and isinstance(value, bytes):
                trainer_source = _decode_into(value, _TRAINER_FIELDS, trainer)
            elif number == 3 and isinstance(value, bytes):
                normalizer_source = _decode_into(value, _NORMALIZER_FIELDS, normalizer)
            else:
                other.append((number, wire, value))
        if not pieces:
            raise ValueError("it holds no pieces")
        if normalizer["precompiled_charsmap"]:  # refused here, not first by an encoder built from it
            parse_charsmap(normalizer["precompiled_charsmap"])
        return cls(tuple(pieces), trainer, normalizer, _Source(trainer_source, normalizer_source, tuple(other)))


@dataclass(frozen=True)
class _MessageSource:
    """One message as a file spelled it: the decoded fields it held, and the others as they were."""

    present: frozenset[int]
    skipped: tuple[tuple[int, int, int | bytes], ...]


@dataclass(frozen=True)
class _Source:
    trainer: _MessageSource
    normalizer: _MessageSource
    model: tuple[tuple[int, int, int | bytes], ...]  # ModelProto's fields other than pieces and the two specs


# sentencepiece's refusals (model_interface.cc, normalizer.cc, sentencepiece_processor.cc) -> the field they are about.
_REFUSED_FIELDS = (
    ("ParseFromArray", "the file (not a serialized ModelProto)"),
    ("normalization rule", "normalizer_spec.precompiled_charsmap"),
    ("Trie data", "normalizer_spec.precompiled_charsmap"),
    ("piece", "pieces"), ("already defined", "pieces"), ("unk is not defined", "pieces (no unknown piece)"),
)


def check_with_sentencepiece(data: bytes) -> None:
    """Raise ValueError, naming the field, unless ``sentencepiece.SentencePieceProcessor`` loads ``data``.

    A model that sentencepiece refuses (a corrupt ``precompiled_charsmap``, an empty or repeated piece, no unknown
    piece) encodes nothing there, so no conversion of it can be exact.
    """
    import sentencepiece

    try:
        sentencepiece.SentencePieceProcessor().LoadFromSerializedProto(data)
    except Exception as exc:  # noqa: BLE001 - sentencepiece reports every refusal as RuntimeError (or OSError)
        message = " ".join(str(exc).removeprefix("INTERNAL:").split())
        where = next((f for key, f in _REFUSED_FIELDS if key in message), "the model")
        raise ValueError(f"sentencepiece refuses it ({where}): {message[:EXCERPT]}"
                         f"{'...' if len(message) > EXCERPT else ''}") from None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("a varint runs past the end of the data")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("a varint is longer than 10 bytes")


def _fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """The (field number, wire type, value) triples of one message: varints as int, the others as their bytes."""
    out: list[tuple[int, int, int | bytes]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            out.append((number, wire, value))
            continue
        if wire == 2:
            size, at = _varint(data, at)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ValueError(f"field {number} has wire type {wire}, which this reader does not know")
        if at + size > len(data):
            raise ValueError(f"field {number} runs past the end of the data")
        out.append((number, wire, data[at : at + size]))
        at += size
    return out


def _piece(data: bytes, index: int) -> Piece:
    text, score, kind = "", 0.0, NORMAL
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2 and isinstance(value, bytes):
            text = value.decode("utf-8")
        elif number == 2 and wire == 5 and isinstance(value, bytes):
            score = struct.unpack("<f", value)[0]
        elif number == 3 and wire == 0 and isinstance(value, int):
            kind = value
    if kind not in PIECE_TYPES:
        raise ValueError(f"piece {index} ({text!r}) has unknown type {kind}")
    return Piece(text, score, kind)


def _decode_into(data: bytes, spec: dict[int, tuple[str, str]], into: dict[str, Any]) -> _MessageSource:
    present: set[int] = set()
    skipped: list[tuple[int, int, int | bytes]] = []
    for number, wire, value in _fields(data):
        if number not in spec:
            skipped.append((number, wire, value))
            continue
        present.add(number)
        name, kind = spec[number]
        if kind in ("varint", "bool", "int32") and isinstance(value, int):
            if kind == "int32" and value >= 1 << 63:
                value -= 1 << 64  # negative int32 values are 10-byte two's-complement varints
            into[name] = bool(value) if kind == "bool" else value
        elif kind == "str" and isinstance(value, bytes):
            into[name] = value.decode("utf-8")
        elif kind == "strs" and isinstance(value, bytes):  # repeated: one field per item
            into[name] = (*into[name], value.decode("utf-8"))
        elif kind == "float" and isinstance(value, bytes) and len(value) == 4:
            into[name] = _short_float(value)
        elif kind == "bytes" and isinstance(value, bytes):
            into[name] = value
        else:
            skipped.append((number, wire, value))  # an unexpected wire type: kept as it was
            present.discard(number)
    return _MessageSource(frozenset(present), tuple(skipped))


def _short_float(data: bytes) -> float:
    """A float32 field as the shortest decimal that is the same float32 (``0.99995``, not ``0.999949991...``), as
    it was most likely written; it packs back to the same four bytes."""
    exact = struct.unpack("<f", data)[0]
    for digits in range(6, 10):
        value = float(f"{exact:.{digits}g}")
        if struct.pack("<f", value) == data:
            return value
    return exact


def _varint_bytes(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32: ten-byte two's complement, as protobuf writes it
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint_bytes(number << 3 | wire)


def _field(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _varint_bytes(len(data)) + data


def _raw(number: int, wire: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _key(number, wire) + _varint_bytes(value)
    if wire == 2:
        return _field(number, value)
    return _key(number, wire) + value


def _encode(spec: dict[int, tuple[str, str]], values: dict[str, Any], source: _MessageSource | None = None,
            defaults: dict[str, Any] | None = None) -> bytes:
    """A message's fields in number order: the decoded ones (with a ``source``: those it held, and any other whose
    value is not the default) and the source's skipped ones as they were."""
    parts: list[tuple[int, bytes]] = []
    for number, (name, kind) in sorted(spec.items()):
        if name not in values:
            continue
        value = values[name]
        if source is not None and defaults is not None and number not in source.present and value == defaults[name]:
            continue
        if kind in ("varint", "bool", "int32"):
            parts.append((number, _key(number, 0) + _varint_bytes(int(value))))
        elif kind == "str":
            parts.append((number, _field(number, value.encode("utf-8"))))
        elif kind == "strs":
            parts.append((number, b"".join(_field(number, item.encode("utf-8")) for item in value)))
        elif kind == "float":
            parts.append((number, _key(number, 5) + struct.pack("<f", value)))
        else:
            parts.append((number, _field(number, bytes(value))))
    if source is not None:
        parts += [(number, _raw(number, wire, value)) for number, wire, value in source.skipped]
    parts.sort(key=lambda part: part[0])  # stable: a repeated field keeps its order
    return b"".join(part for _, part in parts)
