"""Flat token files for training loops: ``tokens.bin`` (every document's ids, end to end) and ``tokens.json``.

The format small GPT training loops read (nanoGPT's ``train.bin``): the ids of all documents one after the other,
as little-endian ``uint16`` when every id fits (vocabularies up to 65,536 tokens), else ``uint32``, with no header,
so that ``numpy.memmap(path, dtype=..., mode="r")`` reads it back. ``tokens.json`` says what the file holds::

    {"format": "hf_bpe-tokens", "version": 1, "dtype": "uint16", "tokens": N, "documents": D,
     "document_offsets": [0, ..., N], "tokenizer": {...}}

``document_offsets[i]`` is where document ``i`` starts (its EOS, when one was added, is its last id), and the last
entry is ``N``. ``tokenizer`` identifies the tokenizer that wrote it (see :func:`read_token_file`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .gpt2 import read_json

__all__ = ["INDEX_NAME", "TOKENS_NAME", "read_token_file", "token_dtype", "write_token_file"]

TOKENS_NAME = "tokens.bin"
INDEX_NAME = "tokens.json"
_FORMAT = "hf_bpe-tokens"
_DTYPES = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}


def token_dtype(largest_id: int, dtype: str | None = None) -> str:
    """Return the id type of a token file: ``uint16`` when ``largest_id`` fits, else ``uint32``.

    Args:
        largest_id: the largest id the tokenizer can produce.
        dtype: ``"uint16"`` or ``"uint32"`` to choose; ``None`` for the smallest that fits.

    Raises:
        ValueError: an unknown ``dtype``, or ``uint16`` for ids beyond 65,535.

    >>> token_dtype(50256), token_dtype(100276), token_dtype(300, "uint32")
    ('uint16', 'uint32', 'uint32')
    """
    if dtype is not None and dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'uint16', 'uint32' or None, got {dtype!r}")
    if dtype == "uint16" and largest_id > 0xFFFF:
        raise ValueError(f"the tokenizer's ids go up to {largest_id}, beyond uint16's 65,535; use uint32 (or leave "
                         "the type out to choose the smallest that fits)")
    return dtype or ("uint16" if largest_id <= 0xFFFF else "uint32")


def write_token_file(folder: str | os.PathLike[str], documents: Iterable[list[int]] | Iterable[Any], *,
                     dtype: str, tokenizer: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``tokens.bin`` and ``tokens.json`` into ``folder`` (an empty staging folder); return the index.

    Memory is one batch of documents at a time.

    Args:
        folder: where to write (see :func:`hf_bpe.formats.atomic.build_folder` for all-or-nothing output).
        documents: batches of documents, each batch a list of id lists (or an Arrow list array).
        dtype: ``"uint16"`` or ``"uint32"`` (:func:`token_dtype`).
        tokenizer: what identifies the tokenizer (written as ``tokenizer`` in the index).
    """
    numpy_dtype = _DTYPES[token_dtype(0, dtype)]
    limit = np.iinfo(numpy_dtype).max
    offsets = [0]
    total = 0
    with open(Path(folder) / TOKENS_NAME, "wb") as handle:
        for batch in documents:
            flat, lengths = _flatten(batch)
            if flat.size and (flat.min() < 0 or flat.max() > limit):
                raise ValueError(f"an id ({int(flat.max())}) does not fit {dtype}; use uint32")
            handle.write(np.ascontiguousarray(flat.astype(numpy_dtype, copy=False)))  # its buffer, not a bytes copy
            offsets.extend((total + np.cumsum(lengths)).tolist())
            total += int(flat.size)
    index = {"format": _FORMAT, "version": 1, "dtype": dtype, "tokens": total, "documents": len(offsets) - 1,
             "tokenizer": dict(tokenizer), "document_offsets": offsets}
    (Path(folder) / INDEX_NAME).write_text(json.dumps(index, ensure_ascii=False) + "\n", encoding="utf-8")
    return index


def _flatten(batch: Any) -> tuple[np.ndarray, np.ndarray]:
    """A batch of documents as (all ids, each document's length)."""
    if hasattr(batch, "offsets") and hasattr(batch, "flatten"):  # a pyarrow ListArray: no Python ints
        offsets = np.asarray(batch.offsets)
        return np.asarray(batch.flatten()), np.diff(offsets)
    lengths = np.fromiter((len(ids) for ids in batch), dtype=np.int64)
    flat = np.fromiter((i for ids in batch for i in ids), dtype=np.int64, count=int(lengths.sum()))
    return flat, lengths


def read_token_file(folder: str | os.PathLike[str]) -> tuple[np.memmap, dict[str, Any]]:
    """Memory-map a token folder's ids; return them with its index.

    Raises:
        FileNotFoundError: the folder lacks ``tokens.bin`` or ``tokens.json``.
        ValueError: the files disagree with each other (not written by :func:`write_token_file`, or cut short).
    """
    folder = Path(folder)
    for name in (TOKENS_NAME, INDEX_NAME):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{os.fspath(folder / name)!r} does not exist; a token folder holds "
                                    f"{TOKENS_NAME} and {INDEX_NAME} (written by hf-bpe tokenize --format bin)")
    index = read_json(folder / INDEX_NAME, unique_keys=False)[1]
    if not isinstance(index, dict) or index.get("format") != _FORMAT or index.get("dtype") not in _DTYPES:
        raise ValueError(f"{os.fspath(folder / INDEX_NAME)!r} is not an hf_bpe token index")
    dtype = _DTYPES[index["dtype"]]
    size = (folder / TOKENS_NAME).stat().st_size
    if size != index["tokens"] * dtype.itemsize:
        raise ValueError(f"{os.fspath(folder / TOKENS_NAME)!r} has {size} bytes but its index says "
                         f"{index['tokens']} {index['dtype']} ids; the folder is damaged, write it again")
    if size == 0:
        return np.zeros(0, dtype=dtype), index  # type: ignore[return-value]  # numpy cannot map an empty file
    return np.memmap(folder / TOKENS_NAME, dtype=dtype, mode="r"), index
