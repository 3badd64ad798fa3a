"""Corpus sources stream texts with tokenizers' line semantics and fail clearly on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from hf_bpe.training.corpus import default_corpus_files, iter_batches, iter_texts

ROOT = Path(__file__).resolve().parents[1]


def test_corpus_files_keep_newlines_and_split_only_on_lf(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes("one\r\ntwo\u0085three\n\nlast".encode())
    assert list(iter_texts(path)) == ["one\r\n", "two\u0085three\n", "\n", "last"]
    other = tmp_path / "b.txt"
    other.write_bytes(b"x\n")
    assert list(iter_texts([path, other]))[-1] == "x\n"


def test_corpus_datasets_regular_and_streaming():
    import datasets

    ds = datasets.Dataset.from_dict({"text": ["a", "b", "c"], "n": [1, 2, 3]})
    assert list(iter_texts(ds)) == ["a", "b", "c"]
    assert list(iter_texts(ds.to_iterable_dataset())) == ["a", "b", "c"]
    renamed = ds.rename_column("text", "body")
    assert list(iter_texts(renamed, text_column="body")) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("corpus", "error", "match"),
    [
        ("a str", TypeError, "single str"),
        (b"bytes", TypeError, "single bytes"),
        (42, TypeError, "got int"),
        ([1, 2], TypeError, "item 0 is int"),
        ({"train": []}, TypeError, "pick one split"),
    ],
)
def test_corpus_rejects_non_corpora(corpus, error, match):
    with pytest.raises(error, match=match):
        list(iter_texts(corpus))


def test_corpus_rejects_bad_dataset_rows():
    import datasets

    with pytest.raises(TypeError, match="row 1 of column 'text'"):
        list(iter_texts(datasets.Dataset.from_dict({"text": ["a", None]})))
    with pytest.raises(TypeError, match="DatasetDict"):
        list(iter_texts(datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["a"]})})))


def test_corpus_streams_files_in_constant_memory(tmp_path):
    path = tmp_path / "big.txt"
    line = "x" * 1000 + "\n"
    path.write_text(line * 20000, encoding="utf-8")  # 20 MB
    tracemalloc.start()
    total = sum(len(t) for t in iter_texts(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert total == 20000 * len(line)
    assert peak < 1_000_000, f"reading a 20 MB file peaked at {peak} bytes"


def test_corpus_batches_cover_every_text_once():
    texts = [str(i) * (i % 7) for i in range(1000)]
    batches = list(iter_batches(texts, batch_chars=100))
    assert [t for b in batches for t in b] == texts
    assert all(sum(map(len, b)) >= 100 for b in batches[:-1])


def test_corpus_default_is_the_standard_library():
    files = default_corpus_files()
    assert len(files) > 100
    assert all(f.suffix == ".py" and "test" not in f.parts for f in files)
    assert files == sorted(files)


def test_corpus_warns_when_texts_are_file_names(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("hello\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="pass pathlib.Path"):
        assert list(iter_texts([str(path)])) == [str(path)]


def test_corpus_long_lines_are_read_in_fragments_that_count_like_whole_lines(tmp_path, monkeypatch):
    # Issue 13: a line without newlines was held whole (200 MB -> 1.0 GB peak). Read in parts cut where every
    # named pattern ends a piece, it gives the same pieces, counts, document count and fingerprint.
    import hf_bpe.training.counts as counts_module
    from hf_bpe.core.fragment import Fragment
    from hf_bpe.training.counts import WordCounts

    rng = __import__("random").Random(5)
    words = ["the", "café", "中文字", "😀😀", "x1", "42", "don't", "!!", "  ", "\t", "Ωmega", "a"]
    long_line = " ".join(rng.choice(words) for _ in range(3000))
    lines = ["short one\n", long_line + "\n", "\n", long_line, ]
    path = tmp_path / "c.txt"
    path.write_text("".join(lines), encoding="utf-8")
    parts = list(iter_texts(path, max_line_bytes=97))
    assert any(type(p) is Fragment for p in parts) and max(len(p.encode()) for p in parts) < 200
    rebuilt, current = [], ""
    for part in parts:
        current += part
        if type(part) is not Fragment or part.end:
            rebuilt.append(current)
            current = ""
    assert rebuilt == lines
    monkeypatch.setattr(counts_module, "_FRAGMENT_BYTES", 97)
    for pattern in ("gpt2", "o200k"):
        for order in ("sequence", "multiset"):
            for workers in (1, 2):
                from_file = WordCounts.from_corpus(path, pattern=pattern, corpus_order=order, workers=workers,
                                                   show_progress=False)
                in_memory = WordCounts.from_corpus(lines, pattern=pattern, corpus_order=order, show_progress=False)
                assert dict(from_file.items()) == dict(in_memory.items())
                assert from_file.fingerprint == in_memory.fingerprint
                assert from_file.documents == 4


def test_corpus_long_line_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\n" + b"abc " * 100 + b"\xff" + b" tail" * 50 + b"\n")
    with pytest.raises(ValueError, match=r"line 2 is not UTF-8 .* at byte 400"):
        list(iter_texts(path, max_line_bytes=64))


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc/self/status (VmHWM)")
def test_corpus_one_huge_line_trains_in_the_memory_of_many_lines(tmp_path):
    # Issue 13 acceptance: a 200 MB single-line file peaks within 2x of the same text split into lines.
    block = "".join(f"word{i % 977} café {i} 中文, x'{i % 7} ok!  " for i in range(40000))
    with_lines = tmp_path / "lines.txt"
    one_line = tmp_path / "one.txt"
    with open(with_lines, "w", encoding="utf-8") as lines_file, open(one_line, "w", encoding="utf-8") as one_file:
        while lines_file.tell() < 200_000_000:
            lines_file.write(block.replace("!  ", "!\n"))
            one_file.write(block)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from hf_bpe import train\n"
        "train([Path(sys.argv[1])], vocab_size=400, workers=1, show_progress=False)\n"
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) / 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    peaks = []
    for path in (with_lines, one_line):
        done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                              timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        peaks.append(float(done.stdout.split()[-1]))
    assert peaks[1] <= 2 * peaks[0], peaks


def test_corpus_line_blocks_count_like_the_lines_in_every_order(tmp_path, monkeypatch):
    # Issue 10: files reach the counter as 4 MB blocks of lines (no str per line). Blocks, over-long lines read
    # in parts, and an undecodable block's line-by-line path must count, order and fingerprint like the lines.
    import hf_bpe.training.corpus as corpus_module
    import hf_bpe.training.counts as counts_module
    from hf_bpe.training.corpus import LineBlock
    from hf_bpe.training.counts import WordCounts

    rng = __import__("random").Random(7)
    words = ["the", "café", "中文字", "😀", "x1", "42", "don't", "!!", "  ", "\t", "Ωmega", "ÿ", "a"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))) + "\n" for _ in range(3000)]
    lines[1500] = " ".join(rng.choice(words) for _ in range(400)) + "\n"  # over the long-line limit below
    lines[-1] = lines[-1].rstrip("\n")  # the last line has no newline
    path = tmp_path / "blocks.txt"
    path.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(corpus_module, "_LINE_BLOCK", 4096)
    monkeypatch.setattr(counts_module, "_FRAGMENT_BYTES", 1024)
    items = list(iter_texts(path, max_line_bytes=1024, line_blocks=True))
    assert {type(item).__name__ for item in items} >= {"LineBlock", "Fragment"}
    text = "".join(item.text if type(item) is LineBlock else item for item in items)
    assert text == "".join(lines)
    assert all(item.raw == item.text.encode() and item.lines == item.text.count("\n")
               for item in items if type(item) is LineBlock)
    for pattern in ("gpt2", "llama3"):
        for order in ("sequence", "multiset"):
            in_memory = WordCounts.from_corpus(lines, pattern=pattern, corpus_order=order, show_progress=False)
            for workers in (1, 2):
                from_file = WordCounts.from_corpus(path, pattern=pattern, corpus_order=order, workers=workers,
                                                   show_progress=False)
                assert list(from_file.items()) == list(in_memory.items())
                assert from_file.fingerprint == in_memory.fingerprint
                assert from_file.documents == len(lines)


def test_corpus_line_blocks_name_an_undecodable_line(tmp_path, monkeypatch):
    import hf_bpe.training.corpus as corpus_module

    monkeypatch.setattr(corpus_module, "_LINE_BLOCK", 64)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok line\n" * 30 + b"bad \xff here\n" + b"after\n")
    with pytest.raises(ValueError, match=r"line 31 is not UTF-8"):
        list(iter_texts(path, line_blocks=True))
