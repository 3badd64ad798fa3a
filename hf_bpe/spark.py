"""Apache Spark for corpora that outgrow one machine: count pre-tokens and tokenize text columns on executors.

Spark schedules the work; hf_bpe only gives each task the compiled scanner or encoder:

- :func:`count_words_spark` counts the pre-tokens of a DataFrame text column, or of text files, in
  ``mapPartitions`` and sums them with ``reduceByKey``; it returns the :class:`~hf_bpe.WordCounts` that
  :meth:`WordCounts.from_corpus` gives on one machine (same counts, same order-free ``multiset`` fingerprint), so
  :func:`hf_bpe.train_from_counts` writes byte-identical files;
- :func:`tokenize_spark` adds a token-ids column to a DataFrame with ``mapInArrow`` (the model is broadcast once),
  ids equal to :meth:`BPEModel.encode_ordinary`; write it out with the DataFrame's own writer (Parquet, ...).

Text files are read as hf_bpe reads them: each line, ending at ``"\\n"`` only, is one document including its
``"\\n"`` (Spark's reader drops it; a file's last line without one is corrected from the file's tail). Spark
decodes invalid UTF-8 into U+FFFD instead of refusing it as the single-machine reader does.

``pyspark`` is an optional dependency (``pip install 'hf_bpe[spark]'``) and needs Java 17; ``import hf_bpe`` never
imports it. The same code runs on a cluster: pass ``master="spark://host:7077"`` (or ``yarn``, ``k8s://...``), or
a ``SparkSession`` that ``spark-submit`` created, and paths the executors can read (``hdfs://``, ``s3a://``).

>>> count_words_spark  # doctest: +ELLIPSIS
<function count_words_spark at ...>
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

from .errors import InputError
from .model.bpe import BPEModel
from .training.counts import WordCounts

__all__ = ["count_words_spark", "spark_session", "tokenize_files_spark", "tokenize_spark"]

_MODULUS = 1 << 256
_STATS = "__hf_bpe_stats__"  # the key of the per-partition (documents, bytes, sha256 sum) record


def spark_session(master: str | None = None, *, app_name: str = "hf_bpe") -> Any:
    """Return the active ``SparkSession``, or start one on ``master`` (e.g. ``"local[2]"``), logging warnings only.

    On a local master the Python workers run this interpreter (``PYSPARK_PYTHON`` is set to it while the session
    starts, unless already set).

    Raises:
        InputError: ``pyspark`` is not installed, or no Java runtime is found (saying what to install).
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError("Spark needs pyspark: pip install 'hf_bpe[spark]' (and Java 17)") from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise InputError("Spark needs a Java runtime (17 or newer) and none was found: install one (e.g. Debian's "
                         "openjdk-17-jre-headless) or set JAVA_HOME")
    builder = SparkSession.builder.appName(app_name).config("spark.ui.enabled", "false")
    if master is not None:
        builder = builder.master(master)
    # Local workers run this interpreter (where hf_bpe is installed), not the first `python3` on PATH: a venv used
    # without activating it (.venv/bin/hf-bpe --spark local[2]) failed in the workers on a missing import. pyspark
    # reads the variable, not the spark.pyspark.python setting, when the context starts (it keeps it as
    # pythonExec for every Python function it ships); it is set only meanwhile, so a later session on a cluster
    # does not inherit this machine's path.
    chosen = (master or "").startswith("local") and not os.environ.get("PYSPARK_PYTHON")
    if chosen:
        os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        session = builder.getOrCreate()
    finally:
        if chosen:
            del os.environ["PYSPARK_PYTHON"]
    session.sparkContext.setLogLevel("WARN")
    return session


def count_words_spark(
    source: Any,
    *,
    pattern: str = "gpt2",
    add_prefix_space: bool = False,
    text_column: str = "text",
    spark: Any = None,
    master: str | None = None,
) -> WordCounts:
    """Count pre-tokens with Spark; return what :meth:`WordCounts.from_corpus` returns on one machine.

    Args:
        source: a Spark DataFrame (its ``text_column`` holds the documents), or a list of text-file paths.
        pattern, add_prefix_space: the pre-tokenizer (see :func:`hf_bpe.train`).
        text_column: the DataFrame column of the documents.
        spark: the session to use (default: :func:`spark_session` on ``master``).
        master: the Spark master when no session is given (``"local[2]"``, ``"spark://host:7077"``, ...).

    Raises:
        InputError: pyspark or Java missing, no such column, a value that is not a string (naming the column
            and the value), or an empty corpus.
    """
    from .core.pretokenize import Pretokenizer

    Pretokenizer(pattern, add_prefix_space=add_prefix_space)  # a bad pattern fails here, before Spark starts
    paths = [os.fspath(p) for p in source] if isinstance(source, list | tuple) else None
    if paths is not None:
        if not paths or not all(isinstance(p, str) for p in paths):
            raise InputError(f"source must be a Spark DataFrame or a non-empty list of paths, got {source!r:.80}")
        _check_local_files(paths)
        session = spark or spark_session(master)
        frame = session.read.text(paths, lineSep="\n")
        column, suffix = "value", "\n"
    else:
        frame, column, suffix = source, text_column, ""
        if text_column not in frame.columns:
            raise InputError(f"the DataFrame has no column {text_column!r}; its columns are {frame.columns!r}")
    # 1. Count on the executors, sum with a shuffle; one small record per partition carries the fingerprint.
    options = (pattern, add_prefix_space, column, suffix)
    try:
        pairs = (frame.select(column).rdd.mapPartitionsWithIndex(lambda index, rows: _count_partition(
            index, rows, *options)).reduceByKey(_add_values).collect())
    except Exception as exc:  # noqa: BLE001 - Spark wraps the executors' errors in its own types
        raise _user_error(exc) from None
    counts: dict[bytes, int] = {}
    documents = size = total = 0
    for key, value in pairs:
        if key == _STATS:
            documents, size, total = value
        else:
            counts[key] = value
    # 2. A file's last line without "\n" was counted with one: take the difference off (read from the tail).
    if paths is not None:
        pretokenizer = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
        for path in paths:
            last = _last_line_without_newline(path)
            if last is None:
                continue
            for piece, n in pretokenizer.count([last + "\n"]).items():
                counts[piece] -= n
                if not counts[piece]:
                    del counts[piece]
            for piece, n in pretokenizer.count([last]).items():
                counts[piece] = counts.get(piece, 0) + n
            total += _sha(last.encode("utf-8", "surrogatepass")) - _sha((last + "\n").encode("utf-8", "surrogatepass"))
            size -= 1
    if not documents:
        raise InputError("the corpus holds no text: nothing to count")
    # 3. The single machine's order: pieces sorted by bytes (the counts' order never changes training).
    fingerprint = {"order": "multiset", "sha256": f"{total % _MODULUS:064x}", "documents": documents, "bytes": size}
    return WordCounts(dict(sorted(counts.items())), pattern=pattern, add_prefix_space=add_prefix_space,
                      documents=documents, total_bytes=size, fingerprint=fingerprint)


def _check_local_files(paths: list[str]) -> None:
    """Refuse a missing local file before Spark starts (``scheme://`` paths are left to Spark's file systems)."""
    for path in paths:
        if "://" not in path and not os.path.isfile(path):
            raise InputError(f"corpus file {path!r} does not exist (or is not a file)")


def _count_partition(index: int, rows: Iterator[Any], pattern: str, add_prefix_space: bool, column: str,
                     suffix: str) -> Iterator[tuple[Any, Any]]:
    """Count one partition with the compiled scanner; yield (piece, count) and one (_STATS, ...) record."""
    from .core._tally import sum_digests
    from .core.pretokenize import Pretokenizer

    tally = Pretokenizer(pattern, add_prefix_space=add_prefix_space).tally()
    counter = None if tally is not None else {}
    batch: list[str] = []
    datas: list[bytes] = []  # the batch's UTF-8, for the multiset fingerprint (summed in compiled code)
    documents = size = total = 0
    for position, row in enumerate(rows):
        text = row[0]
        if not isinstance(text, str):
            raise ValueError(f"hf_bpe: column {column!r} holds {type(text).__name__} {text!r:.60} (partition "
                             f"{index}, row {position}), not a string; drop or fill such rows first "
                             f"(df.na.drop(subset=[{column!r}]))")
        text += suffix
        data = text.encode("utf-8", "surrogatepass")
        documents += 1
        size += len(data)
        datas.append(data)
        batch.append(text)
        if len(batch) >= 4096:
            total += int.from_bytes(sum_digests(datas), "big")
            _count_batch(batch, pattern, add_prefix_space, tally, counter)
            batch, datas = [], []
    total += int.from_bytes(sum_digests(datas), "big")
    _count_batch(batch, pattern, add_prefix_space, tally, counter)
    yield from (tally.into({}) if tally is not None else counter).items()
    yield _STATS, (documents, size, total % _MODULUS)


def _count_batch(batch: list[str], pattern: str, add_prefix_space: bool, tally: Any, counter: Any) -> None:
    from .core.pretokenize import Pretokenizer

    if tally is not None:
        tally.add(batch)
    else:
        Pretokenizer(pattern, add_prefix_space=add_prefix_space).count(batch, counter)


def _add_values(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):  # the stats records
        return (a[0] + b[0], a[1] + b[1], (a[2] + b[2]) % _MODULUS)
    return a + b


def _sha(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


def _last_line_without_newline(path: str) -> str | None:
    """The last line of a file when it does not end with "\\n" (None when it does, or the file is empty)."""
    if "://" in path:
        from pyarrow import fs

        filesystem, inner = fs.FileSystem.from_uri(path)
        with filesystem.open_input_file(inner) as handle:
            data = _tail(handle, handle.size())
    else:
        with open(path, "rb") as handle:
            data = _tail(handle, os.path.getsize(path))
    if not data or data.endswith(b"\n"):
        return None
    return data[data.rfind(b"\n") + 1:].decode("utf-8", "replace")


def _tail(handle: Any, size: int) -> bytes:
    """The bytes after a file's last "\\n" but one: enough to hold its last line."""
    step, data = 1 << 16, b""
    position = size
    while position > 0:
        start = max(0, position - step)
        handle.seek(start)
        data = handle.read(position - start) + data
        position = start
        if data.count(b"\n") >= 2 or (data.count(b"\n") == 1 and not data.endswith(b"\n")):
            break
    return data


def tokenize_spark(frame: Any, model: BPEModel, *, text_column: str = "text",
                   output_column: str = "input_ids") -> Any:
    """Return ``frame`` with a column of token ids (``array<int>``), ids equal to ``model.encode_ordinary``.

    The model is broadcast to the executors once; each task encodes Arrow batches with the compiled encoder
    (``mapInArrow``). Nothing runs until the result is used (``.write.parquet(...)``, ``.collect()``, ...).

    Raises:
        InputError: no such column, or an output column that exists already. A value that is not a string
            fails the Spark job with a message naming the column and the value.
    """
    from pyspark.sql.types import ArrayType, IntegerType, StructField, StructType

    if not isinstance(model, BPEModel):
        raise InputError(f"model must be an hf_bpe BPEModel, got {type(model).__name__}; BPEModel.load(folder)")
    if text_column not in frame.columns:
        raise InputError(f"the DataFrame has no column {text_column!r}; its columns are {frame.columns!r}")
    if output_column in frame.columns:
        raise InputError(f"the DataFrame already has a column {output_column!r}; pass output_column=")
    shipped = frame.sparkSession.sparkContext.broadcast(model)
    schema = StructType([*frame.schema.fields, StructField(output_column, ArrayType(IntegerType()), True)])

    def encode(batches: Iterator[Any]) -> Iterator[Any]:
        return _encode_batches(batches, shipped.value, text_column, output_column)

    return frame.mapInArrow(encode, schema)


def tokenize_files_spark(paths: list[str], model: BPEModel, out: str, *, add_eos: bool = True,
                         spark: Any = None, master: str | None = None, force: bool = False) -> str:
    """Tokenize text files with Spark into a Parquet folder: one row per line (without its ``"\\n"``), as
    ``hf-bpe tokenize FILE...`` reads them, column ``input_ids`` (``array<int>``), plus the EOS id when ``add_eos``.

    On a local path Spark writes into a temporary folder beside ``out`` that is renamed to ``out`` only when the job
    succeeded, so an interrupted job leaves no partial output and a rerun starts afresh; on a cluster store
    (``hdfs://``, ``s3a://``) Spark's output committer publishes the folder only on success. Rows follow Spark's
    partitions (files are split and ordered by Spark), so read them as a set of documents, not in the files' order.

    Raises:
        InputError: pyspark or Java missing, a missing file, no ``eos_token`` with ``add_eos``, or ``out``
            existing without ``force``.
    """
    from .integrations.preprocess import resolve_tokenizer

    _, eos_id, _ = resolve_tokenizer(model)
    if add_eos and eos_id is None:
        raise InputError("add_eos needs the tokenizer's eos_token and it has none; give it one (--eos-token when "
                         "training) or pass --no-eos")
    local = "://" not in out
    if local and os.path.exists(out) and not force:
        raise InputError(f"{out!r} already exists; pass --force to replace it")
    _check_local_files(paths)
    session = spark or spark_session(master)
    frame = tokenize_spark(session.read.text(list(paths), lineSep="\n"), model, text_column="value")
    if add_eos:
        from pyspark.sql import functions as F

        frame = frame.withColumn("input_ids", F.concat("input_ids", F.array(F.lit(eos_id))))
    if not local:  # a cluster store: Spark's own output committer publishes the folder only on success
        try:
            frame.select("input_ids").write.mode("overwrite" if force else "errorifexists").parquet(out)
        except Exception as exc:  # noqa: BLE001 - Spark wraps the executors' errors in its own types
            raise _user_error(exc) from None
        return out
    staging = f"{out.rstrip(os.sep)}.hf_bpe-{os.getpid()}.tmp"
    try:
        frame.select("input_ids").write.mode("overwrite").parquet(staging)
    except Exception as exc:  # noqa: BLE001
        shutil.rmtree(staging, ignore_errors=True)
        raise _user_error(exc) from None
    if os.path.exists(out):
        shutil.rmtree(out)
    os.replace(staging, out)
    return out


def _encode_batches(batches: Iterator[Any], model: BPEModel, text_column: str,
                    output_column: str) -> Iterator[Any]:
    import pyarrow as pa
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    seen = 0  # rows of this partition before the current batch
    for batch in batches:
        texts = batch.column(batch.schema.get_field_index(text_column)).to_pylist()
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"hf_bpe: column {text_column!r} holds {type(text).__name__} {text!r:.60} "
                                 f"(partition {partition}, row {seen + position}), not a string; drop or fill such "
                                 f"rows first (df.na.drop(subset=[{text_column!r}]))")
        seen += len(texts)
        # one thread per task: Spark already runs a task per core
        ids = pa.array(model.encode_ordinary_batch(texts, num_threads=1), type=pa.list_(pa.int32()))
        yield pa.RecordBatch.from_arrays([*batch.columns, ids], names=[*batch.schema.names, output_column])


def _user_error(exc: BaseException) -> BaseException:
    """An executor's hf_bpe error as the InputError it is; anything else unchanged."""
    message = str(exc)
    marker = message.rfind("Error: hf_bpe: ")  # the exception's own line (the traceback quotes the source too)
    if marker < 0:
        return exc
    line = message[marker + len("Error: hf_bpe: "):].splitlines()[0]
    return InputError(line)

