"""Files straight to tokens (issue 23 point 4): ``tokenize_files`` / ``hf-bpe tokenize FILE... --format bin``.

Its token folders must equal the batch API (``encode_ordinary_batch`` + EOS) document for document, and the
datasets path (``save_tokenized`` over ``load_text_files``) byte for byte in ids and offsets, whatever the windows
(forced tiny so that short files cross many cuts), the threads and the pattern.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.formats.token_file import OFFSETS_NAME, read_token_file
from hf_bpe.integrations.file_tokenize import tokenize_files
from hf_bpe.integrations.preprocess import save_tokenized
from hf_bpe.model.bpe import BPEModel
from hf_bpe.training.corpus import load_text_files

EOT = "<|endoftext|>"
NAMES = sorted(PATTERNS)
# Separators, line ends of every kind, and text where the patterns branch (every PEP 393 kind, contractions,
# digits, whitespace runs): the files hypothesis builds are sequences of these.
FRAGMENTS = ("\n", "\n", "\r\n", "\r", EOT, "<|endof", "hello", " world", "  ", "\t", "'s", " it's", "12345",
             "naïve", " café", "中文", " 😀", "e\u0301", "Ελληνικά", "!!", "x" * 20, " " * 9, "")
file_text = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
_TRAINING = ["hello world it's 12345 naïve café 中文 😀 Ελληνικά\r\n", "x" * 30 + " hello  world", "'s 7"] * 40
_MODELS: dict[tuple[str, bool], BPEModel] = {}


def _model(name: str = "gpt2", prefix: bool = False) -> BPEModel:
    if (name, prefix) not in _MODELS:
        _MODELS[name, prefix] = hf_bpe.train(_TRAINING, vocab_size=300, pattern=name, add_prefix_space=prefix,
                                             special_tokens=[EOT], eos_token=EOT, show_progress=False)
    return _MODELS[name, prefix]


def _documents(texts: list[str], separator: str) -> list[str]:
    """The documents of each file's text, as documented: text between separators, no empty last one."""
    documents = []
    for text in texts:
        parts = text.split(separator)
        if parts[-1] == "":
            parts.pop()
        documents += parts
    return documents


def _expected(model: BPEModel, documents: list[str], *, eos: bool = True, skip_empty: bool = False) -> list[list[int]]:
    kept = [d for d in documents if d or not skip_empty]
    lists = model.encode_ordinary_batch(kept)
    return [ids + [model.special_tokens[EOT]] if eos else ids for ids in lists]


def _read(folder) -> list[list[int]]:
    ids, index = read_token_file(folder)
    offsets = index["document_offsets"]
    assert offsets[0] == 0 and offsets[-1] == len(ids) == index["tokens"] and len(offsets) == index["documents"] + 1
    return [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40)
@given(texts=st.lists(file_text, min_size=1, max_size=3), separator=st.sampled_from(["\n", EOT, "\r\n"]),
       window=st.integers(1, 40), threads=st.sampled_from([1, 2]), eos=st.booleans(), skip_empty=st.booleans())
def test_file_tokenize_text_equals_the_batch_api(tmp_path_factory, name, texts, separator, window, threads, eos,
                                                 skip_empty):
    model = _model(name)
    folder = tmp_path_factory.mktemp("case")
    paths = []
    for k, text in enumerate(texts):
        paths.append(folder / f"{k}.txt")
        paths[-1].write_bytes(text.encode("utf-8"))
    documents = _documents(texts, separator)
    if not documents:
        with pytest.raises(ValueError, match="no documents"):
            tokenize_files(paths, model, folder / "out", separator=separator, _window_bytes=window)
        assert not (folder / "out").exists()
        return
    out = tokenize_files(paths, model, folder / "out", separator=separator, add_eos=eos, skip_empty=skip_empty,
                         num_threads=threads, _window_bytes=window)
    assert _read(out) == _expected(model, documents, eos=eos, skip_empty=skip_empty)


@pytest.mark.parametrize("prefix, pattern", [(True, "gpt2"), (False, r"\w+|\s+|[^\w\s]+")])
def test_file_tokenize_prefix_space_and_custom_regex_take_the_lists_path_with_the_same_documents(tmp_path, prefix,
                                                                                                  pattern):
    if prefix:
        model = _model("gpt2", prefix=True)
    else:
        model = hf_bpe.train(_TRAINING, vocab_size=290, pattern=pattern, special_tokens=[EOT], eos_token=EOT,
                             show_progress=False)
    text = "hello world\r\n\n it's 中文\n😀 x\nend"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    for window in (3, 1 << 20):
        out = tokenize_files([tmp_path / "a.txt"], model, tmp_path / f"out{window}", _window_bytes=window)
        assert _read(out) == _expected(model, text.split("\n"))


@pytest.mark.parametrize("name", NAMES)
def test_file_tokenize_threads_on_a_large_file_equal_one_thread_and_the_batch_api(tmp_path, name):
    # Windows of >= 64K characters, so that 2 threads encode them (smaller batches run on one).
    model = _model(name)
    lines = [(f"line {i}: naïve café 中文 😀" if i % 3 == 0 else f"line {i}: plain ASCII,") + f" it's {i * 7919}"
             + " x" * (i % 13) for i in range(8_000)]  # ASCII lines are encoded from the mapped bytes
    lines[100] = ""
    lines[3000] = "y" * 170_000  # longer than the window: the window grows
    text = "\n".join(lines) + "\n"
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    expected = _expected(model, lines)
    for threads in (1, 2):
        out = tokenize_files([tmp_path / "big.txt"], model, tmp_path / f"t{threads}", num_threads=threads,
                             _window_bytes=100_000)
        assert _read(out) == expected


@pytest.mark.parametrize("skip_empty, eos", [(False, True), (True, False)])
def test_file_tokenize_equals_the_datasets_path_file_for_file(tmp_path, skip_empty, eos):
    model = _model("gpt2")
    (tmp_path / "a.txt").write_bytes("first\r\n\n\nnaïve café 中文\n  spaced  \n😀".encode())
    (tmp_path / "b.txt").write_bytes(b"\nsecond file\n")
    (tmp_path / "c.txt").write_bytes(b"")
    paths = [tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"]
    old = save_tokenized(load_text_files(paths), model, tmp_path / "old", format="bin", show_progress=False,
                         add_eos=eos, skip_empty=skip_empty)
    new = tokenize_files(paths, model, tmp_path / "new", add_eos=eos, skip_empty=skip_empty, _window_bytes=7)
    for name in ("tokens.bin", OFFSETS_NAME):
        assert (old / name).read_bytes() == (new / name).read_bytes()
    assert json.loads((old / "tokens.json").read_text()) == json.loads((new / "tokens.json").read_text())


def test_file_tokenize_reads_jsonl_and_parquet_by_column(tmp_path):
    model = _model("gpt2")
    rows = ["hello world", "", "naïve 中文\nsecond line", "😀 it's"]
    with open(tmp_path / "a.jsonl", "w", encoding="utf-8") as handle:
        for k, row in enumerate(rows):
            handle.write(json.dumps({"id": k, "body": row}) + "\n" + ("\n" if k == 1 else ""))  # a blank line
    pq.write_table(pa.table({"body": rows, "n": list(range(4))}), tmp_path / "b.parquet", row_group_size=2)
    (tmp_path / "c.txt").write_text("plain\ntext", encoding="utf-8")
    paths = [tmp_path / "a.jsonl", tmp_path / "b.parquet", tmp_path / "c.txt"]
    out = tokenize_files(paths, model, tmp_path / "out", text_column="body", skip_empty=True, _window_bytes=8)
    assert _read(out) == _expected(model, rows + rows + ["plain", "text"], skip_empty=True)


@pytest.mark.parametrize("name, content, message", [
    ("a.jsonl", '{"text": "ok"}\nnot json\n', r"line 2 is not a JSON value"),
    ("a.jsonl", '{"body": "ok"}\n', r"line 1 has no field 'text'"),
    ("a.jsonl", '{"text": 3}\n', r"line 1: field 'text' holds int 3, not a str"),
    ("a.parquet", {"body": ["x"]}, r"has no column 'text'; its columns are \['body'\]"),
    ("a.parquet", {"text": [1]}, r"column 'text' holds int64, not strings"),
    ("a.parquet", {"text": ["x", None]}, r"row 1 of column 'text' is null"),
])
def test_file_tokenize_refuses_bad_rows_naming_file_and_row(tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, dict):
        pq.write_table(pa.table(content), path)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        tokenize_files([path], _model(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_file_tokenize_deeply_nested_jsonl_line_is_one_error_line(tmp_path, capsys):
    # Issue 33.5: a hostile .jsonl line nested past Python's recursion limit was a RecursionError traceback.
    _model().save(tmp_path / "tok")
    path = tmp_path / "deep.jsonl"
    path.write_text('{"text": "fine"}\n{"text": ' + "[" * 200_000 + "]" * 200_000 + "}\n", encoding="utf-8")
    argv = ["tokenize", "--model", str(tmp_path / "tok"), str(path), "--format", "bin", "--out",
            str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"hf-bpe: error: {str(path)!r} line 2 nests arrays or objects "
                                                    "deeper than Python's JSON parser allows")
    assert not (tmp_path / "out").exists()


# Byte sequences at the edges of UTF-8's rules: valid (first and last of each length, around the surrogates) and not
# (overlong, surrogate, above U+10FFFF, stray continuation, cut short).
_UTF8_EDGES = (b"a", b" b", b"\n", b"12345678", b"\xc3\xa9", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf",
               b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xe4\xb8\xad",
               b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x8f\xbf\xbf",
               b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(raw=st.lists(st.sampled_from(_UTF8_EDGES), max_size=10).map(b"".join))
def test_file_tokenize_documents_that_are_utf8_are_read_in_place_and_the_others_raise(raw):
    # Valid documents are scanned as UTF-8 where they lie (csrc/file_encode.hpp's document_form): their ids are the
    # batch API's; a document Python would not decode raises as decoding it raises (its start in `raw`).
    model = _model("gpt4")
    pre = model._pretokenizer
    try:
        documents = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        with pytest.raises(UnicodeDecodeError) as info:
            pre.encode_documents(raw, b"\n", model._encoder)
        assert info.value.start == exc.start
        return
    if documents[-1] == "":
        documents.pop()
    ids, offsets = pre.encode_documents(raw, b"\n", model._encoder, threads=2)
    flat, starts = np.frombuffer(ids, dtype=np.int32).tolist(), np.frombuffer(offsets, dtype=np.int64).tolist()
    assert [flat[a:b] for a, b in zip(starts, starts[1:])] == model.encode_ordinary_batch(documents)


def test_file_tokenize_invalid_utf8_names_the_file_byte_and_line_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good line\nsecond\nab\xffcd\n" + b"more\n" * 10)
    for window in (4, 1 << 20):  # in a later window: the offset is the file's
        with pytest.raises(ValueError, match=r"bad.txt' line 3 is not UTF-8 \(invalid start byte at byte 19 "):
            tokenize_files([path], _model(), tmp_path / "out", _window_bytes=window)
    assert not (tmp_path / "out").exists()
    for content, where in [(b"ok\n\xe2\x82", 3), (b"a\nb\xed\xa0\x80\n", 3), (b"\xc3\n", 0)]:  # cut, surrogate
        path.write_bytes(content)
        with pytest.raises(ValueError, match=rf"is not UTF-8 \(.* at byte {where} of the file\)"):
            tokenize_files([path], _model(), tmp_path / "out", _window_bytes=2)
    with pytest.raises(FileNotFoundError, match="missing.txt' is not a file"):
        tokenize_files([tmp_path / "missing.txt"], _model(), tmp_path / "out")
    with pytest.raises(ValueError, match="separator must be a non-empty str"):
        tokenize_files([path], _model(), tmp_path / "out", separator="")


def test_file_tokenize_cli(tmp_path, capsys):
    model = _model("gpt2")
    model.save(tmp_path / "tok")
    text = f"doc one\nstill one{EOT}doc two{EOT}{EOT}naïve{EOT}"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    base = ["tokenize", "--model", str(tmp_path / "tok"), str(tmp_path / "a.txt"), "--format", "bin", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "o"), "--separator", EOT, "--eos-token", EOT]) == 0
    assert _read(tmp_path / "o") == _expected(model, ["doc one\nstill one", "doc two", "", "naïve"])
    assert main([*base, "--out", str(tmp_path / "o"), "--no-eos", "--skip-empty", "--dtype", "uint32",
                 "--force"]) == 0
    ids, index = read_token_file(tmp_path / "o")
    assert index["dtype"] == "uint32" and _read(tmp_path / "o") == _expected(model, text.split("\n"), eos=False)
    (tmp_path / "r.jsonl").write_text('{"body": "x y"}\n{"body": ""}\n', encoding="utf-8")
    assert main(["tokenize", "--model", str(tmp_path / "tok"), str(tmp_path / "r.jsonl"), "--format", "bin",
                 "--text-column", "body", "--out", str(tmp_path / "j"), "--quiet"]) == 0
    assert _read(tmp_path / "j") == _expected(model, ["x y", ""])
    capsys.readouterr()
    for argv, message in [
        ([*base, "--out", str(tmp_path / "o")], "already exists; pass --force"),
        ([*base[:-3], "--out", str(tmp_path / "c"), "--separator", EOT], "--separator splits the FILEs of --format"),
        (["tokenize", "--model", str(tmp_path / "tok"), str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "c")],
         "is read by its column with --format bin only"),
        ([*base, "--out", str(tmp_path / "c"), "--separator", ""], "--separator is empty"),
        ([*base, "--out", str(tmp_path / "c"), "--num-proc", "2"], "--num-proc 2 sets datasets.map's processes"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error: ") and message in err and "Traceback" not in err
        assert not (tmp_path / "c").exists()


# Issue 33.2: a file that changes while it is read (log rotation, "> file", rsync --inplace) was memory-mapped, and a
# shrunk one killed the process with SIGBUS. The change is made deterministically between two windows: in the
# writer's append of the first window, before the reader reads the next (in a child process, so that the SIGBUS of
# a reader that maps the file fails this test instead of killing the run).
_CHANGE_BETWEEN_WINDOWS = """
import os, sys
from hf_bpe.cli import main
from hf_bpe.formats import token_file
from hf_bpe.integrations import file_tokenize

path, out, model, how = sys.argv[1:5]
file_tokenize.tokenize_files.__kwdefaults__["_window_bytes"] = 64
real = token_file.TokenFileWriter.append

def append(self, ids, offsets):
    real(self, ids, offsets)
    if not getattr(append, "done", False):
        append.done = True
        if how == "shrink":
            os.truncate(path, 1000)
        elif how == "grow":
            with open(path, "ab") as handle:
                handle.write(b"one more line\\n")
        else:  # rewritten in place, same size: only its modification time tells
            stat = os.stat(path)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

token_file.TokenFileWriter.append = append
sys.exit(main(["tokenize", "--model", model, path, "--out", out, "--format", "bin", "--quiet"]))
"""


@pytest.mark.parametrize(("how", "message"), [("shrink", "it ended at byte 1000 of the 120000"),
                                              ("grow", "it grew past the 120000 bytes"),
                                              ("touch", "its size or modification time changed")])
def test_file_tokenize_a_file_changed_while_read_is_one_error_line_and_no_output(tmp_path, how, message):
    import subprocess
    import sys

    _model().save(tmp_path / "tok")
    path = tmp_path / "growing.log"
    path.write_bytes(b"hello world 12345\n" * 6000 + b"x" * 12000)  # 120,000 bytes: many 64-byte windows
    here = os.path.dirname(os.path.dirname(hf_bpe.__file__))  # this tree's hf_bpe, not an installed one
    run = subprocess.run([sys.executable, "-c", _CHANGE_BETWEEN_WINDOWS, str(path), str(tmp_path / "out"),
                          str(tmp_path / "tok"), how], capture_output=True, text=True, cwd=here)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hf-bpe: error: "), run.stderr[-2000:]
    assert f"{str(path)!r} changed while it was being read ({message}" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["growing.log", "tok"]  # nothing half-written left


def test_token_file_version_1_folders_stay_readable_and_damaged_offsets_are_refused(tmp_path):
    folder = tmp_path / "v1"
    folder.mkdir()
    np.array([5, 6, 7], dtype="<u2").tofile(folder / "tokens.bin")
    (folder / "tokens.json").write_text(json.dumps({"format": "hf_bpe-tokens", "version": 1, "dtype": "uint16",
                                                    "tokens": 3, "documents": 2, "document_offsets": [0, 2, 3],
                                                    "tokenizer": {}}))
    assert _read(folder) == [[5, 6], [7]]
    (tmp_path / "a.txt").write_text("ab\nc\n", encoding="utf-8")
    out = tokenize_files([tmp_path / "a.txt"], _model(), tmp_path / "v2")
    with open(out / OFFSETS_NAME, "r+b") as handle:
        handle.truncate(os.path.getsize(out / OFFSETS_NAME) - 8)
    with pytest.raises(ValueError, match="offsets.bin' has 16 bytes but its index says 2 documents"):
        read_token_file(out)
