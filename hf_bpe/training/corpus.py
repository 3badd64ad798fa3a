"""Turn what a user calls a corpus into a stream of texts, without ever holding the corpus in memory.

Accepted corpora:

- any iterable of ``str`` (a list, a generator, ...): each item is one sequence;
- a ``datasets.Dataset`` or streaming ``datasets.IterableDataset``: each row's ``text_column`` is one sequence;
- a path (``os.PathLike``) or a list of paths to UTF-8 text files: each line, including its ``"\\n"``, is one
  sequence, as `tokenizers`' ``train(files)`` reads them (only ``"\\n"`` ends a line: U+0085 and U+2028 do not).

>>> list(iter_texts(["a b", "c"]))
['a b', 'c']
"""

from __future__ import annotations

import codecs
import os
import warnings
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

from ..core._tally import Sha256, Utf8Block, line_stats
from ..core.fragment import Fragment, SafeCutter
from ..errors import InputError, excerpt

__all__ = ["iter_texts", "iter_batches", "LineBlock", "is_paths", "check_paths", "check_corpus_files", "default_corpus_files", "default_corpus", "describe_default_corpus", "load_dataset", "load_text_files"]

# Rows read from a datasets.Dataset per Arrow batch: large enough to amortise the per-batch cost, small enough
# to keep memory flat.
_DATASET_BATCH_ROWS = 1024


def _is_dataset(corpus: object) -> bool:
    module = type(corpus).__module__
    return module.startswith("datasets.")


def is_paths(corpus: object) -> bool:
    if isinstance(corpus, os.PathLike):
        return True
    return isinstance(corpus, list | tuple) and bool(corpus) and all(isinstance(p, os.PathLike) for p in corpus)


class LineBlock(NamedTuple):
    """Whole lines of a text file read as one block: what ``iter_texts(..., line_blocks=True)`` yields in place of
    the lines themselves (the compiled counter scans their UTF-8 in place: ``PieceTally.add_lines``).

    Not a str, so that nothing expecting texts takes one by mistake; no str is made for it either (its bytes are
    checked as the strict decoder would: ``Utf8Block``), but :attr:`text` decodes one on demand.
    """

    utf8: Utf8Block  # the lines end to end as read, each ending with "\n", checked to be UTF-8
    lines: int

    @property
    def raw(self) -> bytes:
        """The lines' UTF-8, as read."""
        return self.utf8.raw

    @property
    def characters(self) -> int:
        """The lines' code points (``len(self.text)``, without making it)."""
        return self.utf8.characters

    @property
    def text(self) -> str:
        """The lines as one str, decoded now (a copy: the counter never needs it)."""
        return self.utf8.decode()


def iter_texts(corpus: Any, *, text_column: str = "text", max_line_bytes: int | None = None,
               line_blocks: bool = False) -> Iterator[Any]:
    """Yield the sequences of a corpus, one ``str`` at a time.

    Args:
        corpus: an iterable of str, a ``datasets`` Dataset/IterableDataset, or path(s) to text files.
        text_column: the column that holds the text, for datasets.
        max_line_bytes: for text files, yield a line of more than this many bytes as :class:`Fragment` parts cut
            where every named pattern ends a piece (:mod:`hf_bpe.core.fragment`), so that a huge line is never
            held whole; None (the default) yields whole lines.
        line_blocks: for text files, yield blocks of whole lines as :class:`LineBlock` (up to 4 MB each; lines
            that need the line-by-line path still come one ``str`` at a time), for the compiled counter.

    Raises:
        TypeError: for a single str (a common slip: wrap it in a list), a DatasetDict, or non-str items.
        ValueError: for a dataset without ``text_column``.
        FileNotFoundError: for a path that does not exist.
        UnicodeDecodeError: re-raised as ValueError naming the file and line for non-UTF-8 files.
    """
    if isinstance(corpus, str | bytes):
        raise TypeError(
            f"corpus must be an iterable of texts, a datasets Dataset or path(s), got a single "
            f"{type(corpus).__name__} {corpus[:60]!r}; pass [text] for one document, or pathlib.Path(...) for a file"
        )
    if is_paths(corpus):
        paths = [Path(p) for p in ([corpus] if isinstance(corpus, os.PathLike) else corpus)]
        check_paths(paths)  # here, not in the generator: before the caller reads anything or draws a progress bar
        return _iter_files(paths, max_line_bytes, line_blocks)
    if _is_dataset(corpus):
        return _iter_dataset(corpus, text_column)
    if isinstance(corpus, dict):
        raise TypeError(
            f"corpus is a mapping ({type(corpus).__name__} with keys {list(corpus)[:5]!r}); pick one split, "
            "e.g. corpus['train']"
        )
    if not isinstance(corpus, Iterable):
        raise TypeError(
            f"corpus must be an iterable of str, a datasets Dataset or path(s), got {type(corpus).__name__}"
        )
    if isinstance(corpus, list | tuple) and 0 < len(corpus) <= 64 and all(_names_a_file(t) for t in corpus):
        warnings.warn(
            f"the corpus is {len(corpus)} str that name existing files ({corpus[0]!r}, ...): they are trained on as "
            "text, not read; pass pathlib.Path objects to read the files, e.g. [Path(p) for p in paths]",
            UserWarning,
            stacklevel=3,
        )
    return _iter_strings(corpus)


def _names_a_file(text: object) -> bool:
    return isinstance(text, str) and 0 < len(text) < 4096 and "\n" not in text and os.path.isfile(text)


def _iter_strings(corpus: Iterable[Any]) -> Iterator[str]:
    for index, text in enumerate(corpus):
        if not isinstance(text, str):
            raise TypeError(
                f"corpus item {index} is {type(text).__name__} {text!r:.60}, expected str; "
                "for text files pass pathlib.Path objects, for datasets pass the Dataset itself"
            )
        yield text


def _iter_dataset(dataset: Any, text_column: str) -> Iterator[str]:
    import datasets

    if isinstance(dataset, datasets.DatasetDict | datasets.IterableDatasetDict):
        raise TypeError(f"corpus is a DatasetDict with splits {list(dataset)!r}; pick one, e.g. corpus['train']")
    names = dataset.column_names
    if names is not None and text_column not in names:
        raise ValueError(
            f"the dataset has no column {text_column!r}; its columns are {names!r}; pass text_column=... "
            "(CLI: --text-column)"
        )
    row = 0
    if isinstance(dataset, datasets.Dataset):
        column = dataset.select_columns([text_column])
        batches = column.iter(batch_size=_DATASET_BATCH_ROWS)
        for batch in batches:
            for text in batch[text_column]:
                if not isinstance(text, str):
                    raise TypeError(f"row {row} of column {text_column!r} is {text!r:.60}, expected str")
                row += 1
                yield text
        return
    for record in dataset:
        if text_column not in record:
            raise ValueError(f"row {row} has no column {text_column!r}; its columns are {list(record)!r}")
        text = record[text_column]
        if not isinstance(text, str):
            raise TypeError(f"row {row} of column {text_column!r} is {text!r:.60}, expected str")
        row += 1
        yield text


# Bytes read at a time by the fast path of _iter_files: small blocks of lines (a str is made per line anyway), or
# _LINE_BLOCK for line blocks (fewer, larger batches for the counting threads: 4 MB scaled 1.6x on 2 threads
# where 1 MB scaled 1.4x).
_READ_BLOCK = 1 << 16
_LINE_BLOCK = 1 << 22  # the largest line block
_MIN_LINE_BLOCK = 1 << 18


def _line_block_size(total: int) -> int:
    """Return the line-block size for files of ``total`` bytes: about a sixteenth of them, in [256 KiB, 4 MiB].

    Up to three blocks are alive at once (one read while two are counted; each also had a str, 1, 2 or 4 bytes a
    character, before blocks were counted as bytes): 4 MiB blocks made ~40 MiB of a 10 MB corpus's peak RSS. Corpora
    of 64 MB and more keep 4 MiB blocks (fewer thread hand-offs); the counts and the fingerprint never depend on the
    size.

    >>> _line_block_size(10**6), _line_block_size(10**7), _line_block_size(10**9)
    (262144, 625000, 4194304)
    """
    return min(_LINE_BLOCK, max(_MIN_LINE_BLOCK, total // 16))


def check_paths(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a corpus path that does not exist, is no regular file or is not readable (every path before reading any,
    so a typo in the last one fails at once, not after a long read, and before any progress bar).

    >>> check_paths(["no-such-file.txt"])
    Traceback (most recent call last):
    FileNotFoundError: corpus file 'no-such-file.txt' does not exist
    """
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"corpus file {os.fspath(path)!r} does not exist")
        if not path.is_file():
            raise ValueError(f"corpus path {os.fspath(path)!r} is not a regular file")
        if not os.access(path, os.R_OK):
            raise PermissionError(f"corpus file {os.fspath(path)!r} is not readable")


_HEAD_BYTES = 1 << 16  # what check_corpus_files reads of each file


def check_corpus_files(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse corpus files that cannot be trained on before anything reads them (or draws a progress bar): a path
    that does not exist or is no readable file, files that are all empty, a file whose first 64 KiB are not UTF-8
    (a binary file, another encoding). A bad byte further on is found by the reader itself, naming its line.

    Raises:
        FileNotFoundError, PermissionError, ValueError: naming the file (and line) and how to fix it.

    >>> check_corpus_files(["no-such-file.txt"])
    Traceback (most recent call last):
    FileNotFoundError: corpus file 'no-such-file.txt' does not exist
    """
    paths = [Path(p) for p in paths]
    check_paths(paths)
    if paths and not any(path.stat().st_size for path in paths):
        names = ", ".join(repr(os.fspath(p)) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
        raise ValueError(f"the corpus is empty: {names} hold(s) no text; give files with one text per line")
    for path in paths:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
        try:  # a character cut by the 64 KiB limit is not an error
            codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < _HEAD_BYTES)
        except UnicodeDecodeError as exc:
            line_start = head.rfind(b"\n", 0, exc.start) + 1
            raise _not_utf8(path, head.count(b"\n", 0, exc.start) + 1, exc, -line_start) from None


def _iter_files(paths: list[Path], max_line_bytes: int | None = None, blocks: bool = False) -> Iterator[Any]:
    # The callers checked the paths (check_paths) before calling.
    limit = -1 if max_line_bytes is None else max_line_bytes
    size = _line_block_size(sum(path.stat().st_size for path in paths)) if blocks else _READ_BLOCK
    for path in paths:
        with open(path, "rb") as handle:
            # Binary reading splits on b"\n" only and keeps it, exactly like tokenizers' line reader.
            number = 0
            while True:
                # 1. Fast path: a block of whole lines, checked as UTF-8 and counted as bytes (blocks=True), or
                #    decoded and split in C (the per-line readline and decode were the serial part of threaded
                #    counting). Blocks with an over-long or undecodable line go to the line-by-line path below, which
                #    handles and names them.
                start = handle.tell()
                block = handle.read(size)
                end = block.rfind(b"\n") + 1
                whole = block[:end] if end < len(block) else block
                at_end = not block
                del block  # `whole` may be a copy: one of the two alive while the block is checked and counted
                # One pass for the block's longest line and its line count (a block ends with "\n").
                longest, lines = line_stats(whole) if end and (blocks or 0 <= limit < size) else (0, 0)
                if end and (limit < 0 or size <= limit or longest < limit):
                    # A block is checked, not decoded: the counter reads its bytes (no str of 1-4 bytes a character).
                    try:
                        checked = Utf8Block(whole) if blocks else None
                        text = None if blocks else whole.decode("utf-8")
                    except UnicodeDecodeError:
                        checked = text = None
                    if checked is not None:
                        number += lines
                        handle.seek(start + end)
                        yield LineBlock(checked, lines)
                        del checked
                        continue
                    if text is not None:
                        lines = text.split("\n")
                        lines.pop()  # after the last "\n"
                        number += len(lines)
                        handle.seek(start + end)
                        yield from (line + "\n" for line in lines)
                        continue
                handle.seek(start)
                # 2. Line by line, up to the end of this block (or of a long line that starts in it).
                stop = start + max(end, 1)
                while handle.tell() < stop and (line := handle.readline(limit)):
                    number += 1
                    if len(line) == limit and not line.endswith(b"\n"):
                        yield from _iter_long_line(handle, line, limit, path, number)
                        continue
                    try:
                        yield line.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise _not_utf8(path, number, exc) from None
                if at_end:
                    break


def _iter_long_line(handle: Any, head: bytes, limit: int, path: Path, number: int) -> Iterator[Fragment]:
    """Yield one line that is longer than ``limit`` bytes as fragments; memory O(limit) unless no cut is found.

    Phases: 1. find the line's size (a fingerprint frames a document with it) and go back to its start;
    2. decode chunks incrementally, cutting each at its last safe cut and carrying the rest to the next.
    """
    # 1. The line's size.
    start = handle.tell() - len(head)
    size = len(head)
    while more := handle.readline(limit):
        size += len(more)
        if more.endswith(b"\n") or len(more) < limit:
            break
    handle.seek(start)
    # 2. Fragments; text with no safe cut (one huge piece) is carried whole, as counting it needs it whole. The
    #    cutter searches each character once, so a line without cuts reads in linear time.
    decoder = codecs.getincrementaldecoder("utf-8")()
    cutter = SafeCutter()
    first, left = True, size
    while left:
        chunk = handle.read(min(limit, left))
        left -= len(chunk)
        try:
            head = cutter.push(decoder.decode(chunk, final=not left))
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, number, exc, size - left - len(chunk)) from None
        if head:
            yield Fragment(head, start=first, end=False, line_bytes=size)
            first = False
    yield Fragment(cutter.rest(), start=first, end=True, line_bytes=size)


def _not_utf8(path: Path, number: int, exc: UnicodeDecodeError, offset: int = 0) -> ValueError:
    return ValueError(
        f"{os.fspath(path)!r} line {number} is not UTF-8 ({exc.reason} at byte {offset + exc.start}); "
        "convert the file to UTF-8 (e.g. iconv -t utf-8)"
    )


def iter_batches(texts: Iterable[str], *, batch_chars: int = 1 << 22) -> Iterator[list[str]]:
    """Group texts into lists of about ``batch_chars`` characters (work units for worker processes).

    >>> [len(b) for b in iter_batches(["ab"] * 5, batch_chars=4)]
    [2, 2, 1]
    """
    batch: list[str] = []
    size = 0
    it = iter(texts)
    # Short texts 64 at a time, measured by C-level sum(map(len)): the per-text Python of a plain loop was the
    # serial part of threaded counting. Long texts (fragments of a huge line) one at a time, so that memory stays
    # a batch. Near a boundary a chunk is walked text by text: the batches are those of a plain loop.
    step = 1
    for chunk in iter(lambda: list(islice(it, step)), []):
        chunk_size = sum(map(len, chunk))
        step = 64 if chunk_size * 1024 < batch_chars * len(chunk) else 1
        if size + chunk_size < batch_chars:
            batch += chunk
            size += chunk_size
            continue
        for text in chunk:
            batch.append(text)
            size += len(text)
            if size >= batch_chars:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


# Standard-library folders left out of the default corpus: tests (huge, repetitive, odd encodings), GUI demos,
# and anything installed rather than shipped with Python.
_DEFAULT_SKIP = frozenset(
    {"test", "tests", "idlelib", "site-packages", "dist-packages", "lib2to3", "tkinter", "turtledemo", "ensurepip",
     "__pycache__"}
)


def default_corpus_files() -> list[Path]:
    """Return the embedded default corpus: the ``.py`` files of this Python's standard library, sorted.

    It exists on every machine without a download (about 10 MB on CPython 3.11).
    """
    import sysconfig  # here: only the default corpus needs it

    root = Path(sysconfig.get_paths()["stdlib"])
    files: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in _DEFAULT_SKIP and not d.startswith("config-"))
        files.extend(Path(folder) / name for name in sorted(names) if name.endswith(".py"))
    return sorted(files)


def default_corpus() -> Any:
    """Load the embedded default corpus through ``datasets`` (one row per line, newlines kept).

    Returns:
        A ``datasets.Dataset`` with a ``text`` column.
    """
    import sysconfig

    import datasets

    files = [os.fspath(p) for p in default_corpus_files()]
    if not files:
        raise FileNotFoundError(f"no standard-library sources found under {sysconfig.get_paths()['stdlib']!r}")
    return datasets.load_dataset("text", data_files=files, split="train", keep_linebreaks=True)


def describe_default_corpus() -> str:
    """Say in one line what the embedded default corpus is."""
    files = default_corpus_files()
    size = sum(p.stat().st_size for p in files)
    version = ".".join(map(str, sys.version_info[:3]))
    return f"the Python {version} standard library ({len(files)} .py files, {size / 1e6:.1f} MB)"


def load_dataset(name: str, split: str) -> Any:
    """Load a local `datasets` dataset: a folder written by ``save_to_disk``, or what ``datasets.load_dataset`` reads.

    Args:
        name: a local folder: saved with ``save_to_disk``, or data files that ``datasets.load_dataset`` reads.
        split: the split to return (of a saved ``DatasetDict``, or passed to ``load_dataset``).

    Raises:
        InputError: naming the dataset and split when it cannot be loaded, or when the split does not exist.
    """
    path = Path(name)
    if not path.is_dir():
        # hf_bpe never downloads: anything but a local folder is refused now (datasets would try the Hub, retrying
        # for ~24 s when it is unreachable, and would download a Hub name).
        found = "is a file" if path.exists() else "does not exist (hf_bpe reads local folders only, never downloads)"
        # A path is quoted whole up to a long path's length (cut at 80 it lost its end, and the user the file).
        raise InputError(f"dataset {excerpt(name, limit=400)} {found}; pass a folder saved with "
                         "Dataset.save_to_disk, or a folder of data files (csv, json, parquet, txt) that datasets.load_dataset reads; for a Hub "
                         "dataset, save it first: datasets.load_dataset(NAME, split=...).save_to_disk(FOLDER)")
    import datasets

    try:
        if path.is_dir() and ((path / "dataset_info.json").exists() or (path / "state.json").exists()
                              or (path / "dataset_dict.json").exists()):
            loaded = datasets.load_from_disk(os.fspath(path))
            if isinstance(loaded, datasets.DatasetDict):
                if split not in loaded:
                    raise InputError(f"dataset {name!r} has splits {list(loaded)!r}, not {split!r}; pass --split")
                loaded = loaded[split]
            elif split != "train":
                raise InputError(f"dataset {name!r} is a single saved Dataset (no splits), so --split {split!r} "
                                 "cannot apply; leave --split out, or save a DatasetDict")
            return loaded
        return datasets.load_dataset(name, split=split)
    except InputError:
        raise
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as exc:
        raise InputError(
            f"cannot load dataset {name!r} split {split!r}: {exc}. hf-bpe works offline: pass a folder saved with "
            "Dataset.save_to_disk, or a folder of data files"
        ) from None


def load_text_files(paths: list[Path]) -> Any:
    """Load UTF-8 text files as a `datasets` ``Dataset`` with one row per line, its ``"\\n"`` removed (column
    ``text``), memory-mapped from a cache file that is reused until a file changes.

    Lines end at ``"\\n"`` only, as in training (``datasets``' own text loader also splits on ``"\\r"``, U+2028,
    ...). A final line without ``"\\n"`` is a row; a file ending in ``"\\n"`` has no empty last row. The cache file
    lives in ``datasets``' cache folder, named by the files' paths, sizes and modification times.

    Raises:
        FileNotFoundError: naming the first path that is not a file.
        ValueError: naming the file and line that is not UTF-8.
    """
    import datasets
    from datasets.arrow_writer import ArrowWriter

    # 1. The cache key: what would make the rows differ.
    resolved = []
    for path in paths:
        if not Path(path).is_file():
            raise FileNotFoundError(f"{os.fspath(path)!r} is not a file; pass UTF-8 text files")
        resolved.append(Path(path).resolve())
    check_paths(resolved)
    key = Sha256(repr([(os.fspath(p), p.stat().st_size, p.stat().st_mtime_ns) for p in resolved]).encode())
    cache = Path(datasets.config.HF_DATASETS_CACHE) / "hf_bpe_text" / f"lines-{key.hexdigest()[:24]}.arrow"
    # 2. Rows written once, a few MB at a time, under a temporary name (a killed run leaves no cache file).
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        try:
            features = datasets.Features({"text": datasets.Value("string")})
            with ArrowWriter(path=os.fspath(temporary), features=features) as writer:
                for batch in iter_batches(_iter_files(resolved)):
                    writer.write_batch({"text": [t[:-1] if t.endswith("\n") else t for t in batch]})
                writer.finalize()
            os.replace(temporary, cache)
        finally:
            temporary.unlink(missing_ok=True)
    return datasets.Dataset.from_file(os.fspath(cache))
