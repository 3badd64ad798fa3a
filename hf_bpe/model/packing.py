"""A model's tokens and merges as a few byte strings: what ``BPEModel`` pickles (and `datasets` hashes).

>>> unpack_bytes(*pack_bytes([b"a", b"bc"]))
[b'a', b'bc']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import hashlib

import numpy as np

__all__ = ["pack", "pack_bytes", "packed_digest", "unpack", "unpack_bytes"]


def pack_bytes(items: Sequence[bytes]) -> tuple[bytes, bytes]:
    """Byte strings as (their lengths, little-endian uint32; their concatenation)."""
    return np.fromiter(map(len, items), dtype="<u4", count=len(items)).tobytes(), b"".join(items)


def unpack_bytes(lengths: bytes, data: bytes) -> list[bytes]:
    ends = np.cumsum(np.frombuffer(lengths, dtype="<u4"), dtype=np.int64).tolist()
    return [data[start:end] for start, end in zip([0, *ends[:-1]], ends)]


def pack(vocab: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> tuple[bytes, ...]:
    """The vocabulary and merges as six byte strings (see ``__reduce__``)."""
    tokens = list(vocab)
    ids = np.fromiter(vocab.values(), dtype="<i8", count=len(tokens)).tobytes()
    return (ids, *pack_bytes(tokens), *pack_bytes([a for a, _ in merges]), *pack_bytes([b for _, b in merges]))


def unpack(packed: tuple[bytes, ...]) -> tuple[dict[bytes, int], list[tuple[bytes, bytes]]]:
    """The vocabulary and merges that :func:`pack` packed."""
    ids, token_lengths, token_data, left_lengths, left_data, right_lengths, right_data = packed
    vocab = dict(zip(unpack_bytes(token_lengths, token_data), np.frombuffer(ids, dtype="<i8").tolist()))
    return vocab, list(zip(unpack_bytes(left_lengths, left_data), unpack_bytes(right_lengths, right_data)))


def packed_digest(packed: tuple[bytes, ...], options: list[object]) -> str:
    """sha256 (hex) of packed tokens and merges and the ``repr`` of the options that change encoding."""
    digest = hashlib.sha256()
    for part in packed:
        digest.update(len(part).to_bytes(8, "little") + part)
    digest.update(repr(options).encode("utf-8"))
    return digest.hexdigest()
