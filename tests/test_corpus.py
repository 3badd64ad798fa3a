"""Corpus sources stream texts with tokenizers' line semantics and fail clearly on bad input."""

from __future__ import annotations

import tracemalloc

import pytest

from hf_bpe.training.corpus import default_corpus_files, iter_batches, iter_texts


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
