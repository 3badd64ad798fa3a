"""A model's tokens and merges as a few byte strings: what ``BPEModel`` pickles (and `datasets` hashes).

>>> unpack_bytes(*pack_bytes([b"a", b"bc"]))
[b'a', b'bc']
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate

from ..core._tally import Sha256  # hashlib's sha256 without importing OpenSSL (csrc/sha256.hpp)

__all__ = ["pack", "pack_bytes", "packed_digest", "unpack", "unpack_bytes", "unpack_merges", "unpack_vocab"]

# Little-endian uint32 and int64 with the standard library's array (numpy cost 0.13 s of import in every command
# that loads a model).
_U32 = "I" if array("I").itemsize == 4 else "L"
_I64 = "q"
_SWAP = sys.byteorder == "big"


def _to_le(code: str, values: Iterable[int]) -> bytes:
    packed = array(code, values)
    if _SWAP:
        packed.byteswap()
    return packed.tobytes()


def _from_le(code: str, data: bytes) -> array:
    values = array(code)
    values.frombytes(data)
    if _SWAP:
        values.byteswap()
    return values


def pack_bytes(items: Sequence[bytes]) -> tuple[bytes, bytes]:
    """Byte strings as (their lengths, little-endian uint32; their concatenation)."""
    return _to_le(_U32, map(len, items)), b"".join(items)


def unpack_bytes(lengths: bytes, data: bytes) -> list[bytes]:
    ends = list(accumulate(_from_le(_U32, lengths)))
    return [data[start:end] for start, end in zip([0, *ends[:-1]], ends)]


def pack(vocab: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> tuple[bytes, ...]:
    """The vocabulary and merges as six byte strings (see ``__reduce__``)."""
    tokens = list(vocab)
    ids = _to_le(_I64, vocab.values())
    return (ids, *pack_bytes(tokens), *pack_bytes([a for a, _ in merges]), *pack_bytes([b for _, b in merges]))


def unpack(packed: tuple[bytes, ...]) -> tuple[dict[bytes, int], list[tuple[bytes, bytes]]]:
    """The vocabulary and merges that :func:`pack` packed."""
    return unpack_vocab(packed), unpack_merges(packed)


def unpack_vocab(packed: tuple[bytes, ...]) -> dict[bytes, int]:
    """The vocabulary that :func:`pack` packed."""
    ids, token_lengths, token_data = packed[:3]
    return dict(zip(unpack_bytes(token_lengths, token_data), _from_le(_I64, ids).tolist()))


def unpack_merges(packed: tuple[bytes, ...]) -> list[tuple[bytes, bytes]]:
    """The merges that :func:`pack` packed."""
    left_lengths, left_data, right_lengths, right_data = packed[3:7]
    return list(zip(unpack_bytes(left_lengths, left_data), unpack_bytes(right_lengths, right_data)))


def packed_digest(packed: tuple[bytes, ...], options: list[object]) -> str:
    """sha256 (hex) of packed tokens and merges and the ``repr`` of the options that change encoding."""
    digest = Sha256()
    for part in packed:
        digest.update(len(part).to_bytes(8, "little") + part)
    digest.update(repr(options).encode("utf-8"))
    return digest.hexdigest()
