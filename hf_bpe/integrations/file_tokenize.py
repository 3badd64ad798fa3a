"""Files straight to a token file (``hf-bpe tokenize FILE... --format bin``): no ``datasets``, flat memory.

:func:`tokenize_files` writes the folder :mod:`hf_bpe.formats.token_file` describes, equal id for id and offset for
offset to :func:`hf_bpe.integrations.preprocess.save_tokenized` on the same documents, made as follows:

- **Text files** are read (not memory-mapped: a file that shrinks under a mapping is a SIGBUS; one that changes while
  it is read is a ``ValueError`` naming it) in windows of about 4 MB that end at a document's end, into one reused
  buffer. A window's documents, found by ``memchr``/``memmem`` in compiled code, are encoded on every core where they
  lie (an ASCII document straight from the buffer, any other decoded alone: strict UTF-8, an invalid byte is a
  ``ValueError`` naming the file, its line and byte offset; ``WordEncoder.encode_documents``), so memory stays about
  two windows of ids whatever the file's size. A document is the text between two separators (``"\\n"`` by default:
  each line, its ``"\\n"`` left out and a ``"\\r"`` before it kept, as ``load_text_files`` reads lines), the separator
  left out; a separator at the start makes an empty first document and two in a row an empty one between; a file
  ending in its separator has no empty last document; every file ends a document. A document longer than a window is
  encoded in parts, cut before a space that follows an ASCII letter or digit (where every named pattern ends a piece:
  :mod:`hf_bpe.core.fragment`; the ids are the whole document's), so memory stays flat; where there is no such place,
  or for a custom regex or a prefix space, the window grows (doubling: linear work) and the document is encoded whole.
- **JSON Lines** (``.jsonl``, ``.ndjson``) and **Parquet** (``.parquet``) files give one document per row: the
  string in the column ``text_column`` (blank JSON lines are skipped; Parquet row groups are streamed by pyarrow).

Each document's ids are ``encode_ordinary``'s (special-token text in a document is text), then the EOS id when
``add_eos`` (with a separator such as ``"<|endoftext|>"``, the separator marks where a document ends and the EOS
id is what ends it in the ids: the separator's text is never encoded). ``skip_empty`` leaves out empty documents.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import excerpt
from ..model.bpe import BPEModel

__all__ = ["input_kind", "tokenize_files"]

_WINDOW = 4 << 20  # bytes per window: memory is ~6 windows (ids gathered, narrowed, the previous being written)
_JSONL = (".jsonl", ".ndjson")
_PARQUET = (".parquet",)


def input_kind(path: str | os.PathLike[str]) -> str:
    """Return how :func:`tokenize_files` reads a file, by its name: ``"jsonl"``, ``"parquet"`` or ``"text"``.

    >>> input_kind("a.jsonl"), input_kind("b.parquet"), input_kind("c.txt")
    ('jsonl', 'parquet', 'text')
    """
    suffix = Path(path).suffix.lower()
    return "jsonl" if suffix in _JSONL else "parquet" if suffix in _PARQUET else "text"


def tokenize_files(paths: Sequence[str | os.PathLike[str]], tokenizer: Any, out: str | os.PathLike[str], *,
                   separator: str = "\n", text_column: str = "text", add_eos: bool = True,
                   eos_token: str | None = None, skip_empty: bool = False, dtype: str | None = None,
                   force: bool = False, num_threads: int | None = None, show_progress: bool = False,
                   _window_bytes: int = _WINDOW) -> Path:
    """Tokenize files into the token folder ``out`` (``tokens.bin``, ``offsets.bin``, ``tokens.json``), streaming.

    Args:
        paths: UTF-8 text files (documents split at ``separator``), ``.jsonl``/``.ndjson`` and ``.parquet`` files
            (one document per row, the column ``text_column``), read in order.
        tokenizer: a :class:`~hf_bpe.BPEModel`, an :class:`~hf_bpe.HFBPETokenizer` or a tokenizer folder.
        out: the folder to create; it appears whole or not at all (:func:`hf_bpe.formats.atomic.build_folder`).
        separator: what ends a document in a text file (left out of the document).
        text_column: the column of JSON Lines and Parquet files.
        add_eos, eos_token, skip_empty: as :func:`~hf_bpe.integrations.preprocess.tokenize_dataset`.
        dtype: ``"uint16"``/``"uint32"`` (default: the smallest that holds every id).
        force: replace an existing ``out``.
        num_threads: encoding threads (default: the usable CPUs); the output never depends on it.
        show_progress: a progress bar (documents) on stderr.

    Returns:
        The folder written.

    Raises:
        FileNotFoundError: a path is not a file (before any work).
        FileExistsError: ``out`` exists and ``force`` is false.
        ValueError: an empty ``separator``; no document in any file; a file that is not UTF-8 (its byte offset);
            a JSON line that is not an object with a str in ``text_column``; a Parquet file without that string
            column, or a null in it; ``add_eos`` without an EOS token; ids too large for ``dtype``.

    >>> import tempfile
    >>> model = BPEModel.bytes_only(special_tokens={"<eos>": 256})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     Path(tmp, "a.txt").write_text("hi\\n\\nyo")
    ...     folder = tokenize_files([Path(tmp, "a.txt")], model, Path(tmp, "out"), eos_token="<eos>")
    ...     from hf_bpe.formats.token_file import read_token_file
    ...     ids, index = read_token_file(folder)
    ...     ids.tolist(), index["document_offsets"].tolist()
    6
    ([104, 105, 256, 256, 121, 111, 256], [0, 3, 4, 7])
    """
    from ..core.pretokenize import usable_cpus
    from ..formats.atomic import build_folder
    from ..formats.token_file import TokenFileWriter, token_dtype
    from .preprocess import resolve_tokenizer, tokenizer_identity

    # 1. Everything that can be refused is refused before any work.
    if isinstance(paths, (str, os.PathLike)):
        raise TypeError(f"paths must be a sequence of paths, got one path {os.fspath(paths)!r}; wrap it in a list")
    files = [Path(p) for p in paths]
    if not files:
        raise ValueError("paths is empty: give the files to tokenize")
    for path in files:
        if not path.is_file():
            raise FileNotFoundError(f"{os.fspath(path)!r} is not a file; pass UTF-8 text, .jsonl or .parquet files")
    if not isinstance(separator, str) or not separator:
        raise ValueError(f"separator must be a non-empty str, got {separator!r:.80}")
    if not isinstance(text_column, str):
        raise TypeError(f"text_column must be a str, got {text_column!r:.80}")
    for name, value in (("add_eos", add_eos), ("skip_empty", skip_empty), ("force", force)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {value!r:.80}")
    if num_threads is not None and (type(num_threads) is not int or num_threads < 1):
        raise ValueError(f"num_threads must be None or an int >= 1, got {num_threads!r:.80}")
    if not isinstance(out, (str, os.PathLike)) or not os.fspath(out).strip():
        raise ValueError(f"out must name a folder, got {out!r:.80}")
    if Path(out).exists() and not force:
        raise FileExistsError(f"{os.fspath(out)!r} already exists; pass force=True (--force) to replace it")
    model, eos_id, _ = resolve_tokenizer(tokenizer, eos_token=eos_token)
    if add_eos and eos_id is None:
        raise ValueError("add_eos=True but the tokenizer has no eos_token; name one of its special tokens with "
                         "eos_token=... (--eos-token), or pass add_eos=False (--no-eos)")
    identity = tokenizer_identity(model)
    chosen = token_dtype(identity["largest_id"], dtype)
    reader = _Reader(model, separator.encode("utf-8"), text_column, eos_id if add_eos else None, skip_empty,
                     usable_cpus() if num_threads is None else num_threads, _window_bytes)

    # 2. Encode and write as the documents come (the writer writes batch k while batch k + 1 encodes).
    def build(staging: Path) -> None:
        writer = TokenFileWriter(staging, dtype=chosen, tokenizer=identity)
        bar = _bar(show_progress)
        try:
            for path in files:
                for ids, offsets in reader.batches(path):
                    writer.append(ids, offsets)
                    bar.update(len(offsets) - 1)
        except BaseException:
            writer.abort()
            raise
        finally:
            bar.close()
        if not reader.documents:
            raise ValueError(f"the files hold no documents ({len(files)} file(s), all empty): there is nothing to "
                             "tokenize")
        writer.close()

    return build_folder(out, build, force=force)


class _Reader:
    """Documents of each kind of file, encoded into ``(ids int32, offsets int64)`` batches."""

    def __init__(self, model: BPEModel, separator: bytes, column: str, eos_id: int | None, skip_empty: bool,
                 threads: int, window: int) -> None:
        pretokenizer = model._pretokenizer
        self.model = model
        self.separator = separator
        self.column = column
        self.eos_id = eos_id
        self.skip_empty = skip_empty
        self.threads = threads
        self.window = max(1, window)
        # In place when the compiled scanner takes the documents as they are; else a list of str per window.
        self.in_place = pretokenizer.compiled and not pretokenizer.add_prefix_space and not model._missing
        self.documents = 0  # documents read, empty ones included (none at all is an error, as tokenize_dataset's)

    def batches(self, path: Path) -> Iterator[tuple[Any, Any]]:
        kind = input_kind(path)
        if kind == "text":
            yield from self._text(path)
            return
        rows = self._jsonl(path) if kind == "jsonl" else self._parquet(path)
        for texts in rows:
            self.documents += len(texts)
            if self.skip_empty:
                texts = [text for text in texts if text]
            yield self.model.encode_ordinary_batch_arrays(texts, num_threads=self.threads, eos_id=self.eos_id)

    # -- text files -------------------------------------------------------------------------------------------

    def _text(self, path: Path) -> Iterator[tuple[Any, Any]]:
        """Windows of a text file, each ending at a document's end, read into one buffer and encoded in turn.

        The file is read (``readinto``), not memory-mapped: a file that shrinks under a mapping kills the process
        with SIGBUS when a page past its new end is touched. Here a file that changes while it is read (shorter,
        longer or rewritten: its size or modification time differ at the end) is a ``ValueError`` naming it.
        """
        from ..core._core import last_document_end, last_safe_cut

        with open(path, "rb", buffering=0) as handle:
            before = os.fstat(handle.fileno())
            size = before.st_size
            if size == 0:  # no document
                return
            self.documents += 1  # a file that is not empty holds at least one document
            buffer = _Window(handle, path, size)
            start = 0  # the file offset of the buffer's first byte
            while start < size:
                # 1. The window's end: after its last separator. In a document longer than the window, the last
                #    safe cut (in place only: then the part is encoded alone and the document goes on in the
                #    next window); with none, the window grows (doubled each time: the searches add up to a few
                #    times the document's size).
                span, whole = self.window, True
                while True:
                    stop = min(size, start + span)
                    buffer.fill(stop - start)
                    if stop == size:
                        end = size
                        break
                    with buffer.view(0, stop - start) as part:
                        last = last_document_end(part, self.separator)
                    if last > 0:
                        end = start + last
                        break
                    # A cut before any separator that may start in the window and end past it: not inside one.
                    if self.in_place:
                        with buffer.view(0, max(0, stop - start - len(self.separator) + 1)) as part:
                            cut = last_safe_cut(part)
                        if cut > 0:
                            end, whole = start + cut, False
                            break
                    span *= 2
                # 2. Encode the window's documents (end > start: the loop advances).
                with buffer.view(0, end - start) as raw:
                    try:
                        ids, offsets = self._encode_window(raw, whole)
                    except UnicodeDecodeError as exc:
                        raise _not_utf8(path, start + exc.start, exc.reason) from None
                # A part of a document adds its ids but ends no document (the next window's first one goes on).
                yield ids, offsets if whole else memoryview(offsets)[:1]
                del ids, offsets
                buffer.consume(end - start)
                start = end
            buffer.check_unchanged(before)

    def _encode_window(self, raw: Any, whole: bool) -> tuple[Any, Any]:
        """A window's documents as ``(ids, offsets)``: encoded where they lie (an ASCII document needs no str; the
        encoder's int32 and int64 buffers, which the writer packs without numpy), or decoded and split into a list
        of str for the lists path. Not ``whole``: the window is the first part of a document (no EOS yet)."""
        if self.in_place:
            eos = -1 if self.eos_id is None or not whole else self.eos_id
            return self.model._pretokenizer.encode_documents(raw, self.separator, self.model._encoder,
                                                             threads=self.threads, eos_id=eos,
                                                             skip_empty=self.skip_empty)
        documents = codecs.utf_8_decode(raw, "strict", True)[0].split(self.separator.decode("utf-8"))
        if documents[-1] == "":  # after a final separator (or an empty window): no document
            documents.pop()
        if self.skip_empty:
            documents = [document for document in documents if document]
        return self.model.encode_ordinary_batch_arrays(documents, num_threads=self.threads, eos_id=self.eos_id)

    # -- rows ---------------------------------------------------------------------------------------------------

    def _jsonl(self, path: Path) -> Iterator[list[str]]:
        """Batches of a JSON Lines file's ``column`` strings, about a window of characters each."""
        batch: list[str] = []
        chars = 0
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:  # UnicodeDecodeError included
                    raise ValueError(f"{os.fspath(path)!r} line {number} is not a JSON value in UTF-8 ({exc}); "
                                     "each line of a .jsonl file must hold one JSON object") from None
                except RecursionError:
                    raise ValueError(f"{os.fspath(path)!r} line {number} nests arrays or objects deeper than "
                                     f"Python's JSON parser allows (about {sys.getrecursionlimit()} levels); each "
                                     "line of a .jsonl file must hold one JSON object with a string field") from None
                if not isinstance(row, dict) or self.column not in row:
                    raise ValueError(f"{os.fspath(path)!r} line {number} has no field {self.column!r} (it holds "
                                     f"{excerpt(row)}); pass --text-column (text_column=) naming the field that "
                                     "holds the documents")
                text = row[self.column]
                if not isinstance(text, str):
                    raise ValueError(f"{os.fspath(path)!r} line {number}: field {self.column!r} holds "
                                     f"{type(text).__name__} {excerpt(text)}, not a str")
                batch.append(text)
                chars += len(text)
                if chars >= self.window:
                    yield batch
                    batch, chars = [], 0
        if batch:
            yield batch

    def _parquet(self, path: Path) -> Iterator[list[str]]:
        """Batches of a Parquet file's ``column`` strings, row group by row group (never the whole file)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            source = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"{os.fspath(path)!r} is not a Parquet file ({exc})") from None
        schema = source.schema_arrow
        if self.column not in schema.names:
            raise ValueError(f"{os.fspath(path)!r} has no column {self.column!r}; its columns are "
                             f"{schema.names!r:.200}: pass --text-column (text_column=) naming the one that holds "
                             "the documents")
        kind = schema.field(self.column).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise ValueError(f"{os.fspath(path)!r} column {self.column!r} holds {kind}, not strings")
        row = 0
        for batch in source.iter_batches(batch_size=8192, columns=[self.column]):
            values = batch.column(0)
            if values.null_count:
                first = next(i for i, valid in enumerate(values.is_valid().to_pylist()) if not valid)
                raise ValueError(f"{os.fspath(path)!r} row {row + first} of column {self.column!r} is null, not a "
                                 "str; drop or fill such rows first")
            row += len(values)
            yield values.to_pylist()


class _Window:
    """The bytes of a file from the reader's position, read into one reusable buffer (never past ``size``)."""

    def __init__(self, handle: Any, path: Path, size: int) -> None:
        self.handle, self.path, self.size = handle, path, size
        self.buffer = bytearray(0)
        self.filled = 0  # bytes of the buffer that hold the file's next bytes
        self.offset = 0  # the file offset of buffer[0]

    def fill(self, count: int) -> None:
        """Hold at least ``count`` bytes (``offset + count <= size``): read what is missing, or raise if the file
        ends before (it shrank while being read)."""
        if count > len(self.buffer):  # grows to the longest window (a long document doubles it)
            grown = bytearray(max(count, 2 * len(self.buffer)))
            grown[:self.filled] = memoryview(self.buffer)[:self.filled]
            self.buffer = grown
        with memoryview(self.buffer) as view:
            while self.filled < count:  # advances: each read adds > 0 bytes or raises
                got = self.handle.readinto(view[self.filled:count])
                if not got:
                    raise _changed(self.path, f"it ended at byte {self.offset + self.filled} of the {self.size} it "
                                              "had when reading began")
                self.filled += got

    def view(self, start: int, stop: int) -> memoryview:
        """The held bytes ``[start, stop)`` (release it, e.g. ``with``, before the next :meth:`fill`)."""
        return memoryview(self.buffer)[start:stop]

    def consume(self, count: int) -> None:
        """Drop the first ``count`` held bytes (the rest, part of the next window, moves to the front)."""
        rest = self.filled - count
        self.buffer[:rest] = self.buffer[count:self.filled]
        self.filled = rest
        self.offset += count

    def check_unchanged(self, before: os.stat_result) -> None:
        """Raise unless the file still ends where it did and was not rewritten while it was read."""
        after = os.fstat(self.handle.fileno())
        if self.handle.read(1):
            raise _changed(self.path, f"it grew past the {self.size} bytes it had when reading began")
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise _changed(self.path, f"its size or modification time changed ({before.st_size} -> "
                                      f"{after.st_size} bytes)")


def _changed(path: Path, what: str) -> ValueError:
    return ValueError(f"{os.fspath(path)!r} changed while it was being read ({what}); tokenize a file that no "
                      "process is writing (copy it first, or wait until its writer is done)")


def _not_utf8(path: Path, offset: int, reason: str) -> ValueError:
    """The error for a byte that is not UTF-8: file, byte offset and line, as reading its lines would say."""
    line = 1
    with open(path, "rb") as handle:
        done = 0
        while done < offset:  # advances: each block is > 0 bytes (or the file ended)
            block = handle.read(min(1 << 20, offset - done))
            if not block:
                break
            line += block.count(b"\n")
            done += len(block)
    return ValueError(f"{os.fspath(path)!r} line {line} is not UTF-8 ({reason} at byte {offset} of the file); "
                      "convert the file to UTF-8 (e.g. iconv -t utf-8)")


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(unit=" docs", desc="hf-bpe: tokenizing", file=sys.stderr)
