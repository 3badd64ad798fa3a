"""Corpus sources stream texts with tokenizers' line semantics and fail clearly on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core.patterns import PATTERNS
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


# Byte sequences at the edges of strict UTF-8 (Python's decoder, errors="strict"): valid first and last forms,
# overlongs, surrogates, code points above U+10FFFF, stray continuation bytes and bytes never used.
_UTF8_EDGES = [
    b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf",  # valid
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",  # overlong
    b"\xed\xa0\x80", b"\xed\xbf\xbf",  # surrogates
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf", b"\xf8\x88\x80\x80\x80", b"\xff", b"\xfe",  # too big
    b"\x80", b"\xbf", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3",  # stray continuation, cut short
]


@st.composite
def _utf8_with_one_mutation(draw: st.DrawFn) -> bytes:
    """Valid UTF-8 (after 0-17 ASCII bytes: the check's 8-byte steps) with one edge sequence put in, put over
    a byte, or its head cut short at the end (as a block read in the middle of a character ends)."""
    raw = b"x" * draw(st.integers(0, 17)) + draw(st.text(max_size=24)).encode()
    edge = draw(st.sampled_from(_UTF8_EDGES))
    at = draw(st.integers(0, len(raw)))
    how = draw(st.sampled_from(["insert", "overwrite", "cut at the end"]))
    if how == "insert":
        return raw[:at] + edge + raw[at:]
    if how == "overwrite":
        return raw[:at] + edge + raw[at + len(edge):]
    return raw + edge[:draw(st.integers(1, len(edge)))]


@settings(deadline=None, derandomize=True, max_examples=600)
@given(st.one_of(st.binary(max_size=40), _utf8_with_one_mutation()))
def test_corpus_utf8_check_accepts_exactly_what_the_strict_decoder_accepts(data: bytes) -> None:
    # Issue 23: a file's block is checked (compiled: Utf8Block), not decoded; the counters then read its bytes as
    # valid UTF-8, and a refused block goes to the line path that names the bad line. Both must agree with decode.
    from hf_bpe.core._tally import Utf8Block

    try:
        expected = len(data.decode("utf-8"))
    except UnicodeDecodeError:
        expected = None
    try:
        got = Utf8Block(data).characters
    except UnicodeDecodeError:
        got = None
    assert got == expected


_LINE_CHARS = list("abcXYZ019 ,.'!-_") + ["  ", "\t", "\r", "\r\n", "é", "ß", "ÿ", "Ω", "中", "文", "字", "😀", "🇫🇷",
                                           "\u00a0", "\u3000", "١٢", "n't", "'s"]


@settings(deadline=None, derandomize=True, max_examples=40)
@given(st.lists(st.lists(st.sampled_from(_LINE_CHARS), max_size=30).map("".join), min_size=1, max_size=60),
       st.booleans(), st.integers(16, 300))
def test_corpus_file_blocks_count_as_bytes_like_the_decoded_lines(
        tmp_path_factory, lines: list[str], final_newline: bool, block: int) -> None:
    # Issue 23: blocks of a file are counted from their bytes (ASCII lines as ASCII, the others as UTF-8 in place,
    # no str made): counts in first-seen order, documents and characters equal those of the decoded lines as str,
    # for every named pattern, on one thread and on two (the threshold for threads lowered so small blocks split).
    import hf_bpe.core._tally as tally_module
    import hf_bpe.training.corpus as corpus_module
    from hf_bpe.core.pretokenize import Pretokenizer
    from hf_bpe.training.counts import count_words

    text = "\n".join(lines) + ("\n" if final_newline else "")
    path = tmp_path_factory.mktemp("blocks") / "lines.txt"
    path.write_bytes(text.encode())
    as_read = [part + "\n" for part in text.split("\n")]  # the file's lines, each ending after its "\n"
    as_read[-1] = as_read[-1][:-1]
    as_read = as_read if as_read[-1] else as_read[:-1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(corpus_module, "_LINE_BLOCK", block)
        patch.setattr(corpus_module, "_MIN_LINE_BLOCK", block)
        patch.setattr(tally_module, "_THREAD_MIN_CHARS", 1)
        for name in sorted(PATTERNS):
            pretokenizer = Pretokenizer(name)
            expected = count_words(as_read, pretokenizer)
            for workers in (1, 2):
                got = count_words(iter_texts(path, line_blocks=True), pretokenizer, workers=workers,
                                  line_blocks=True)
                assert list(got[0].items()) == list(expected[0].items())
                assert got[1:] == expected[1:] == (len(as_read), len(text))


def test_corpus_bad_byte_in_a_large_block_names_its_file_and_line(tmp_path):
    # A block the UTF-8 check refuses is read again line by line: the error names the file and the line as the
    # decoder's path did (reason and byte offset in the line), here in the middle of a block of ~260 KB.
    rng = __import__("random").Random(23)
    words = ["plain", "café", "中文", "😀", "x", "Ωmega", " "]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 20))).encode() + b"\n" for _ in range(12_000)]
    lines[7500] = b"an overlong \xc0\xaf slash\n"
    path = tmp_path / "bad.txt"
    path.write_bytes(b"".join(lines))
    assert 1 << 18 < sum(map(len, lines[:7500])) < 1 << 19  # in the middle of the second block of 256 KiB
    expected = (f"{os.fspath(path)!r} line 7501 is not UTF-8 (invalid start byte at byte 12); "
                "convert the file to UTF-8 (e.g. iconv -t utf-8)")
    with pytest.raises(ValueError) as caught:
        list(iter_texts(path, line_blocks=True))
    assert str(caught.value) == expected
    with pytest.raises(ValueError) as again:
        list(iter_texts(path))  # the decoding path (no blocks) says the same
    assert str(again.value) == expected


@pytest.mark.parametrize("entry", ["train", "train_sentencepiece", "train_unigram"])
def test_corpus_missing_file_is_refused_before_any_progress_bar(tmp_path, capfd, entry):
    # Issue 33.12, through the Python API as through the CLI: the error comes before the first bar is drawn.
    import hf_bpe

    good = tmp_path / "good.txt"
    good.write_text("hello world\n" * 10, encoding="utf-8")
    missing = tmp_path / "missing.txt"
    with pytest.raises(FileNotFoundError, match=r"corpus file '.*missing\.txt' does not exist"):
        getattr(hf_bpe, entry)([good, missing], vocab_size=300, show_progress=True)
    assert capfd.readouterr().err == ""
