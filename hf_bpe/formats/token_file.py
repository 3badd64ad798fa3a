"""Flat token files for training loops: ``tokens.bin`` (every document's ids, end to end), ``offsets.bin`` and
``tokens.json``.

The format small GPT training loops read (nanoGPT's ``train.bin``): the ids of all documents one after the other,
as little-endian ``uint16`` when every id fits (vocabularies up to 65,536 tokens), else ``uint32``, with no header,
so that ``numpy.memmap(path, dtype=..., mode="r")`` reads it back. ``offsets.bin`` holds ``D + 1`` little-endian
``int64``: where each document starts (its EOS, when one was added, is its last id), the last entry ``N``.
``tokens.json`` says what the files hold::

    {"format": "hf_bpe-tokens", "version": 2, "dtype": "uint16", "tokens": N, "documents": D,
     "offsets": "offsets.bin", "tokenizer": {...}}

Both binary files are written as the documents come (memory stays one batch for any corpus size). Version 1
folders (written before ``offsets.bin``) held the offsets as a JSON list, ``"document_offsets"``; they stay
readable, and :func:`read_token_file` returns the offsets under that key for either version. ``tokenizer``
identifies the tokenizer that wrote it (see :func:`read_token_file`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core._core import token_file_chunk
from ..errors import excerpt
from .gpt2 import read_json

if TYPE_CHECKING:
    import numpy as np

__all__ = ["INDEX_NAME", "OFFSETS_NAME", "TOKENS_NAME", "TokenFileWriter", "read_token_file", "token_dtype",
           "write_token_file"]

TOKENS_NAME = "tokens.bin"
OFFSETS_NAME = "offsets.bin"
INDEX_NAME = "tokens.json"
_VERSION = 2
_FORMAT = "hf_bpe-tokens"
# Each type's numpy spelling and width. numpy is imported only where arrays are made: a token file is written from
# the encoder's int32 buffers without it (its import was 0.1 s of every `hf-bpe tokenize --format bin`).
_DTYPES = {"uint16": ("<u2", 2), "uint32": ("<u4", 4)}


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


class TokenFileWriter:
    """Append documents to ``tokens.bin`` and ``offsets.bin`` as they come; :meth:`close` writes ``tokens.json``.

    Each :meth:`append` hands its arrays to a writing thread and returns once the previous batch is on disk, so
    the caller encodes batch k + 1 while batch k is written (file writes release the GIL); memory is two batches.

    Args:
        folder: an existing (staging) folder to write into.
        dtype: ``"uint16"`` or ``"uint32"`` (:func:`token_dtype`).
        tokenizer: what identifies the tokenizer (written as ``tokenizer`` in the index).

    >>> import tempfile, numpy as np
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     writer = TokenFileWriter(folder, dtype="uint16", tokenizer={})
    ...     writer.append(np.array([5, 6, 7], dtype=np.int32), np.array([0, 2, 3]))
    ...     writer.append([300], [0, 1])
    ...     index = writer.close()
    ...     ids, index = read_token_file(folder)
    ...     ids.tolist(), index["document_offsets"].tolist()
    ([5, 6, 7, 300], [0, 2, 3, 4])
    """

    def __init__(self, folder: str | os.PathLike[str], *, dtype: str, tokenizer: Mapping[str, Any]) -> None:
        self._folder = Path(folder)
        self._dtype = dtype
        self._width = _DTYPES[token_dtype(0, dtype)][1]
        self._largest = (1 << 8 * self._width) - 1
        self._tokenizer = dict(tokenizer)
        self._tokens = 0
        self._documents = 0
        self._ids = open(self._folder / TOKENS_NAME, "wb")
        self._offsets = open(self._folder / OFFSETS_NAME, "wb")
        self._offsets.write(bytes(8))  # the first document starts at 0
        # One thread per batch, joined before the next starts (not concurrent.futures: its import, with logging's,
        # was ~2 % of a whole `hf-bpe tokenize` process on a small file).
        self._pending: threading.Thread | None = None
        self._failure: BaseException | None = None

    def append(self, ids: Any, offsets: Any) -> None:
        """Add documents: ``ids`` (integers) end to end, ``offsets`` where each starts (from 0, one more entry).

        Raises:
            ValueError: an id does not fit the file's dtype.
        """
        flat, starts = _int32_view(ids), _int64_view(offsets)
        if flat is not None and starts is not None:  # the encoder's buffers (or int32 arrays): packed in C
            narrow, ends, low, high = token_file_chunk(flat, starts, self._tokens, self._width)
            count, documents = len(flat), max(len(starts) - 1, 0)
        else:
            narrow, ends, low, high, count, documents = self._with_numpy(ids, offsets)
        if count and (low < 0 or high > self._largest):
            raise ValueError(f"an id ({high if high > 0 else low}) does not fit {self._dtype}; use uint32")
        self._tokens += count
        self._documents += documents
        self._wait()
        self._pending = threading.Thread(target=self._write, args=(narrow, ends), name="hf_bpe-token-writer",
                                         daemon=True)
        self._pending.start()

    def _with_numpy(self, ids: Any, offsets: Any) -> tuple[Any, Any, int, int, int, int]:
        """:meth:`append`'s packing for other integers (lists, int64 arrays): numpy."""
        import numpy as np

        flat = np.asarray(ids)
        starts = np.asarray(offsets, dtype=np.int64)
        low, high = (int(flat.min()), int(flat.max())) if flat.size else (0, -1)
        if flat.size and (low < 0 or high > self._largest):
            return None, None, low, high, int(flat.size), 0  # append refuses it
        narrow = np.ascontiguousarray(flat.astype(_DTYPES[self._dtype][0], copy=False))
        ends = np.ascontiguousarray(starts[1:] + self._tokens, dtype="<i8")
        return narrow, ends, low, high, int(flat.size), len(starts) - 1

    def _write(self, narrow: Any, ends: Any) -> None:
        try:
            self._ids.write(narrow)  # its buffer, not a bytes copy
            self._offsets.write(ends)
        except BaseException as exc:  # raised in the caller's thread by _wait
            self._failure = exc

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.join()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure  # what the write raised (a full disk)

    def close(self) -> dict[str, Any]:
        """Finish the binary files and write ``tokens.json``; return the index."""
        try:
            self._wait()
        finally:
            self._ids.close()
            self._offsets.close()
        index = {"format": _FORMAT, "version": _VERSION, "dtype": self._dtype, "tokens": self._tokens,
                 "documents": self._documents, "offsets": OFFSETS_NAME, "tokenizer": self._tokenizer}
        (self._folder / INDEX_NAME).write_text(json.dumps(index, ensure_ascii=False) + "\n", encoding="utf-8")
        return index

    def abort(self) -> None:
        """Stop writing (after an error): wait for the write under way and close the files, ignoring its error."""
        try:
            self._wait()
        except Exception:  # the caller is already raising; the staging folder is discarded
            pass
        finally:
            self._ids.close()
            self._offsets.close()


def _int32_view(values: Any) -> memoryview | None:
    """A flat C-contiguous int32 buffer's view (the encoder's ``TokenBuffer``, an int32 array), else None."""
    try:
        view = memoryview(values)
    except TypeError:  # a list
        return None
    return view if view.format == "i" and view.itemsize == 4 and view.ndim == 1 and view.c_contiguous else None


def _int64_view(values: Any) -> memoryview | None:
    """A flat C-contiguous int64 buffer's view (``TokenBuffer`` offsets, an int64 array), else None."""
    try:
        view = memoryview(values)
    except TypeError:
        return None
    return view if view.format in ("q", "l") and view.itemsize == 8 and view.ndim == 1 and view.c_contiguous \
        else None


def write_token_file(folder: str | os.PathLike[str], documents: Iterable[list[int]] | Iterable[Any], *,
                     dtype: str, tokenizer: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``tokens.bin``, ``offsets.bin`` and ``tokens.json`` into ``folder`` (an empty staging folder); return
    the index.

    Memory is one batch of documents at a time.

    Args:
        folder: where to write (see :func:`hf_bpe.formats.atomic.build_folder` for all-or-nothing output).
        documents: batches of documents, each batch a list of id lists (or an Arrow list array).
        dtype: ``"uint16"`` or ``"uint32"`` (:func:`token_dtype`).
        tokenizer: what identifies the tokenizer (written as ``tokenizer`` in the index).
    """
    import numpy as np

    writer = TokenFileWriter(folder, dtype=dtype, tokenizer=tokenizer)
    try:
        for batch in documents:
            flat, lengths = _flatten(batch)
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            writer.append(flat, offsets)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def _flatten(batch: Any) -> tuple[np.ndarray, np.ndarray]:
    """A batch of documents as (all ids, each document's length)."""
    import numpy as np

    if hasattr(batch, "offsets") and hasattr(batch, "flatten"):  # a pyarrow ListArray: no Python ints
        offsets = np.asarray(batch.offsets)
        return np.asarray(batch.flatten()), np.diff(offsets)
    lengths = np.fromiter((len(ids) for ids in batch), dtype=np.int64)
    flat = np.fromiter((i for ids in batch for i in ids), dtype=np.int64, count=int(lengths.sum()))
    return flat, lengths


def read_token_file(folder: str | os.PathLike[str]) -> tuple[np.memmap, dict[str, Any]]:
    """Memory-map a token folder's ids; return them with its index.

    The index holds the document offsets under ``"document_offsets"`` in both versions: ``offsets.bin`` memory-mapped
    (``int64``, version 2) or the JSON list (version 1).

    Raises:
        FileNotFoundError: the folder lacks ``tokens.bin`` or ``tokens.json`` (or, version 2, ``offsets.bin``).
        ValueError: naming the file and what is wrong: the files disagree with each other (not written by
            :func:`write_token_file`, or cut short), a count in the index is not an int >= 0, or the offsets do not
            run from 0 to the token count without decreasing (every one is checked, vectorised).
    """
    import numpy as np

    folder = Path(folder)
    for name in (TOKENS_NAME, INDEX_NAME):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{os.fspath(folder / name)!r} does not exist; a token folder holds "
                                    f"{TOKENS_NAME} and {INDEX_NAME} (written by hf-bpe tokenize --format bin)")
    index = read_json(folder / INDEX_NAME, unique_keys=False)[1]
    if not isinstance(index, dict) or index.get("format") != _FORMAT or index.get("dtype") not in _DTYPES:
        raise ValueError(f"{os.fspath(folder / INDEX_NAME)!r} is not an hf_bpe token index")
    if index.get("version") not in (1, _VERSION):
        raise ValueError(f"{os.fspath(folder / INDEX_NAME)!r} is version {index.get('version')!r} of the token "
                         f"format; this hf_bpe reads versions 1 and {_VERSION}: upgrade hf_bpe")
    dtype = np.dtype(_DTYPES[index["dtype"]][0])
    tokens, documents = (_count(folder / INDEX_NAME, index, key) for key in ("tokens", "documents"))
    size = (folder / TOKENS_NAME).stat().st_size
    if size != tokens * dtype.itemsize:
        raise ValueError(f"{os.fspath(folder / TOKENS_NAME)!r} has {size} bytes but its index says "
                         f"{tokens} {index['dtype']} ids; the folder is damaged, write it again")
    if index["version"] == _VERSION:
        index["document_offsets"] = _read_offsets(folder, tokens, documents)
    else:
        _check_offsets(folder / INDEX_NAME, "its document_offsets", _json_offsets(folder, index), tokens, documents)
    if size == 0:
        return np.zeros(0, dtype=dtype), index  # type: ignore[return-value]  # numpy cannot map an empty file
    return np.memmap(folder / TOKENS_NAME, dtype=dtype, mode="r"), index


def _count(path: Path, index: dict[str, Any], key: str) -> int:
    """The index's ``tokens`` or ``documents``: an int >= 0, else a ValueError naming the file and the field."""
    value = index.get(key)
    if type(value) is not int or value < 0:
        raise ValueError(f"{os.fspath(path)!r}: {key!r} is {excerpt(value)}, not a count (an int >= 0); the folder "
                         "is damaged, write it again")
    return value


def _json_offsets(folder: Path, index: dict[str, Any]) -> np.ndarray:
    """A version 1 index's ``document_offsets``: a JSON list of ints, as int64."""
    import numpy as np

    offsets = index.get("document_offsets")
    if not isinstance(offsets, list) or not all(type(x) is int for x in offsets):
        raise ValueError(f"{os.fspath(folder / INDEX_NAME)!r}: 'document_offsets' is {excerpt(offsets)}, not a "
                         "list of ints; the folder is damaged, write it again")
    try:
        return np.asarray(offsets, dtype=np.int64)
    except OverflowError:
        raise ValueError(f"{os.fspath(folder / INDEX_NAME)!r}: 'document_offsets' holds an int beyond int64; the "
                         "folder is damaged, write it again") from None


# Offsets checked a block at a time: the differences of a whole offsets.bin would cost its size again in memory.
_CHECK_BLOCK = 1 << 20


def _check_offsets(path: Path, what: str, offsets: np.ndarray, tokens: int, documents: int) -> None:
    """Raise unless ``offsets`` holds ``documents + 1`` entries from 0 to ``tokens``, none less than the one before
    (so every one lies in ``[0, tokens]``): one vectorised pass, a block at a time."""
    import numpy as np

    def damaged(problem: str) -> ValueError:
        return ValueError(f"{os.fspath(path)!r}: {what} {problem}; the folder is damaged, write it again")

    if len(offsets) != documents + 1:
        raise damaged(f"hold {len(offsets)} offsets but the index says {documents} documents (one more offset)")
    if int(offsets[0]) != 0 or int(offsets[-1]) != tokens:
        raise damaged(f"run from {int(offsets[0])} to {int(offsets[-1])}, not from 0 to the index's {tokens} tokens")
    for start in range(0, len(offsets) - 1, _CHECK_BLOCK):  # advances by a block
        block = np.asarray(offsets[start:start + _CHECK_BLOCK + 1])
        falling = np.flatnonzero(np.diff(block) < 0)
        if len(falling):
            at = start + int(falling[0]) + 1
            raise damaged(f"decrease at entry {at} ({int(offsets[at - 1])} then {int(offsets[at])}): a document's "
                          "start must not precede the one before")


def _read_offsets(folder: Path, tokens: int, documents: int) -> np.ndarray:
    """Memory-map a version 2 folder's ``offsets.bin`` (checked against the index, every entry)."""
    import numpy as np

    path = folder / OFFSETS_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{os.fspath(path)!r} does not exist; a version {_VERSION} token folder holds "
                                f"{TOKENS_NAME}, {OFFSETS_NAME} and {INDEX_NAME}")
    if path.stat().st_size != (documents + 1) * 8:
        raise ValueError(f"{os.fspath(path)!r} has {path.stat().st_size} bytes but its index says {documents!r} "
                         "documents (8 bytes per document, plus 8); the folder is damaged, write it again")
    offsets = np.memmap(path, dtype="<i8", mode="r")
    _check_offsets(path, "its offsets", offsets, tokens, documents)
    return offsets
