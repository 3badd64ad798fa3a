"""Tokenize a `datasets` corpus for language-model training: ids per document, or packed into fixed blocks.

:func:`tokenize_dataset` is the usual ``map`` + ``group_texts`` of causal-LM training scripts, done once and exactly:

1. every document becomes its ids (the compiled encoder, ``encode_ordinary``: special-token text in a document is
   text), plus the EOS id when ``add_eos``; on a ``Dataset`` this is one cached, batched ``Dataset.map`` (with
   ``num_proc`` processes), so a second run, in any process, reuses the cache file;
2. with ``block_size``, the documents' ids are cut into blocks of exactly ``block_size`` ids across document
   boundaries (EOS separating documents). Unlike ``group_texts`` inside a batched ``map``, which drops a partial
   block at the end of every batch, only the corpus' last partial block is dropped (or padded): concatenating the
   blocks gives back every document's ids. The blocks of a ``Dataset`` are written to a cache file beside the
   tokenized one, named by its fingerprint and the options, and reused.

A streaming ``IterableDataset`` is tokenized and packed lazily, in the order it streams.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..model.bpe import BPEModel
from .fast_model import fast_tokenizer_model

__all__ = ["resolve_tokenizer", "save_tokenized", "tokenize_dataset", "tokenizer_identity", "with_eos_token"]

_BLOCK_CHUNK = 1 << 20  # ids packed per Arrow batch when cutting blocks: memory stays a few MB


def tokenize_dataset(
    dataset: Any,
    tokenizer: Any,
    *,
    text_column: str = "text",
    num_proc: int | None = None,
    add_eos: bool = True,
    eos_token: str | None = None,
    skip_empty: bool = False,
    block_size: int | None = None,
    labels: bool = False,
    drop_last: bool = True,
    batch_size: int = 1000,
) -> Any:
    """Tokenize a dataset's text column: one row per document, or documents packed into ``block_size`` blocks.

    Args:
        dataset: a ``datasets.Dataset`` or streaming ``datasets.IterableDataset``.
        tokenizer: a :class:`~hf_bpe.BPEModel`, an :class:`~hf_bpe.HFBPETokenizer`, or a tokenizer folder.
        text_column: the column holding the documents (``str``).
        num_proc: processes for ``Dataset.map`` (``None``: this process); the result never depends on it.
        add_eos: append the tokenizer's ``eos_token`` id to every document (the separator of packed documents).
        eos_token: the special token to append instead of the tokenizer's ``eos_token`` (e.g. ``"<|endoftext|>"``
            for a model trained with ``special_tokens=[...]`` but no ``eos_token=`` role).
        skip_empty: leave out documents that are empty strings (the blank lines of wrapped prose, which would
            otherwise each become a lone EOS); other documents are packed exactly as without it.
        block_size: pack into rows of exactly this many ids (``None``: one row per document).
        labels: add a ``labels`` column equal to ``input_ids`` (``-100`` on padding), as causal-LM trainers expect.
        drop_last: drop the last partial block; ``False`` pads it to ``block_size`` with the ``pad_token`` (else
            the ``eos_token``), ``attention_mask`` 0 and ``labels`` -100 there.
        batch_size: documents per ``map`` batch.

    Returns:
        A dataset of the same kind with the columns ``input_ids`` and ``attention_mask`` (and ``labels``); the
        input's columns are not kept.

    Raises:
        TypeError: ``dataset`` is not a ``datasets`` dataset, or an option has the wrong type.
        ValueError: no column ``text_column``, an empty dataset, ``block_size < 2``, ``add_eos`` without an
            ``eos_token``, or a value in the column that is not ``str`` (named by its row).

    >>> import datasets
    >>> model = BPEModel({bytes([b]): b for b in range(256)}, [], special_tokens={"<eos>": 256},
    ...                  roles={"eos_token": "<eos>"})
    >>> ds = datasets.Dataset.from_dict({"text": ["hi", "abc"]})
    >>> tokenize_dataset(ds, model)["input_ids"][:]
    [[104, 105, 256], [97, 98, 99, 256]]
    >>> tokenize_dataset(ds, model, block_size=3)["input_ids"][:]
    [[104, 105, 256], [97, 98, 99]]
    """
    import datasets

    # 1. Validate everything before any work.
    streaming = isinstance(dataset, datasets.IterableDataset)
    if not streaming and not isinstance(dataset, datasets.Dataset):
        raise TypeError(f"dataset must be a datasets.Dataset or IterableDataset, got {type(dataset).__name__}; "
                        "load text files with datasets.load_dataset('text', data_files=...) first")
    for name, value in (("add_eos", add_eos), ("skip_empty", skip_empty), ("labels", labels),
                        ("drop_last", drop_last)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {value!r}")
    if not isinstance(text_column, str):
        raise TypeError(f"text_column must be a str, got {text_column!r}")
    if block_size is not None and (isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 2):
        raise ValueError(f"block_size must be None or an int >= 2, got {block_size!r}")
    if num_proc is not None and (isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1):
        raise ValueError(f"num_proc must be None or an int >= 1, got {num_proc!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    if streaming and num_proc not in (None, 1):
        raise ValueError(f"num_proc={num_proc!r} needs a Dataset; a streaming IterableDataset is tokenized as it "
                         "streams (leave num_proc out, or load the dataset without streaming=True)")
    columns = dataset.column_names
    if columns is not None and text_column not in columns:
        raise ValueError(f"the dataset has no column {text_column!r}; its columns are {columns!r}; pass "
                         "text_column= (--text-column) naming the one that holds the documents")
    if not streaming and len(dataset) == 0:
        raise ValueError("the dataset has no rows: there is nothing to tokenize")
    if eos_token is not None and not isinstance(eos_token, str):
        raise TypeError(f"eos_token must be None or a str, got {eos_token!r:.80}")
    model, eos_id, pad_id = resolve_tokenizer(tokenizer, eos_token=eos_token)
    if add_eos and eos_id is None:
        raise ValueError("add_eos=True but the tokenizer has no eos_token; name one of its special tokens with "
                         "eos_token=..., give the tokenizer the role (hf_bpe.train(..., eos_token=...) or "
                         "tok.eos_token = ...), or pass add_eos=False")
    fill = pad_id if pad_id is not None else eos_id
    if block_size is not None and not drop_last and fill is None:
        raise ValueError("drop_last=False pads the last block, but the tokenizer has neither a pad_token nor an "
                         "eos_token to pad with; give it one, or keep drop_last=True")

    # 2. Per-document ids (one cached map on a Dataset).
    masks = block_size is None
    tokenized = dataset.map(
        _encode_batch, batched=True, batch_size=batch_size, with_indices=True,
        remove_columns=columns if columns is not None else [text_column],
        fn_kwargs={"model": model, "column": text_column, "eos_id": eos_id if add_eos else None,
                   "masks": masks, "labels": labels and masks, "streaming": streaming, "skip_empty": skip_empty},
        features=None if streaming else _features(masks, labels and masks),
        **({} if streaming else {"num_proc": num_proc, "desc": "hf-bpe: tokenizing"}),
    )
    if block_size is None:
        return tokenized
    # 3. Blocks across document boundaries.
    options = {"block_size": block_size, "labels": labels, "drop_last": drop_last, "fill": fill}
    if streaming:
        return datasets.IterableDataset.from_generator(_stream_blocks, gen_kwargs={"tokenized": tokenized, **options},
                                                       features=_features(True, labels))
    return _pack_dataset(tokenized, **options)


def resolve_tokenizer(tokenizer: Any, *, eos_token: str | None = None) -> tuple[BPEModel, int | None, int | None]:
    """Return ``(model, eos id, pad id)`` for a ``BPEModel``, an ``HFBPETokenizer`` or a tokenizer folder.

    ``eos_token``, when given, names the special token whose id is the EOS id (instead of the tokenizer's role).
    """
    if isinstance(tokenizer, (str, os.PathLike)):
        tokenizer = BPEModel.load(tokenizer)
    if isinstance(tokenizer, BPEModel):
        model, specials = tokenizer, tokenizer.special_tokens
        roles = tokenizer.roles
        eos_id, pad_id = (specials.get(roles[role]) if role in roles else None for role in ("eos_token", "pad_token"))
    elif isinstance(getattr(tokenizer, "bpe_model", None), BPEModel) or fast_tokenizer_model(tokenizer) is not None:
        # HFBPETokenizer, or the fast tokenizer AutoTokenizer gives for a default folder: its roles as set now
        # (tok.eos_token = ... included), and its added tokens.
        model = tokenizer.bpe_model if hasattr(tokenizer, "bpe_model") else fast_tokenizer_model(tokenizer)
        specials = tokenizer.get_added_vocab()
        eos_id, pad_id = tokenizer.eos_token_id, tokenizer.pad_token_id
    else:
        raise TypeError(f"tokenizer must be an hf_bpe BPEModel, an HFBPETokenizer, a transformers fast tokenizer "
                        f"or a tokenizer folder, got {type(tokenizer).__name__}; load one with "
                        "hf_bpe.BPEModel.load(folder)")
    if eos_token is not None:
        if eos_token not in specials:
            raise ValueError(f"eos_token {eos_token!r:.80} is not a special token of the tokenizer; its special "
                             f"tokens are {sorted(specials)!r:.200}")
        eos_id = specials[eos_token]
    return model, eos_id, pad_id


def with_eos_token(model: BPEModel, eos_token: str) -> BPEModel:
    """Return a copy of ``model`` whose ``eos_token`` role is ``eos_token``, one of its special tokens.

    >>> model = BPEModel.bytes_only(special_tokens={"<|endoftext|>": 256})
    >>> with_eos_token(model, "<|endoftext|>").roles["eos_token"]
    '<|endoftext|>'
    """
    resolve_tokenizer(model, eos_token=eos_token)  # refuses a token that is not one of its special tokens
    # The copy pickling makes (the model's whole state), with the one role changed.
    rebuild, state = model.__reduce__()
    *head, roles, partial = state
    return rebuild(*head, {**roles, "eos_token": eos_token}, partial)


def tokenizer_identity(model: BPEModel) -> dict[str, Any]:
    """What identifies a tokenizer in outputs made with it: its digest (:meth:`BPEModel.digest`), size and pattern.

    >>> tokenizer_identity(BPEModel.bytes_only())["vocab_size"]
    256
    """
    largest = max([*model.vocab.values(), *model.special_tokens.values()], default=-1)
    return {"sha256": model.digest(), "vocab_size": len(model), "largest_id": largest,
            "pattern": model.pattern, "special_tokens": dict(model.special_tokens)}


def _features(masks: bool, labels: bool) -> Any:
    import datasets

    ids = datasets.List(datasets.Value("int32"))
    features = {"input_ids": ids}
    if masks:
        features["attention_mask"] = datasets.List(datasets.Value("int8"))
    if labels:
        features["labels"] = ids
    return datasets.Features(features)


def _encode_batch(batch: dict[str, list[Any]], indices: list[int], *, model: BPEModel, column: str,
                  eos_id: int | None, masks: bool, labels: bool, streaming: bool, skip_empty: bool) -> Any:
    """Encode one ``map`` batch into an Arrow table (a module-level function: it pickles to workers and hashes
    for the cache). The masks and labels share the ids' offsets: no Python list per row. A streaming map takes
    only dicts of lists."""
    import numpy as np
    import pyarrow as pa

    texts = batch[column]
    for index, text in zip(indices, texts):
        if not isinstance(text, str):
            raise ValueError(f"row {index} of column {column!r} holds {type(text).__name__} {text!r:.60}, not a "
                             "str; drop or fill such rows first (dataset.filter(lambda r: isinstance(r[...], str)))")
    if skip_empty:  # a batched map may return fewer rows than it was given (every input column is removed)
        texts = [text for text in texts if text]
    # Built in compiled code, EOS included: the ids buffer goes into the table as it is (no list per row or id).
    input_ids = model.encode_ordinary_batch_arrow(texts, eos_id=eos_id)
    columns = {"input_ids": input_ids}
    if masks:
        ones = pa.array(np.ones(len(input_ids.values), dtype=np.int8))
        columns["attention_mask"] = pa.ListArray.from_arrays(input_ids.offsets, ones)
    if labels:
        columns["labels"] = input_ids
    return pa.table(columns).to_pydict() if streaming else pa.table(columns)


def _blocks(flat_batches: Iterator[Any], block_size: int, drop_last: bool, fill: int | None) -> Iterator[Any]:
    """Cut a stream of flat id arrays into ``(ids, real)`` arrays of whole blocks (``real`` marks non-padding)."""
    import numpy as np

    carry = np.zeros(0, dtype=np.int32)
    for flat in flat_batches:
        carry = np.concatenate([carry, np.asarray(flat, dtype=np.int32)])
        whole = len(carry) // block_size * block_size
        if whole:
            yield carry[:whole], None
            carry = carry[whole:]
    if len(carry) and not drop_last:
        padded = np.full(block_size, fill, dtype=np.int32)
        padded[:len(carry)] = carry
        real = np.zeros(block_size, dtype=np.int8)
        real[:len(carry)] = 1
        yield padded, real


def _block_table(ids: Any, real: Any, block_size: int, labels: bool) -> Any:
    """Blocks as an Arrow table of ``input_ids``/``attention_mask``(/``labels``) list columns."""
    import numpy as np
    import pyarrow as pa

    count = len(ids) // block_size
    offsets = pa.array(np.arange(0, count * block_size + 1, block_size, dtype=np.int32))
    mask = real if real is not None else np.ones(len(ids), dtype=np.int8)
    columns = {"input_ids": pa.ListArray.from_arrays(offsets, pa.array(ids, type=pa.int32())),
               "attention_mask": pa.ListArray.from_arrays(offsets, pa.array(mask, type=pa.int8()))}
    if labels:
        label_ids = ids if real is None else np.where(real == 1, ids, -100).astype(np.int32)
        columns["labels"] = pa.ListArray.from_arrays(offsets, pa.array(label_ids, type=pa.int32()))
    return pa.table(columns)


def _flat_ids(tokenized: Any) -> Iterator[Any]:
    """The documents' ids of a tokenized ``Dataset``, end to end, as Arrow-backed numpy arrays (no Python ints)."""
    for batch in tokenized.data.to_batches(max_chunksize=_BLOCK_CHUNK // 64):
        column = batch.column(batch.schema.get_field_index("input_ids"))
        yield column.flatten().to_numpy(zero_copy_only=False)


def _pack_dataset(tokenized: Any, *, block_size: int, labels: bool, drop_last: bool, fill: int | None) -> Any:
    """Pack a tokenized ``Dataset`` into blocks, cached in a file named by its fingerprint and the options."""
    import datasets
    from datasets.arrow_writer import ArrowWriter
    from datasets.fingerprint import Hasher

    features = _features(True, labels)
    key = Hasher.hash([tokenized._fingerprint, block_size, labels, drop_last, fill, "hf_bpe-pack-1"])
    if not tokenized.cache_files:  # an in-memory dataset: blocks in memory too
        tables = [_block_table(ids, real, block_size, labels)
                  for ids, real in _blocks(_flat_ids(tokenized), block_size, drop_last, fill)]
        import pyarrow as pa

        table = pa.concat_tables(tables) if tables else features.arrow_schema.empty_table()
        return datasets.Dataset(table.cast(features.arrow_schema), fingerprint=key)
    path = Path(tokenized.cache_files[0]["filename"]).parent / f"hf_bpe-blocks-{key}.arrow"
    if not path.exists():
        # Written under a temporary name and renamed: an interrupted run leaves no cache file that looks complete.
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with ArrowWriter(path=str(temporary), features=features) as writer:
                for ids, real in _blocks(_flat_ids(tokenized), block_size, drop_last, fill):
                    writer.write_table(_block_table(ids, real, block_size, labels))
                writer.finalize()
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    return datasets.Dataset.from_file(str(path))


def _stream_blocks(tokenized: Any, *, block_size: int, labels: bool, drop_last: bool,
                   fill: int | None) -> Iterator[dict[str, list[int]]]:
    """Blocks of a streaming tokenized dataset, in stream order."""
    flats = (row["input_ids"] for row in tokenized)
    for ids, real in _blocks(flats, block_size, drop_last, fill):
        table = _block_table(ids, real, block_size, labels)
        yield from table.to_pylist()


def save_tokenized(dataset: Any, tokenizer: Any, out: str | os.PathLike[str], *, format: str = "arrow",
                   dtype: str | None = None, force: bool = False, show_progress: bool = True,
                   **options: Any) -> Path:
    """Tokenize ``dataset`` (:func:`tokenize_dataset` with ``options``) and write the result to the folder ``out``.

    ``format="arrow"`` writes a ``datasets`` dataset (``save_to_disk``; ``datasets.load_from_disk`` reads it);
    ``format="bin"`` writes the documents' ids end to end as ``tokens.bin`` plus ``offsets.bin`` and ``tokens.json``
    (document offsets, the tokenizer's identity; see :mod:`hf_bpe.formats.token_file`), for training loops that
    ``numpy.memmap`` it (files straight to such a folder, without ``datasets``:
    :func:`hf_bpe.integrations.file_tokenize.tokenize_files`).
    The folder appears whole or not at all (:func:`hf_bpe.formats.atomic.build_folder`); the tokenizing itself is
    cached by ``datasets``, so a rerun after an interruption redoes only what was not cached.

    Args:
        dataset, tokenizer, options: as :func:`tokenize_dataset`.
        out: the folder to create.
        format: ``"arrow"`` or ``"bin"``.
        dtype: ``bin`` only: ``"uint16"``/``"uint32"`` (default: the smallest that holds every id).
        force: replace an existing ``out``.
        show_progress: a progress bar on stderr while writing ``bin``.

    Raises:
        FileExistsError: ``out`` exists and ``force`` is false (checked before any work).
        ValueError: an unknown ``format``, ``block_size`` with ``bin`` (a flat stream: cut windows when reading),
            ``dtype`` with ``arrow``, ids too large for ``dtype``, and what :func:`tokenize_dataset` refuses.
    """
    from ..formats.atomic import build_folder
    from ..formats.token_file import token_dtype, write_token_file

    # 1. Everything that can be refused is refused before tokenizing.
    if format not in ("arrow", "bin"):
        raise ValueError(f"format must be 'arrow' or 'bin', got {format!r}")
    if format == "bin" and options.get("block_size") is not None:
        raise ValueError("format='bin' writes one flat stream of ids (training loops cut their windows from the "
                         "memory map); leave block_size out, or use format='arrow' for packed blocks")
    if format == "arrow" and dtype is not None:
        raise ValueError(f"dtype={dtype!r} applies to format='bin' only; the arrow format stores int32 ids")
    if not isinstance(out, (str, os.PathLike)) or not os.fspath(out).strip():
        raise ValueError(f"out must name a folder, got {out!r}")
    if Path(out).exists() and not force:
        raise FileExistsError(f"{os.fspath(out)!r} already exists; pass force=True (--force) to replace it")
    model, _, _ = resolve_tokenizer(tokenizer)
    identity = tokenizer_identity(model)
    chosen = token_dtype(identity["largest_id"], dtype) if format == "bin" else None
    # 2. Tokenize (cached), then write the folder whole.
    result = tokenize_dataset(dataset, model if isinstance(tokenizer, (str, os.PathLike)) else tokenizer, **options)

    def build(staging: Path) -> None:
        if format == "arrow":
            import datasets

            table = result
            if isinstance(result, datasets.IterableDataset):
                table = datasets.Dataset.from_generator(_rows_of, gen_kwargs={"stream": result},
                                                        features=result.features)
            table.save_to_disk(os.fspath(staging))
            return
        write_token_file(staging, _progress(_id_batches(result), show_progress, result), dtype=chosen,
                         tokenizer=identity)

    return build_folder(out, build, force=force)


def _rows_of(stream: Any) -> Iterator[dict[str, Any]]:
    yield from stream


def _id_batches(result: Any) -> Iterator[Any]:
    """The ``input_ids`` of a tokenized dataset in batches: Arrow list arrays, or lists when streaming."""
    import datasets

    if isinstance(result, datasets.IterableDataset):
        for batch in result.iter(batch_size=1000):
            yield batch["input_ids"]
        return
    for batch in result.data.to_batches(max_chunksize=10_000):
        yield batch.column(batch.schema.get_field_index("input_ids"))


def _progress(batches: Iterator[Any], enabled: bool, result: Any) -> Iterator[Any]:
    if not enabled:
        yield from batches
        return
    from tqdm.auto import tqdm

    total = getattr(result, "num_rows", None)
    with tqdm(total=total, unit=" docs", desc="hf-bpe: writing tokens", file=sys.stderr) as bar:
        for batch in batches:
            yield batch
            bar.update(len(batch))
