"""Pre-token counts as a value of their own: count a corpus in pieces, add the pieces, save them, train from the sum.

BPE training is two steps: count the corpus's pre-tokens, then run the merge loop on the counts. The counts are
sums, so a corpus can be counted in shards (on other machines, by Spark, day by day) and the shards added: training
from the sum gives byte-identical files to training on the whole corpus. :class:`WordCounts` carries the counts with
what produced them (the pattern and ``add_prefix_space``: counts made under other options cannot be added), the
number of documents and bytes, and the corpus fingerprint when it can be combined (the order-free ``"multiset"``
fingerprint is a sum; an ordered ``"sequence"`` one is not, so a sum of those keeps no fingerprint).

Files: :meth:`WordCounts.save` writes Parquet (``pyarrow``): a ``token`` binary column and a ``count`` int64 column
sorted by token, with the options and totals as JSON in the schema metadata under ``hf_bpe.counts``; the same counts
give the same bytes.

>>> a = WordCounts.from_corpus(["low lower"], show_progress=False)
>>> b = WordCounts.from_corpus(["lowest low"], show_progress=False)
>>> total = a + b
>>> total[b"low"], total[b" low"], total.documents
(1, 1, 2)
>>> sum([a, b]) == total
True
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from itertools import groupby
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from .._version import __version__
from ..core.fragment import CUTTABLE_PATTERNS, Fragment
from ..core._tally import release_free_memory
from ..core.pretokenize import Pretokenizer, usable_cpus
from ..errors import InputError, excerpt
from ..formats.manifest import ORDERS, CorpusFingerprint, combine_fingerprints
from .corpus import LineBlock, is_paths, iter_batches, iter_texts
from .progress import progress_bar

__all__ = ["COUNTS_FORMAT_VERSION", "MAX_COUNT", "WordCounts", "choose_workers", "corpus_chars_hint", "count_words"]

COUNTS_FORMAT_VERSION = 1
# The merge loop's counts are signed 64-bit (hf_bpe.core._reference.MAX_COUNT).
MAX_COUNT = 2**63 - 1
_METADATA_KEY = b"hf_bpe.counts"
# Below this many characters, worker processes cost more than they save.
_PARALLEL_MIN_CHARS = 1 << 23
# Lines longer than this are read in parts (hf_bpe.core.fragment): memory stays flat on a file without newlines.
_FRAGMENT_BYTES = 1 << 20


class WordCounts(Mapping[bytes, int]):
    """Pre-token (bytes) -> count, with the options that produced them; immutable, addable, savable.

    Args:
        counts: pre-token -> count (each count an int in 1..2**63-1).
        pattern: the pre-tokenizer pattern (a name in ``hf_bpe.PATTERNS`` or a regex).
        add_prefix_space: whether a space was prepended to each text.
        documents: how many texts were counted.
        total_bytes: their total UTF-8 size.
        fingerprint: the corpus fingerprint (``CorpusFingerprint.as_dict()``), or None when unknown.

    Raises:
        TypeError, ValueError: on a count that is not a positive int below 2**63, or a bad option.
    """

    __slots__ = ("_table", "_flat", "_pretokenizer", "_pattern", "_add_prefix_space", "_documents", "_bytes", "_fingerprint")

    def __init__(
        self,
        counts: Mapping[bytes, int],
        *,
        pattern: str = "gpt2",
        add_prefix_space: bool = False,
        documents: int = 0,
        total_bytes: int = 0,
        fingerprint: Mapping[str, object] | None = None,
    ) -> None:
        if not isinstance(counts, Mapping):
            raise TypeError(f"counts must be a mapping of bytes to int, got {type(counts).__name__}")
        for name, value in (("documents", documents), ("total_bytes", total_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value!r}")
        checked: dict[bytes, int] = {}
        for token, count in counts.items():
            if not isinstance(token, bytes) or not token:
                raise TypeError(f"pre-tokens must be non-empty bytes, got {token!r}")
            if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= MAX_COUNT:
                raise ValueError(f"the count of {token!r} is {count!r}; counts must be ints in 1..2**63-1")
            checked[token] = count
        if fingerprint is not None and (not isinstance(fingerprint, Mapping) or fingerprint.get("order") not in ORDERS):
            raise ValueError(f"fingerprint must be CorpusFingerprint(...).as_dict() or None, got {fingerprint!r}")
        self._set(checked, Pretokenizer(pattern, add_prefix_space=add_prefix_space), pattern, documents, total_bytes,
                  fingerprint)

    def _set(self, counts: dict[bytes, int] | Any, pretokenizer: Pretokenizer, pattern: str, documents: int,
             total_bytes: int, fingerprint: Mapping[str, object] | None) -> None:
        # `counts`: a dict, or the compiled tally's flat form (`_tally.FlatCounts`), kept until read as a mapping.
        self._table, self._flat = (counts, None) if type(counts) is dict else (None, counts)
        self._pretokenizer = pretokenizer
        self._pattern = pattern
        self._add_prefix_space = pretokenizer.add_prefix_space
        self._documents = documents
        self._bytes = total_bytes
        self._fingerprint = None if fingerprint is None else MappingProxyType(dict(fingerprint))

    @property
    def _counts(self) -> dict[bytes, int]:
        # The dict, made from the flat form on first use (the flat form then dropped): train() reads neither (it
        # takes the flat form, _take_flat), so a corpus it counts never has a Python object per pre-token.
        if self._table is None:
            self._table, self._flat = self._flat.to_dict(), None
        return self._table

    def _take_flat(self) -> Any:
        """Hand over the flat form (``_tally.FlatCounts``) and empty these counts, or return None when they are a dict.

        ``train()`` trains on its own counts this way (``_core.train_merges_flat(..., consume=True)`` frees the
        buffers before the merge loop).
        """
        flat, self._flat = self._flat, None
        if flat is not None:
            self._table = {}
        return flat

    @classmethod
    def _trusted(cls, counts: dict[bytes, int] | Any, pretokenizer: Pretokenizer, pattern: str, documents: int,
                 total_bytes: int, fingerprint: Mapping[str, object] | None) -> WordCounts:
        # Counts this module made (counted, or summed with the overflow checked): valid by construction, so the
        # O(pre-tokens) checks of __init__ (a million Python-level checks on Chinese) are skipped.
        made = cls.__new__(cls)
        made._set(counts, pretokenizer, pattern, documents, total_bytes, fingerprint)
        return made

    # -- building ---------------------------------------------------------------------------------------------------

    @classmethod
    def from_corpus(
        cls,
        corpus: Any,
        *,
        pattern: str = "gpt2",
        add_prefix_space: bool = False,
        text_column: str = "text",
        workers: int | None = None,
        corpus_order: Literal["sequence", "multiset"] = "multiset",
        show_progress: bool = True,
    ) -> WordCounts:
        """Count the pre-tokens of a corpus (texts, a ``datasets`` Dataset, or text files read line by line).

        Args:
            corpus: what :func:`hf_bpe.train` accepts.
            pattern, add_prefix_space: the pre-tokenizer (see :func:`hf_bpe.train`).
            text_column: the text column of a dataset.
            workers: counting threads (named patterns) or processes (a custom regex), see :func:`hf_bpe.train`; the
                counts never depend on it.
            corpus_order: the fingerprint kept: ``"multiset"`` (the default: it can be added to other shards') or
                ``"sequence"``.
            show_progress: a progress bar on stderr.

        Raises:
            InputError: when the corpus holds no text.
        """
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
        # 1. Everything that can be wrong is found before the corpus is read.
        pretokenizer = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
        fingerprint = CorpusFingerprint(order=corpus_order)
        # Named patterns can cut a huge line into parts that count the same (hf_bpe.core.fragment).
        long_lines = _FRAGMENT_BYTES if pretokenizer.name in CUTTABLE_PATTERNS else None
        # Text files reach the compiled counter as blocks of lines, with no str made per line.
        blocks = pretokenizer.compiled and is_paths(corpus)
        texts = iter_texts(corpus, text_column=text_column, max_line_bytes=long_lines, line_blocks=blocks)
        if workers is None:
            workers = choose_workers(pretokenizer, corpus_chars_hint(corpus))
        # 2. Count (streaming; memory ~ distinct pre-tokens); the fingerprint sees every text in the order read.
        counts, documents, _ = _count_words(texts, pretokenizer, workers=workers, show_progress=show_progress,
                                            fingerprint=fingerprint, line_blocks=blocks)
        found = fingerprint.as_dict()
        return cls._trusted(counts, pretokenizer, pattern, documents, int(found["bytes"]), found)  # type: ignore[arg-type]

    # -- reading ----------------------------------------------------------------------------------------------------

    def __getitem__(self, token: bytes) -> int:
        return self._counts[token]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._table if self._flat is None else self._flat)

    # The dict's own views: Mapping's generic ones look every value up by key (0.1 s on 100,000 words, serial time
    # in every training run). Read-only views, the counts stay immutable.
    def keys(self) -> KeysView[bytes]:
        return self._counts.keys()

    def values(self) -> ValuesView[int]:
        return self._counts.values()

    def items(self) -> ItemsView[bytes, int]:
        return self._counts.items()

    @property
    def pattern(self) -> str:
        """The pre-tokenizer pattern, as given (a name or a regex)."""
        return self._pattern

    @property
    def add_prefix_space(self) -> bool:
        """Whether a space was prepended to each text."""
        return self._add_prefix_space

    @property
    def documents(self) -> int:
        """How many texts were counted."""
        return self._documents

    @property
    def total_bytes(self) -> int:
        """The counted texts' total UTF-8 size."""
        return self._bytes

    @property
    def fingerprint(self) -> Mapping[str, object] | None:
        """The corpus fingerprint (``CorpusFingerprint.as_dict()``), or None when it could not be kept."""
        return self._fingerprint

    def options(self) -> dict[str, object]:
        """Return the options that produced the counts: ``{"pattern": ..., "add_prefix_space": ...}``."""
        return {"pattern": self._pattern, "add_prefix_space": self._add_prefix_space}

    def _key(self) -> tuple[str, bool]:
        # Two spellings of one pattern ("cl100k" and "gpt4", or its regex) count the same.
        return self._pretokenizer.regex, self._add_prefix_space

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordCounts):
            return NotImplemented
        return (self._key() == other._key() and self._counts == other._counts and self._documents == other._documents
                and self._bytes == other._bytes and self._fingerprint == other._fingerprint)

    __hash__ = None  # type: ignore[assignment]  # equal by value, and large: no hashing

    def __repr__(self) -> str:
        return (f"WordCounts({len(self):,} pre-tokens, {self._documents:,} documents, pattern="
                f"{self._pattern!r}, add_prefix_space={self._add_prefix_space})")

    # -- adding -----------------------------------------------------------------------------------------------------

    def __add__(self, other: object) -> WordCounts:
        if not isinstance(other, WordCounts):
            return NotImplemented
        if self._key() != other._key():
            raise ValueError(f"cannot add counts made with different options: {self.options()!r} and "
                             f"{other.options()!r}; count every shard with the same pattern and add_prefix_space")
        # Add the smaller into a copy of the larger: O(smaller) dictionary updates.
        big, small = (self, other) if len(self) >= len(other) else (other, self)
        total = dict(big._counts)
        for token, count in small._counts.items():
            new = total.get(token, 0) + count
            if new > MAX_COUNT:
                raise ValueError(f"the count of {token!r} overflows: {total.get(token, 0)} + {count} > 2**63-1; "
                                 "hf_bpe's counts are signed 64-bit")
            total[token] = new
        fingerprint = combine_fingerprints(self._fingerprint, other._fingerprint)
        return WordCounts._trusted(total, self._pretokenizer, self._pattern, self._documents + other._documents,
                                   self._bytes + other._bytes, fingerprint)

    def __radd__(self, other: object) -> WordCounts:
        if other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    # -- files ------------------------------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write the counts as one Parquet file, atomically; the same counts always give the same bytes.

        Raises:
            FileExistsError: when ``path`` exists and ``force`` is false.
        """
        import json

        import pyarrow as pa
        import pyarrow.parquet as pq

        from ..formats import atomic

        target = Path(path)
        tokens = sorted(self._counts)
        meta = {
            "format_version": COUNTS_FORMAT_VERSION,
            "hf_bpe": __version__,
            "pattern": self._pattern,
            "pattern_regex": self._pretokenizer.regex,
            "add_prefix_space": self._add_prefix_space,
            "documents": self._documents,
            "bytes": self._bytes,
            "pre_tokens": len(tokens),
            "fingerprint": None if self._fingerprint is None else dict(self._fingerprint),
        }
        table = pa.table({"token": pa.array(tokens, pa.binary()),
                          "count": pa.array([self._counts[t] for t in tokens], pa.int64())})
        table = table.replace_schema_metadata({_METADATA_KEY: json.dumps(meta, sort_keys=True).encode("utf-8")})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd", row_group_size=1 << 20)
        return atomic.write_files(target.parent, {target.name: sink.getvalue().to_pybytes()}, force=force) / target.name

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WordCounts:
        """Read a file written by :meth:`save`.

        Raises:
            FileNotFoundError: when the file does not exist.
            InputError: naming the file, when it is not a complete Parquet file, not an hf_bpe counts file, of a
                newer format, or inconsistent (duplicate tokens, counts outside 1..2**63-1, a wrong row count).
        """
        import json

        import pyarrow as pa
        import pyarrow.parquet as pq

        name = os.fspath(path)
        if not Path(name).is_file():
            raise FileNotFoundError(f"counts file {name!r} does not exist; write one with `hf-bpe count` or "
                                    "WordCounts.save")
        try:
            table = pq.read_table(name)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{name!r} is not a readable Parquet file ({exc}); it may be truncated: write it again "
                             "with `hf-bpe count`") from None
        raw = (table.schema.metadata or {}).get(_METADATA_KEY)
        if raw is None or table.schema.names != ["token", "count"]:
            raise InputError(f"{name!r} is a Parquet file but not hf_bpe counts (expected columns ['token', 'count'] "
                             f"and '{_METADATA_KEY.decode()}' metadata, found {table.schema.names!r}); make one with "
                             "`hf-bpe count`")
        try:
            meta = json.loads(raw)
            version = meta["format_version"]
            options = {"pattern": meta["pattern"], "add_prefix_space": meta["add_prefix_space"]}
            documents, size, expected_rows = meta["documents"], meta["bytes"], meta["pre_tokens"]
            fingerprint = meta["fingerprint"]
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{name!r}: its hf_bpe.counts metadata is damaged ({exc!r})") from None
        if version != COUNTS_FORMAT_VERSION:
            raise InputError(f"{name!r} is counts format {version!r}; this hf_bpe reads format "
                             f"{COUNTS_FORMAT_VERSION}: upgrade hf_bpe or count again")
        if table.num_rows != expected_rows:
            raise InputError(f"{name!r} holds {table.num_rows} pre-tokens but its metadata says {expected_rows}")
        tokens = table.column("token").to_pylist()
        values = table.column("count").to_pylist()
        counts = dict(zip(tokens, values))
        if len(counts) != len(tokens):
            raise InputError(f"{name!r} lists a pre-token twice; counts files hold each pre-token once")
        _check_utf8_tokens(name, tokens)
        try:
            loaded = cls(counts, documents=documents, total_bytes=size, fingerprint=fingerprint, **options)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name!r}: {exc}") from None
        recorded = meta.get("pattern_regex")
        if recorded is not None and recorded != loaded._pretokenizer.regex:
            raise InputError(f"{name!r}: its metadata names the pattern {excerpt(options['pattern'])} (regex "
                             f"{excerpt(loaded._pretokenizer.regex)}) but records the regex {excerpt(recorded)}; "
                             "the two disagree, so which pre-tokenizer made the counts is unknown: count again with "
                             "`hf-bpe count`")
        return loaded

    @classmethod
    def load_all(cls, paths: list[str | os.PathLike[str]]) -> WordCounts:
        """Load counts files and add them; files made with different options are refused naming both.

        Raises:
            InputError: for an empty list, or files whose options differ (naming the two files).
        """
        if isinstance(paths, str | os.PathLike) or not paths:
            raise InputError(f"expected a non-empty list of counts files, got {paths!r}")
        first = os.fspath(paths[0])
        total = cls.load(first)
        for path in paths[1:]:
            counts = cls.load(path)
            if counts._key() != total._key():
                raise InputError(f"{os.fspath(path)!r} was counted with {counts.options()!r} but {first!r} with "
                                 f"{total.options()!r}; count every shard with the same options")
            try:
                total = total + counts
            except ValueError as exc:
                raise InputError(f"adding {os.fspath(path)!r}: {exc}") from None
        return total


def _check_utf8_tokens(name: str, tokens: list[bytes]) -> None:
    """Raise InputError naming the first pre-token that is not UTF-8 (a piece of text always is): one decode of
    them all, joined by ``"\\n"`` (which no invalid sequence can borrow from), and a search only on failure."""
    try:
        b"\n".join(tokens).decode("utf-8")
        return
    except UnicodeDecodeError:
        pass
    for token in tokens:  # ends: a token that does not decode is among them
        try:
            token.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name!r} holds the pre-token {excerpt(token)}, which is not UTF-8 ({exc.reason}): no "
                             "text gives it, as pre-tokens are pieces of UTF-8 text; the file is damaged or not "
                             "made by `hf-bpe count`: count again") from None


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the pool and reports it once (exit 130); workers
    # printing a KeyboardInterrupt traceback each would bury that message. Workers start with SIGINT blocked
    # (_interrupt_safe_pool): ignore it, then unblock.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _interrupt_safe_pool(context: Any, workers: int) -> Iterator[Any]:
    """A process pool whose workers cannot die of a Ctrl-C; terminated on leaving, however it is left.

    A worker that a Ctrl-C killed before its initializer ignored SIGINT left ``Pool.terminate`` blocked forever
    on the task pipe (seen at ~0.5 s after start). So the workers are started with SIGINT blocked (they inherit
    the mask), and a Ctrl-C meanwhile reaches this process when the mask is restored, with the pool to stop.
    """
    from ..core.interrupts import interrupts_held  # here: signal is loaded only for a pool

    pool = None
    try:
        with interrupts_held():
            pool = context.Pool(workers, initializer=_ignore_interrupts)
        yield pool
    finally:
        # Pool.terminate stops the workers, then joins the thread that feeds them, which blocks forever when it is
        # in the middle of sending a large batch that no worker will read (a CPython Pool limitation, seen on
        # Ctrl-C). Terminate from a daemon thread: the workers are stopped either way, and a stuck feeder is
        # left behind instead of hanging the caller.
        if pool is not None:
            stopper = threading.Thread(target=pool.terminate, name="hf_bpe-pool-stop", daemon=True)
            stopper.start()
            stopper.join(10)


def _count_batch(args: tuple[Pretokenizer, list[str]]) -> dict[bytes, int]:
    pretokenizer, texts = args
    return pretokenizer.count(texts)


def count_words(
    texts: Iterable[str],
    pretokenizer: Pretokenizer,
    *,
    workers: int = 1,
    show_progress: bool = False,
    fingerprint: CorpusFingerprint | None = None,
    line_blocks: bool = False,
) -> tuple[dict[bytes, int], int, int]:
    """Count the distinct pre-tokens of a stream of texts.

    Memory grows with the number of distinct pre-tokens, not with the corpus: texts are read in batches of a
    few MB and each batch is counted (in a worker process when ``workers > 1``) and dropped. Sums do not depend
    on the order in which batches finish, so the result is the same for any ``workers``.

    Args:
        texts: the sequences.
        pretokenizer: splits each text into pre-tokens.
        workers: threads (named patterns: the compiled scanner without the GIL) or processes (a custom regex)
            to count with; 1: this thread.
        show_progress: show documents and MB read on stderr.
        fingerprint: if given, every text is added to it, in order (one update per batch).
        line_blocks: ``texts`` may hold :class:`~hf_bpe.training.corpus.LineBlock` items (named patterns only),
            each counted as its lines.

    Returns:
        ``(counts, documents, characters)``.

    >>> count_words(["a b", "a"], Pretokenizer("gpt2"))
    ({b'a': 2, b' b': 1}, 2, 4)
    """
    counts, documents, characters = _count_words(texts, pretokenizer, workers=workers, show_progress=show_progress,
                                                 fingerprint=fingerprint, line_blocks=line_blocks)
    return (counts if type(counts) is dict else counts.to_dict()), documents, characters


def _count_words(
    texts: Iterable[str],
    pretokenizer: Pretokenizer,
    *,
    workers: int,
    show_progress: bool,
    fingerprint: CorpusFingerprint | None,
    line_blocks: bool,
) -> tuple[dict[bytes, int] | Any, int, int]:
    """:func:`count_words`, the counts of a named pattern left flat (``_tally.FlatCounts``: no object per pre-token),
    a custom regex's as a dict (counted by ``regex`` in processes)."""
    counts: dict[bytes, int] = {}
    documents = characters = 0
    with progress_bar(show_progress, desc="count pre-tokens", unit=" docs") as bar:

        def account(batch: list[str]) -> list[str]:
            nonlocal documents, characters
            size = sum(map(len, batch))
            # A line read in parts (hf_bpe.core.fragment) is one document.
            documents += len(batch)
            if Fragment in set(map(type, batch)):  # rare (huge lines): the per-text check only then
                documents -= sum(1 for text in batch if type(text) is Fragment and not text.start)
            characters += size
            bar.update(len(batch))
            bar.set_postfix_str(f"{characters / 1e6:.1f}M chars", refresh=False)
            if fingerprint is not None:
                fingerprint.update(batch)
            return batch

        def account_block(block: LineBlock) -> LineBlock:
            nonlocal documents, characters
            documents += block.lines
            characters += block.characters  # code points, counted where the bytes were checked
            bar.update(block.lines)
            bar.set_postfix_str(f"{characters / 1e6:.1f}M chars", refresh=False)
            if fingerprint is not None:
                fingerprint.update_lines(block.raw, block.lines)
            return block

        def units() -> Iterator[Any]:
            # Blocks pass alone; runs of single texts (rare: over-long lines, a block's undecodable line) in batches.
            for is_block, run in groupby(texts, key=_is_block):
                yield from map(account_block, run) if is_block else map(account, iter_batches(run))

        batches = units() if line_blocks else (account(batch) for batch in iter_batches(texts))
        tally = pretokenizer.tally()
        if tally is not None:
            # The compiled scanner counts each batch on `workers` threads (no GIL, no pickling of texts) into one
            # tally, made flat once at the end. One worker: each batch counted at once, on this thread
            # (add). More: batch k is counted while this thread reads (and fingerprints) batch k + 1 (start returns
            # at once; finish() waits for the last).
            if workers <= 1:
                threads, count_lines, count_texts = 1, tally.add_lines, tally.add
            else:
                threads, count_lines, count_texts = workers, tally.start_lines, tally.start
            for batch in batches:
                if type(batch) is LineBlock:
                    count_lines(batch.utf8, threads)  # its bytes: no str made
                    # The blocks already counted are freed; glibc served them from its heap (its mmap threshold
                    # rises to a block's size once one is freed) and keeps their pages: give them back now, as
                    # a mapped block would (~1 ms a block of up to 4 MiB; csrc/release_memory.hpp).
                    release_free_memory()
                else:
                    count_texts(batch, threads)
            tally.finish()
            flat = tally.flat()
            # The threads' counters and the text blocks are freed: give their pages back before the merge loop.
            del tally
            release_free_memory()
            return flat, documents, characters
        if line_blocks:
            raise ValueError("line blocks need a named pattern's compiled counter, not a custom regex")
        if workers <= 1:
            for batch in batches:
                pretokenizer.count(batch, counts)
            return counts, documents, characters
        # Forked workers inherit the compiled scanner's tables; imap keeps at most a few batches in flight. Imported
        # here: only a custom regex counts in processes (the module costs the named patterns ~1 MB and ~10 ms).
        import multiprocessing

        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with _interrupt_safe_pool(context, workers) as pool:
            for partial in pool.imap_unordered(_count_batch, ((pretokenizer, b) for b in batches), chunksize=1):
                for word, n in partial.items():
                    counts[word] = counts.get(word, 0) + n
    return counts, documents, characters


def _is_block(text: Any) -> bool:
    return type(text) is LineBlock


def choose_workers(pretokenizer: Pretokenizer, corpus_size: int) -> int:
    """Return how many counting threads (named patterns) or processes (custom regex) pay off.

    The compiled scanner of the named patterns counts on threads without the GIL: every usable CPU. A custom
    regex counts in processes (texts pickled to them), which pay off only on corpora of several MB.

    >>> choose_workers(Pretokenizer("gpt2"), 10**9) == usable_cpus()
    True
    """
    if pretokenizer.name is not None:
        return usable_cpus()
    if corpus_size >= _PARALLEL_MIN_CHARS:
        return max(1, min(usable_cpus(), 8))
    return 1


def corpus_chars_hint(corpus: Any) -> int:
    """Guess the corpus size without reading it (file sizes), to decide whether processes pay off.

    >>> corpus_chars_hint(["not", "paths"])
    0
    """
    paths = [corpus] if isinstance(corpus, os.PathLike) else corpus if isinstance(corpus, list | tuple) else []
    try:
        return sum(os.path.getsize(p) for p in paths if isinstance(p, os.PathLike))
    except OSError:
        return 0
