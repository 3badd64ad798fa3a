"""hf_bpe.spark on a local[2] Spark: counts, merges and token ids equal to one machine's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.errors import InputError
from hf_bpe.training.counts import WordCounts

pytestmark = pytest.mark.spark
pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'hf_bpe[spark]')")
if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
    pytest.skip("no Java runtime for Spark", allow_module_level=True)

from hf_bpe.spark import count_words_spark, spark_session, tokenize_spark  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2]")
    yield session
    session.stop()


def _slice(shared_data: Path, relative: str, size: int) -> str:
    text = (shared_data / "corpora" / relative).read_bytes()[:size].decode("utf-8", "ignore")
    return text[: text.rfind("\n") + 1]


def _small_files(tmp_path: Path) -> list[Path]:
    texts = ["hello world\nsecond line\r\nno newline at the end", "\n\nempty lines before\n", "", "中文 😀 l'été\n",
             "x" * 3000 + " tail", "only one line\n", "a\rb\nc"]
    paths = []
    for i, text in enumerate(texts * 3):
        path = tmp_path / f"part{i:02d}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _lines(text: str) -> list[str]:
    lines = text.split("\n")  # lines end at "\n" only; a final "\n" (or an empty file) adds no row
    return lines[:-1] if lines[-1] == "" else lines


def _same_as_one_machine(spark, paths, **options):
    ours = count_words_spark([str(p) for p in paths], spark=spark, **options)
    expected = WordCounts.from_corpus(paths, show_progress=False, **options)
    assert dict(ours) == dict(expected)
    assert (ours.documents, ours.total_bytes, ours.fingerprint) == (expected.documents, expected.total_bytes,
                                                                    dict(expected.fingerprint))
    return ours, expected


@pytest.mark.corpus
@pytest.mark.shared_data
@pytest.mark.parametrize("relative, options", [("en/english_combined.txt", {}),
                                               ("zh/zh_songci_simplified.txt", {"add_prefix_space": True})])
def test_spark_counts_and_merges_equal_one_machine(spark, shared_data, tmp_path, relative, options):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_slice(shared_data, relative, 1_500_000), encoding="utf-8")
    ours, expected = _same_as_one_machine(spark, [corpus], **options)
    a = hf_bpe.train_from_counts(ours, vocab_size=2000, show_progress=False).save(tmp_path / "a")
    b = hf_bpe.train_from_counts(expected, vocab_size=2000, show_progress=False).save(tmp_path / "b")
    for name in ("vocab.json", "merges.txt", "tokenizer.json", "hf_bpe_manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_spark_many_small_files_and_reruns(spark, tmp_path):
    paths = _small_files(tmp_path)
    first, _ = _same_as_one_machine(spark, paths)
    again = count_words_spark([str(p) for p in paths], spark=spark)
    assert list(again.items()) == list(first.items()) and again.fingerprint == first.fingerprint
    _same_as_one_machine(spark, paths, pattern="o200k", add_prefix_space=True)


@pytest.mark.corpus
def test_spark_dataframe_column_and_tokenize(spark, tmp_path):
    texts = ["hello world", "中文 😀", "", "l'été 2024, don't"] * 50
    frame = spark.createDataFrame([(t, i) for i, t in enumerate(texts)], ["text", "id"]).repartition(3)
    counts = count_words_spark(frame, spark=spark)
    assert dict(counts) == dict(WordCounts.from_corpus(texts, show_progress=False))
    model = hf_bpe.train(texts, vocab_size=300, show_progress=False)
    rows = tokenize_spark(frame, model).orderBy("id").collect()
    assert [row["input_ids"] for row in rows] == [model.encode_ordinary(t) for t in texts]
    assert [row["text"] for row in rows] == texts


@pytest.mark.corpus
def test_spark_local_workers_run_this_interpreter(spark):
    # Not the first python3 on PATH: a venv used without activating it must still find hf_bpe in the workers.
    expected = os.environ.get("PYSPARK_PYTHON") or sys.executable
    assert spark.sparkContext.pythonExec == expected
    assert os.environ.get("PYSPARK_PYTHON") in (None, expected)  # not left behind for a later session on a cluster


@pytest.mark.corpus
def test_spark_bad_input_names_the_column(spark, tmp_path):
    frame = spark.createDataFrame([("fine",), (None,)], "text string")
    with pytest.raises(InputError, match=r"column 'text' holds NoneType None \(partition \d+, row \d+\), not a string"):
        count_words_spark(frame, spark=spark)
    model = hf_bpe.BPEModel.bytes_only()
    with pytest.raises(Exception, match=r"column 'text' holds NoneType None \(partition \d+, row \d+\), not a string"):
        tokenize_spark(frame.coalesce(1), model).collect()
    with pytest.raises(InputError, match="no column 'body'"):
        count_words_spark(frame, spark=spark, text_column="body")
    with pytest.raises(InputError, match="does not exist"):
        count_words_spark([str(tmp_path / "missing.txt")], spark=spark)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match="holds no text"):
        count_words_spark([str(empty)], spark=spark)


@pytest.mark.corpus
def test_spark_cli_train_gives_the_same_folder(spark, tmp_path, capsys):
    paths = [str(p) for p in _small_files(tmp_path)]
    assert main(["train", *paths, "--vocab-size", "300", "--out", str(tmp_path / "one"), "--quiet"]) == 0
    assert main(["train", *paths, "--vocab-size", "300", "--out", str(tmp_path / "spark"), "--quiet",
                 "--spark", "local[2]"]) == 0
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "spark" / name).read_bytes(), name


@pytest.mark.corpus
def test_spark_cli_tokenize_writes_parquet_rows_equal_to_one_machine(spark, tmp_path, capsys):
    import pyarrow.parquet as pq

    paths = [str(p) for p in _small_files(tmp_path)]
    folder = tmp_path / "tok"
    assert main(["train", *paths, "--vocab-size", "300", "--out", str(folder), "--quiet",
                 "--eos-token", "<|endoftext|>"]) == 0
    model = hf_bpe.BPEModel.load(folder)
    out = tmp_path / "ids"
    argv = ["tokenize", "--model", str(folder), *paths, "--out", str(out), "--spark", "local[2]"]
    assert main(argv) == 0
    rows = pq.read_table(out).column("input_ids").to_pylist()
    eos = model.special_tokens["<|endoftext|>"]
    lines = [line for p in paths for line in _lines(Path(p).read_bytes().decode())]
    assert sorted(rows) == sorted(model.encode_ordinary(line) + [eos] for line in lines)
    assert not list(tmp_path.glob("*.tmp"))
    assert main(argv) == 2 and "already exists" in capsys.readouterr().err  # kept, not overwritten
    assert main([*argv, "--force", "--no-eos"]) == 0
    assert sorted(pq.read_table(out).column("input_ids").to_pylist()) == sorted(model.encode_ordinary(x) for x in lines)
    assert main([*argv, "--force", "--block-size", "8"]) == 2
    assert "--block-size cannot be used with --spark" in capsys.readouterr().err


def test_spark_import_hf_bpe_does_not_import_pyspark():
    code = "import sys, hf_bpe; hf_bpe.train; assert 'pyspark' not in sys.modules, 'pyspark imported'"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
