"""tokenize_dataset, save_tokenized and `hf-bpe tokenize`: exact ids, exact packing, caching, nothing partial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import datasets
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.formats.token_file import read_token_file
from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer
from hf_bpe.integrations.preprocess import save_tokenized, tokenize_dataset
from hf_bpe.model.bpe import BPEModel

ROOT = Path(__file__).resolve().parents[1]
_DOCS = ["hello world, said Ann.", "", "l'été 2024 — 中文 😀", "the quick brown fox " * 30, "<|endoftext|> is text",
         "a"] * 20


@pytest.fixture(scope="module")
def model():
    corpus = [d for d in _DOCS if d] * 3
    return hf_bpe.train(corpus, vocab_size=320, special_tokens=["<|endoftext|>", "<pad>"], eos_token="<|endoftext|>", pad_token="<pad>",
                        show_progress=False)


@pytest.fixture
def disk_dataset(tmp_path):
    """A file-backed Dataset (as loaded from disk), so that map writes cache files beside it."""
    datasets.Dataset.from_dict({"text": _DOCS, "id": list(range(len(_DOCS)))}).save_to_disk(tmp_path / "ds")
    return datasets.load_from_disk(os.fspath(tmp_path / "ds"))


def _expected(model, docs, eos=True):
    return [model.encode_ordinary(d) + ([model.special_tokens["<|endoftext|>"]] if eos else []) for d in docs]


def test_preprocess_documents_equal_encode_ordinary_plus_eos(model, disk_dataset):
    result = tokenize_dataset(disk_dataset, model)
    assert result.column_names == ["input_ids", "attention_mask"]
    assert result["input_ids"][:] == _expected(model, _DOCS)
    assert result["attention_mask"][:] == [[1] * len(ids) for ids in _expected(model, _DOCS)]
    assert tokenize_dataset(disk_dataset, model, add_eos=False)["input_ids"][:] == _expected(model, _DOCS, eos=False)


def test_preprocess_hf_tokenizer_and_folder_give_the_same_ids(model, disk_dataset, tmp_path):
    model.save(tmp_path / "tok")
    tok = HFBPETokenizer.from_pretrained(tmp_path / "tok")
    by_model = tokenize_dataset(disk_dataset, model)["input_ids"][:]
    assert tokenize_dataset(disk_dataset, tok)["input_ids"][:] == by_model
    assert tokenize_dataset(disk_dataset, tmp_path / "tok")["input_ids"][:] == by_model
    # The role as set at run time is the one used.
    tok.eos_token = "<pad>"
    assert tokenize_dataset(disk_dataset, tok)["input_ids"][0][-1] == model.special_tokens["<pad>"]
    # What AutoTokenizer gives for the default folder: the fast class (issue 33.8), the same ids.
    from transformers import AutoTokenizer

    fast = AutoTokenizer.from_pretrained(tmp_path / "tok")
    assert tokenize_dataset(disk_dataset, fast)["input_ids"][:] == by_model
    fast.eos_token = "<pad>"
    assert tokenize_dataset(disk_dataset, fast)["input_ids"][0][-1] == model.special_tokens["<pad>"]


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(docs=st.lists(st.text(st.sampled_from(list("ab é中 \n.")), max_size=30), min_size=1, max_size=25),
       block_size=st.integers(2, 17), labels=st.booleans(), drop_last=st.booleans())
def test_preprocess_packing_gives_back_every_document(model, docs, block_size, labels, drop_last):
    dataset = datasets.Dataset.from_dict({"text": docs})
    packed = tokenize_dataset(dataset, model, block_size=block_size, labels=labels, drop_last=drop_last)
    stream = [i for ids in _expected(model, docs) for i in ids]
    rows = packed["input_ids"][:]
    masks = packed["attention_mask"][:]
    assert all(len(row) == block_size for row in rows)
    whole = len(stream) // block_size * block_size
    if drop_last or whole == len(stream):
        assert [i for row in rows for i in row] == stream[:whole]
        assert all(set(mask) == {1} for mask in masks)
    else:  # the last block is padded with the pad token, masked out, and -100 in the labels
        assert [i for row in rows for i in row][:len(stream)] == stream
        tail = len(stream) - whole
        assert masks[-1] == [1] * tail + [0] * (block_size - tail)
        assert rows[-1][tail:] == [model.special_tokens["<pad>"]] * (block_size - tail)
    if labels:
        expected = [[i if m else -100 for i, m in zip(row, mask)] for row, mask in zip(rows, masks)]
        assert packed["labels"][:] == expected
    else:
        assert "labels" not in packed.column_names


def test_preprocess_streaming_equals_dataset(model, disk_dataset):
    streaming = disk_dataset.to_iterable_dataset(num_shards=3)
    for block_size in (None, 7):
        expected = tokenize_dataset(disk_dataset, model, block_size=block_size, labels=True)
        got = list(tokenize_dataset(streaming, model, block_size=block_size, labels=True))
        assert [row["input_ids"] for row in got] == expected["input_ids"][:]
        assert [row["labels"] for row in got] == expected["labels"][:]


def test_preprocess_packed_blocks_are_cached_by_content(model, disk_dataset):
    first = tokenize_dataset(disk_dataset, model, block_size=16)
    again = tokenize_dataset(disk_dataset, model, block_size=16)
    assert first.cache_files == again.cache_files and "hf_bpe-blocks-" in first.cache_files[0]["filename"]
    other = tokenize_dataset(disk_dataset, model, block_size=8)
    assert other.cache_files != first.cache_files


_CHILD = textwrap.dedent("""
    import json, os, sys, multiprocess
    multiprocess.set_start_method(sys.argv[3], force=True)
    import datasets
    from hf_bpe.integrations.preprocess import tokenize_dataset
    from hf_bpe.model.bpe import BPEModel
    ds = datasets.load_from_disk(sys.argv[1])
    out = tokenize_dataset(ds, BPEModel.load(sys.argv[2]), num_proc=int(sys.argv[4]), block_size=int(sys.argv[5]))
    files = sorted(f["filename"] for f in out.cache_files)
    print(json.dumps({"ids": out["input_ids"][:], "files": files,
                      "mtimes": [os.stat(f).st_mtime_ns for f in files]}))
""")


def _run_child(tmp_path, start_method, num_proc, block_size=16):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PYTHONHASHSEED": str(num_proc + 7)}
    done = subprocess.run([sys.executable, "-c", _CHILD, os.fspath(tmp_path / "ds"), os.fspath(tmp_path / "tok"),
                           start_method, str(num_proc), str(block_size)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_preprocess_num_proc_and_start_method_do_not_change_ids_and_a_new_process_reuses_the_cache(
        model, disk_dataset, tmp_path):
    model.save(tmp_path / "tok")
    one = _run_child(tmp_path, "fork", 1)
    again = _run_child(tmp_path, "fork", 1)  # a new process, the same inputs: the cache files, untouched
    assert again == one
    assert one["ids"] == tokenize_dataset(disk_dataset, model, block_size=16)["input_ids"][:]
    for method in ("fork", "spawn"):
        assert _run_child(tmp_path, method, 2, block_size=12)["ids"] == _run_child(tmp_path, "fork", 1, 12)["ids"]


@pytest.mark.parametrize("call, message", [
    (dict(text_column="body"), "no column 'body'; its columns are"),
    (dict(block_size=1), "block_size must be None or an int >= 2, got 1"),
    (dict(num_proc=0), "num_proc must be None or an int >= 1"),
])
def test_preprocess_refuses_bad_options(model, disk_dataset, call, message):
    with pytest.raises(ValueError, match=message):
        tokenize_dataset(disk_dataset, model, **call)


@pytest.mark.parametrize("values, row", [(["fine", "also fine", None, "x"], 2), ([1, 2, 3], 0), ([1.5], 0)])
def test_preprocess_names_the_row_that_is_not_text(model, values, row):
    dataset = datasets.Dataset.from_dict({"text": values})  # Arrow holds one type per column: None, or all numbers
    with pytest.raises(ValueError, match=rf"row {row} of column 'text' holds .*, not a str"):
        tokenize_dataset(dataset, model)


def test_preprocess_refuses_empty_data_and_missing_eos(model):
    with pytest.raises(ValueError, match="no rows"):
        tokenize_dataset(datasets.Dataset.from_dict({"text": []}), model)
    without_eos = BPEModel.bytes_only()
    with pytest.raises(ValueError, match="no eos_token"):
        tokenize_dataset(datasets.Dataset.from_dict({"text": ["a"]}), without_eos)
    assert tokenize_dataset(datasets.Dataset.from_dict({"text": ["a"]}), without_eos, add_eos=False)[
        "input_ids"][:] == [[97]]
    with pytest.raises(TypeError, match="datasets.Dataset or IterableDataset"):
        tokenize_dataset(["a"], model)


def test_preprocess_bin_memory_maps_back_to_the_ids(model, disk_dataset, tmp_path):
    out = save_tokenized(disk_dataset, model, tmp_path / "bin", format="bin", show_progress=False)
    ids, index = read_token_file(out)
    expected = _expected(model, _DOCS)
    assert ids.dtype == np.dtype("<u2") and index["dtype"] == "uint16"
    assert ids.tolist() == [i for doc in expected for i in doc]
    offsets = index["document_offsets"]
    assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == expected
    assert index["tokenizer"]["sha256"] and index["documents"] == len(_DOCS)
    wide = save_tokenized(disk_dataset, model, tmp_path / "wide", format="bin", dtype="uint32", show_progress=False)
    assert read_token_file(wide)[0].tolist() == ids.tolist()


def test_preprocess_bin_refuses_uint16_for_a_large_vocabulary(tmp_path):
    big = BPEModel({bytes([b]): b for b in range(256)}, [], special_tokens={"<eos>": 70_000},
                   roles={"eos_token": "<eos>"})
    dataset = datasets.Dataset.from_dict({"text": ["a"]})
    with pytest.raises(ValueError, match="beyond uint16"):
        save_tokenized(dataset, big, tmp_path / "out", format="bin", dtype="uint16")
    assert not (tmp_path / "out").exists()
    out = save_tokenized(dataset, big, tmp_path / "out", format="bin", show_progress=False)
    assert read_token_file(out)[0].tolist() == [97, 70_000]


def test_preprocess_interrupted_save_leaves_nothing(model, disk_dataset, tmp_path, monkeypatch):
    from hf_bpe.formats import token_file

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(token_file, "write_token_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_tokenized(disk_dataset, model, tmp_path / "bin", format="bin", show_progress=False)
    # No folder, no staging folder: at most the writers' lock file.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith("lock")) == ["ds"]


def test_preprocess_cli_writes_arrow_and_bin(model, tmp_path, capsys):
    model.save(tmp_path / "tok")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(_DOCS) + "\n", encoding="utf-8")
    assert main(["tokenize", "--model", str(tmp_path / "tok"), str(corpus), "--out", str(tmp_path / "a"),
                 "--block-size", "8", "--labels", "--quiet"]) == 0
    blocks = datasets.load_from_disk(os.fspath(tmp_path / "a"))
    lines = corpus.read_text(encoding="utf-8").split("\n")[:-1]  # datasets' text loader: one row per line
    stream = [i for ids in _expected(model, lines) for i in ids]
    assert [i for row in blocks["input_ids"][:] for i in row] == stream[:len(stream) // 8 * 8]
    assert main(["tokenize", "--model", str(tmp_path / "tok"), str(corpus), "--out", str(tmp_path / "b"),
                 "--format", "bin", "--quiet"]) == 0
    assert read_token_file(tmp_path / "b")[0].tolist() == stream
    capsys.readouterr()
    # Refusals: one line, exit 2, nothing written.
    for argv, message in [
        (["--out", str(tmp_path / "b"), "--format", "bin"], "already exists; pass --force"),
        (["--out", str(tmp_path / "c"), "--format", "bin", "--block-size", "8"], "--block-size applies to"),
        (["--out", str(tmp_path / "c"), "--format", "bin", "--dtype", "uint16", "--text-column", "x",
          "--dataset", str(tmp_path / "nope")], "give either FILE arguments or --dataset"),
        (["--out", str(tmp_path / "c"), "--block-size", "1"], "--block-size must be at least 2, got 1"),
    ]:
        assert main(["tokenize", "--model", str(tmp_path / "tok"), str(corpus), *argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error: ") and message in err and "Traceback" not in err
        assert not (tmp_path / "c").exists()


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.sampled_from(["", "", "ab é", "中 \n.", "hello world, said Ann."]), min_size=1, max_size=25),
       block_size=st.integers(2, 17), drop_last=st.booleans())
def test_preprocess_skip_empty_leaves_out_blank_documents_and_packs_the_rest_exactly(model, docs, block_size,
                                                                                    drop_last):
    # Issue 22: each blank line of wrapped prose became a document of EOS alone (EOS EOS pairs in every block).
    dataset = datasets.Dataset.from_dict({"text": docs})
    kept = [d for d in docs if d]
    assert tokenize_dataset(dataset, model, skip_empty=True, batch_size=4)["input_ids"][:] == _expected(model, kept)
    packed = tokenize_dataset(dataset, model, skip_empty=True, block_size=block_size, drop_last=drop_last,
                              batch_size=4)
    stream = [i for ids in _expected(model, kept) for i in ids]
    flat = [i for row in packed["input_ids"][:] for i in row]
    assert flat[:len(stream)] == stream[:len(flat)]
    assert len(flat) == (len(stream) // block_size + (not drop_last and len(stream) % block_size > 0)) * block_size
    eos = model.special_tokens["<|endoftext|>"]
    assert all((a, b) != (eos, eos) for a, b in zip(stream, stream[1:]))
    streaming = dataset.to_iterable_dataset(num_shards=min(2, len(docs)))
    streamed = tokenize_dataset(streaming, model, skip_empty=True, block_size=block_size, drop_last=drop_last)
    assert [row["input_ids"] for row in streamed] == packed["input_ids"][:]


def test_preprocess_eos_token_names_the_special_token_to_append(tmp_path):
    # Issue 22: a model trained with special_tokens=[...] but no eos_token role could not be tokenized with EOS.
    from hf_bpe.integrations.preprocess import with_eos_token

    no_role = hf_bpe.train(["hello world"] * 5, vocab_size=262, special_tokens=["<pad>", "<|endoftext|>"],
                           show_progress=False)
    dataset = datasets.Dataset.from_dict({"text": ["hello", ""]})
    with pytest.raises(ValueError, match="no eos_token; name one of its special tokens with eos_token="):
        tokenize_dataset(dataset, no_role)
    rows = tokenize_dataset(dataset, no_role, eos_token="<|endoftext|>")["input_ids"][:]
    assert rows == [no_role.encode_ordinary("hello") + [1], [1]]
    with pytest.raises(ValueError, match=r"eos_token 'x' is not a special token .* \['<pad>', '<\|endoftext\|>'\]"):
        tokenize_dataset(dataset, no_role, eos_token="x")
    with pytest.raises(TypeError, match="eos_token must be None or a str"):
        tokenize_dataset(dataset, no_role, eos_token=1)
    no_role.save(tmp_path / "tok")
    assert tokenize_dataset(dataset, HFBPETokenizer.from_pretrained(tmp_path / "tok"),
                            eos_token="<|endoftext|>")["input_ids"][:] == rows
    # The copy with the role is the same model (digest) that now says which token ends a document.
    with_role = with_eos_token(no_role, "<|endoftext|>")
    assert with_role.roles == {"eos_token": "<|endoftext|>"} and with_role.digest() == no_role.digest()
    assert tokenize_dataset(dataset, with_role)["input_ids"][:] == rows


def _ipc_bytes(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


@settings(deadline=None, derandomize=True, max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.sampled_from(_DOCS + ["\ud800 x", "\r\n\r\n", " " * 40]), max_size=40),
       eos=st.sampled_from([None, 256, 2**31 - 2]), labels=st.booleans())
def test_preprocess_map_table_is_byte_identical_to_lists_through_pa_array(model, docs, eos, labels):
    # Issue 23: the batched map builds input_ids from the compiled arrays (EOS added in C++); the Arrow table it
    # returns is the one pa.array over Python lists (EOS appended per row) made, down to the IPC bytes.
    import pyarrow as pa

    from hf_bpe.integrations.preprocess import _encode_batch

    got = _encode_batch({"text": docs}, list(range(len(docs))), model=model, column="text", eos_id=eos, masks=True,
                        labels=labels, streaming=False, skip_empty=False)
    rows = [ids + ([] if eos is None else [eos]) for ids in model.encode_ordinary_batch(docs)]
    ids = pa.array(rows, type=pa.list_(pa.int32()))
    columns = {"input_ids": ids, "attention_mask": pa.ListArray.from_arrays(
        ids.offsets, pa.array(np.ones(len(ids.values), dtype=np.int8)))}
    if labels:
        columns["labels"] = ids
    assert got.equals(pa.table(columns))
    assert _ipc_bytes(got) == _ipc_bytes(pa.table(columns))
