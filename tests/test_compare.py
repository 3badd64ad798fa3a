"""Cross-validation reports: held-out split, merge comparison (the 32-bit overflow), compare() and its CLI."""

from __future__ import annotations

import importlib
import json
import random
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _core
from hf_bpe.tools.compare import (
    REPORT_SCHEMA_VERSION,
    compare,
    compare_merges,
    is_heldout,
    render_chart,
    render_markdown,
    summary,
)

from hf_bpe.cli import main
from hf_bpe.tools.compare.merges import pair_counts_after


def cli_compare(argv: list[str]) -> int:
    return main(["compare", *argv])


SYLLABLES = "ka to ri mu sen da lo ve qui ber ston ing er ly ment pre con tra ex al".split()


def _text_lines(seed: int, n: int) -> list[str]:
    """Pseudo-English: a Zipf-like vocabulary of words made of syllables, some punctuation and non-ASCII."""
    rnd = random.Random(seed)
    words = ["".join(rnd.choice(SYLLABLES) for _ in range(rnd.randint(1, 4))) for _ in range(600)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    lines = []
    for _ in range(n):
        line = rnd.choices(words, weights, k=rnd.randint(3, 12))
        if rnd.random() < 0.2:
            line.append(rnd.choice(["café", "naïve", "中文", "😀", "2024", "x=1;"]))
        lines.append(" ".join(line) + rnd.choice([".", "!", ",", ""]) + "\n")
    return lines


def _png_size_and_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Decode a PNG (with Pillow, matplotlib's own dependency) into its size and RGB pixels."""
    import io

    from PIL import Image

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data)).convert("RGB")
    return image.width, image.height, image.tobytes()


# -- the held-out split ------------------------------------------------------------------------------------------


@settings(deadline=None, derandomize=True, max_examples=50)
@given(st.integers(0, 2**32), st.sampled_from([0.05, 0.1, 0.5]))
def test_compare_is_heldout_is_stable_and_near_the_fraction(seed, fraction):
    chosen = [i for i in range(4000) if is_heldout(i, fraction=fraction, seed=seed)]
    assert chosen == [i for i in range(4000) if is_heldout(i, fraction=fraction, seed=seed)]
    assert abs(len(chosen) - 4000 * fraction) < 5 * (4000 * fraction * (1 - fraction)) ** 0.5
    assert not any(is_heldout(i, fraction=0.0, seed=seed) for i in range(100))


def test_compare_is_heldout_depends_on_the_seed():
    picks = {tuple(i for i in range(200) if is_heldout(i, fraction=0.1, seed=s)) for s in range(5)}
    assert len(picks) == 5


# -- merges vs a peer --------------------------------------------------------------------------------------------


def _merges(counts: dict[bytes, int], vocab_size: int, bits: int) -> list[tuple[bytes, bytes]]:
    words = sorted(counts)
    vocab, merges = _core.train_merges(words, [counts[w] for w in words], vocab_size=vocab_size, count_bits=bits)
    return [(vocab[a], vocab[b]) for a, b, _ in merges]


def test_compare_merges_names_the_rank_and_the_32_bit_overflow():
    # "ab" stays first even wrapped (its low 32 bits are 2**31-1); "cd" wraps to 10 and falls behind "ef".
    counts = {b"ab": 2**32 + 2**31 - 1, b"cd": 2**32 + 10, b"ef": 1000}
    ours = _merges(counts, 259, 64)
    peer = _merges(counts, 259, 32)  # tokenizers' i32 pair counts, emulated by the core
    assert ours == [(b"a", b"b"), (b"c", b"d"), (b"e", b"f")] and peer[:2] == [(b"a", b"b"), (b"e", b"f")]
    section = compare_merges(counts, ours, peer, vocab_size=259)
    assert section["identical"] is False
    assert section["first_difference"] == {
        "rank": 1,
        "hf_bpe": {"pair": ["c", "d"], "count": 2**32 + 10},
        "peer": {"pair": ["e", "f"], "count": 1000},
    }
    assert section["reason"].startswith("tokenizers' 32-bit pair counts overflow: pair 'c d' has count "
                                        "4,294,967,306 > 2**31-1 = 2,147,483,647")
    assert "reproduces tokenizers' merges entirely" in section["reason"]


def test_compare_merges_overflow_shows_in_the_markdown():
    counts = {b"ab": 2**32 + 2**31 - 1, b"cd": 2**32 + 10, b"ef": 1000}
    section = compare_merges(counts, _merges(counts, 259, 64), _merges(counts, 259, 32), vocab_size=259)
    report = _minimal_report(vs_tokenizers={"status": "compared", "error": None, "merges": section,
                                            "vocab": {"identical": True, "hf_bpe": 259, "peer": 259,
                                                      "differences": 0, "examples": []},
                                            "encode": {"equal": 0, "total": 0, "rate": None, "first_mismatch": None}})
    text = render_markdown(report)
    assert "**differ** from rank 1: hf_bpe `c d` (4,294,967,306) vs tokenizers `e f` (1,000)" in text
    assert "| reason | tokenizers' 32-bit pair counts overflow: pair 'c d'" in text


def test_compare_merges_without_a_known_reason():
    counts = {b"hello": 50, b"help": 30, b"yellow": 20}
    ours = _merges(counts, 264, 64)
    swapped = list(ours)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    section = compare_merges(counts, ours, swapped, vocab_size=264)
    difference = section["first_difference"]
    assert difference["rank"] == 2 and section["reason"] is None
    assert difference["hf_bpe"]["count"] >= difference["peer"]["count"]
    shorter = compare_merges(counts, ours, ours[:-1], vocab_size=264)
    assert shorter["first_difference"]["rank"] == len(ours) - 1 and shorter["first_difference"]["peer"] is None
    assert compare_merges(counts, ours, ours, vocab_size=264) == {
        "identical": True, "hf_bpe": len(ours), "peer": len(ours), "first_difference": None, "reason": None}


def test_compare_pair_counts_after_applies_merges_in_order():
    counts = {b"aaab": 2, b"ab": 5}
    assert pair_counts_after(counts, [], [(b"a", b"a"), (b"a", b"b")]) == {(b"a", b"a"): 4, (b"a", b"b"): 7}
    after = pair_counts_after(counts, [(b"a", b"a")], [(b"aa", b"a"), (b"a", b"b"), (b"aa", b"ab")])
    assert after == {(b"aa", b"a"): 2, (b"a", b"b"): 7, (b"aa", b"ab"): 0}


# -- compare() end to end (generated corpora) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("corpus")
    paths = []
    for k, name in enumerate(("news.txt", "stories.txt")):
        path = folder / name
        path.write_text("".join(_text_lines(k, 700)), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, corpus_files):
    out = tmp_path_factory.mktemp("report")
    report = compare(corpus_files, vocab_size=420, out=out, special_tokens=["<|endoftext|>"], show_progress=False,
                     force=True)
    return out, report


@pytest.mark.crossval
def test_compare_trains_all_three_and_agrees_with_tokenizers(first_run):
    out, report = first_run
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(report)) == saved
    assert saved["schema_version"] == REPORT_SCHEMA_VERSION == 1
    assert [s["name"] for s in saved["corpus"]["subsets"]] == ["news.txt", "stories.txt"]
    assert saved["corpus"]["train"]["documents"] + saved["corpus"]["heldout"]["documents"] == 1400
    for name in ("hf_bpe", "tokenizers", "sentencepiece"):
        entry = saved["tokenizers"][name]
        assert entry["status"] == "trained", entry
        assert entry["vocab_size"] == 420
        assert entry["training"]["seconds"] > 0
        assert entry["training"]["peak_rss_bytes"] >= entry["training"]["baseline_rss_bytes"] > 10 * 2**20
    vs = saved["vs_tokenizers"]
    assert vs["merges"]["identical"] and vs["merges"]["hf_bpe"] > 100
    assert vs["vocab"]["identical"]
    assert vs["encode"]["equal"] == vs["encode"]["total"] == saved["corpus"]["heldout"]["documents"] > 50
    sp = saved["vs_sentencepiece"]
    assert sp["status"] == "compared"
    assert 0 < sp["vocab_overlap"]["shared"] <= 420 and 0 < sp["vocab_overlap"]["jaccard"] <= 1
    assert 0 <= sp["segmentation"]["rate"] <= 1 and 0 < sp["segmentation"]["boundary_f1"] <= 1
    # Every held-out newline is a byte-fallback token in SentencePiece, so newlines alone give this many.
    assert sp["newline_byte_fallback"]["tokens"] == saved["corpus"]["heldout"]["documents"]
    for name in ("hf_bpe", "tokenizers", "sentencepiece"):
        metrics = saved["heldout"][name]["all"]
        assert 0 < metrics["tokens_per_byte"] <= metrics["tokens_per_char"] < 1
        assert metrics["roundtrip_rate"] == 1.0 and metrics["unknown_tokens"] == 0
        assert set(saved["heldout"][name]["subsets"]) == {"news.txt", "stories.txt"}
    assert saved["heldout"]["hf_bpe"] == saved["heldout"]["tokenizers"]
    assert saved["heldout"]["sentencepiece"]["all"]["byte_fallback_rate"] > 0
    exact = saved["vs_sentencepiece_exact"]  # hf_bpe's SentencePiece mode, on the peer's own options
    assert exact["status"] == "compared", exact["error"]
    assert exact["pieces"]["identical"] == exact["pieces"]["total"] == 420 and exact["pieces"]["first_difference"] is None
    assert exact["scores_identical"] and exact["types_identical"]
    assert exact["encode"]["equal"] == exact["encode"]["total"] == saved["corpus"]["heldout"]["documents"]


def _pattern_lines(seed: int, n: int) -> list[str]:
    """Text that tells the named patterns apart: contractions in any case, digit runs, whitespace runs, CRLF."""
    rnd = random.Random(seed)
    extras = ["I'M", "we'LL", "don't", "12345678", "3.14159", "  \t ", "\r\n", "hello\n\n  ", "x=1;y=22",
              "ÉCOLE école", "中文字符", "😀👍", "Ünïcödé's"]
    return [" ".join(line.split()[:-1] + [rnd.choice(extras)]) + rnd.choice(["\n", "\r\n", "  \n", ""])
            for line in _text_lines(seed, n)]


@pytest.mark.crossval
@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "o200k", "llama3", "qwen2"])
def test_compare_agrees_with_tokenizers_for_every_named_pattern(tmp_path, pattern):
    result = compare(_pattern_lines(7, 900), vocab_size=700, out=tmp_path, against=("tokenizers",), pattern=pattern,
                     show_progress=False)
    vs = result["vs_tokenizers"]
    assert vs["status"] == "compared", vs["error"]
    assert vs["merges"]["identical"], vs["merges"]["first_difference"]
    assert vs["vocab"]["identical"], vs["vocab"]["examples"]
    assert vs["encode"]["equal"] == vs["encode"]["total"] > 50, vs["encode"]["first_mismatch"]


@pytest.mark.crossval
def test_compare_writes_a_readable_markdown_and_chart(first_run):
    out, _ = first_run
    text = (out / "report.md").read_text(encoding="utf-8")
    for heading in ("## Training", "## hf_bpe vs tokenizers (must be equal)", "## hf_bpe vs SentencePiece BPE",
                    "## hf_bpe in SentencePiece mode vs SentencePiece (exact)",
                    "## Held-out tokens per byte, by subset",
                    "![tokens per byte, training time and memory](report.png)"):
        assert heading in text
    assert "| merges | **identical**" in text and "| vocabulary ids | **identical**" in text
    assert "| news.txt |" in text and "| all |" in text
    width, height, raw = _png_size_and_pixels((out / "report.png").read_bytes())
    assert width >= 1000 and 600 < height < 2000
    assert "![tokens per byte, training time and memory](report.png)" in text
    for color in ((31, 119, 180), (255, 127, 14), (44, 160, 44)):  # one bar color per tokenizer
        assert bytes(color) * 10 in raw


@pytest.mark.crossval
def test_compare_loads_trained_models_instead_of_training(first_run, corpus_files, tmp_path):
    out, report = first_run
    models = report["files"]["models"]
    again = compare(corpus_files, vocab_size=420, out=tmp_path, special_tokens=["<|endoftext|>"], models=models,
                    show_progress=False)
    assert {e["status"] for e in again["tokenizers"].values()} == {"loaded"}
    assert all(e["training"] is None for e in again["tokenizers"].values())
    assert again["heldout"] == json.loads(json.dumps(report["heldout"]))
    assert again["vs_tokenizers"]["encode"] == report["vs_tokenizers"]["encode"]


@pytest.mark.crossval
def test_compare_reports_the_first_difference_of_a_changed_peer(first_run, corpus_files, tmp_path):
    out, report = first_run
    peer = tmp_path / "peer"
    peer.mkdir()
    data = json.loads((Path(report["files"]["models"]["tokenizers"]) / "tokenizer.json").read_text(encoding="utf-8"))
    merges = data["model"]["merges"]
    merges[40], merges[41] = merges[41], merges[40]
    (peer / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    result = compare(corpus_files, vocab_size=420, out=tmp_path / "r", against=["tokenizers"],
                     special_tokens=["<|endoftext|>"], show_progress=False,
                     models={"hf_bpe": report["files"]["models"]["hf_bpe"], "tokenizers": peer})
    section = result["vs_tokenizers"]["merges"]
    assert section["identical"] is False and section["first_difference"]["rank"] == 40
    assert section["first_difference"]["hf_bpe"]["pair"] == list(merges[41] if isinstance(merges[41], list)
                                                                 else merges[41].split(" "))
    assert section["first_difference"]["hf_bpe"]["count"] >= section["first_difference"]["peer"]["count"] > 0
    assert section["reason"] is None
    assert result["vs_sentencepiece"]["status"] == "not requested"
    text = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "**differ** from rank 40" in text and "| reason | unknown |" in text


@pytest.mark.crossval
def test_compare_still_reports_when_a_peer_or_matplotlib_is_not_installed(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    compare_module = importlib.import_module("hf_bpe.tools.compare.run")

    installed = compare_module._installed
    monkeypatch.setattr(compare_module, "_installed", lambda name: name != "sentencepiece" and installed(name))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError, as uninstalled
    rows = _text_lines(0, 700)
    result = compare(datasets.Dataset.from_dict({"body": rows}), vocab_size=420, out=tmp_path, text_column="body",
                     special_tokens=["<|endoftext|>"], show_progress=False)
    assert result["tokenizers"]["sentencepiece"]["status"] == "not installed"
    assert "pip install sentencepiece" in result["tokenizers"]["sentencepiece"]["error"]
    assert result["vs_sentencepiece"]["status"] == "not installed"
    assert result["tokenizers"]["tokenizers"]["status"] == "trained"
    assert result["corpus"]["subsets"][0]["name"] == "corpus"
    assert result["vs_tokenizers"]["merges"]["identical"] and result["vs_tokenizers"]["vocab"]["identical"]
    assert result["vs_tokenizers"]["encode"]["equal"] == result["vs_tokenizers"]["encode"]["total"] > 0
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Not compared: not installed: sentencepiece is not installed" in text
    assert not (tmp_path / "report.png").exists() and result["files"]["chart"] is None
    assert "](report.png)" not in text and "matplotlib is not installed (pip install 'hf_bpe[plot]'" in text


@pytest.mark.crossval
def test_compare_says_when_the_corpus_is_too_small_for_the_vocab(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("".join(_text_lines(3, 60)), encoding="utf-8")
    code = cli_compare([str(corpus), "--vocab-size", "2000", "--out", str(tmp_path / "r"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.split() == [str(tmp_path / "r" / n) for n in ("report.json", "report.md", "report.png")]
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert any("not the 2000 asked for" in note and note.startswith("hf_bpe has") for note in report["notes"])
    sp = report["tokenizers"]["sentencepiece"]
    assert sp["status"] == "failed"
    assert "too small for SentencePiece to reach vocab_size=2000" in sp["error"]
    assert report["vs_tokenizers"]["merges"]["identical"]  # both stop at the same point
    assert "sentencepiece failed" in captured.err and "Traceback" not in captured.err


def test_compare_cli_rejects_bad_input(tmp_path, corpus_files, capsys):
    base = [str(corpus_files[0]), "--vocab-size", "300", "--out", str(tmp_path / "r"), "--quiet"]
    cases = [
        (["--against", "tokenizers,fasttext"], "unknown peer 'fasttext'"),
        (["--heldout-fraction", "1.5"], "heldout_fraction must be a number in [0, 1), got 1.5"),
        (["--model", "sentencepiece"], "expected NAME=PATH"),
        (["--model", "hf_bpe=/nonexistent/folder"], "does not exist"),
        (["--vocab-size", "100"], "vocab_size=100 is too small"),
        (["--peer-timeout", "0"], "peer_timeout must be a number of seconds > 0, got 0.0"),
        (["--algorithm", "unigram", "--pattern", "gpt4"], "byte-level BPE options, got (0, 'gpt4')"),
        (["--algorithm", "unigram", "--num-threads", "0"], "num_threads must be an int >= 1, got 0"),
        (["--dataset", "x"], "not both"),
        ([str(tmp_path / "absent.txt")], "absent.txt' does not exist"),
    ]
    for extra, message in cases:
        assert cli_compare(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error: ") and message in err and "Traceback" not in err, err
    assert cli_compare(["--vocab-size", "300"]) == 2  # --out is required (argparse)
    assert "--out" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert cli_compare([str(empty), "--vocab-size", "300", "--out", str(tmp_path / "e"), "--quiet"]) == 2
    assert "the corpus is empty" in capsys.readouterr().err  # checked before the split (issue 33.12)


_PLANTED = """
import pathlib
pathlib.Path({marker!r}).write_text("executed")
raise ImportError("a planted module")
"""


@pytest.mark.crossval
def test_compare_children_do_not_import_from_the_working_directory(tmp_path, corpus_files, monkeypatch):
    """A `tokenizers.py` (or `sentencepiece.py`) where the user runs compare is never executed by the trainers."""
    hostile = tmp_path / "downloads"
    hostile.mkdir()
    marker = tmp_path / "executed.txt"
    for name in ("tokenizers", "sentencepiece", "regex"):
        (hostile / f"{name}.py").write_text(_PLANTED.format(marker=str(marker)), encoding="utf-8")
    monkeypatch.chdir(hostile)
    code = cli_compare([str(corpus_files[0]), "--vocab-size", "300", "--out", "r", "--quiet"])
    assert not marker.exists()
    assert code == 0
    report = json.loads((hostile / "r" / "report.json").read_text(encoding="utf-8"))
    assert {e["status"] for e in report["tokenizers"].values()} == {"trained"}, report["tokenizers"]


# The trainer's process, replaced for one peer by one that blocks forever (waits for a signal nobody sends).
_BLOCKS_FOR_TOKENIZERS = ("import json, signal, sys\n"
                          "if json.load(open(sys.argv[2]))['peer'] == 'tokenizers':\n    signal.pause()\n")


@pytest.mark.crossval
def test_compare_reports_a_peer_that_never_finishes_as_timed_out(tmp_path, corpus_files, monkeypatch, capsys):
    import hf_bpe

    run_module = importlib.import_module("hf_bpe.tools.compare.run")
    monkeypatch.setattr(run_module, "_CHILD_BOOTSTRAP", _BLOCKS_FOR_TOKENIZERS + run_module._CHILD_BOOTSTRAP)
    trained = tmp_path / "hf"
    hf_bpe.train(corpus_files, vocab_size=290, show_progress=False).save(trained)
    code = cli_compare([str(corpus_files[0]), "--vocab-size", "300", "--out", str(tmp_path / "r"), "--quiet",
                        "--against", "tokenizers", "--model", f"hf_bpe={trained}", "--peer-timeout", "1"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    entry = report["tokenizers"]["tokenizers"]
    assert entry["status"] == "timed out" and "still training after 1 s" in entry["error"]
    assert report["vs_tokenizers"]["status"] == "timed out"
    assert report["tokenizers"]["hf_bpe"]["status"] == "loaded"
    assert "timed out: still training after 1 s" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


def test_compare_refuses_to_replace_a_report_without_force(tmp_path, corpus_files):
    (tmp_path / "report.md").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="force"):
        compare(corpus_files, vocab_size=300, out=tmp_path, show_progress=False)
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "mine"


def _minimal_report(**overrides) -> dict:
    report = {
        "schema_version": 1, "versions": {"hf_bpe": "0.1.0"},
        "options": {"vocab_size": 300, "min_frequency": 0, "special_tokens": [], "pattern": "gpt2",
                    "against": ["tokenizers"], "heldout_fraction": 0.1, "heldout_seed": 0, "workers": 1},
        "memory_measure": "ru_maxrss",
        "corpus": {"source": ["x.txt"], "fingerprint": {"sha256": "0" * 64}, "documents": 10, "bytes": 100,
                   "characters": 100, "train": {"documents": 9, "bytes": 90, "characters": 90},
                   "heldout": {"documents": 1, "bytes": 10, "characters": 10},
                   "subsets": [{"name": "x.txt", "documents": 1, "bytes": 10, "characters": 10}]},
        "tokenizers": {n: {"status": "not requested", "version": None, "path": None, "vocab_size": None,
                           "configuration": None, "warnings": [], "error": None, "training": None}
                       for n in ("hf_bpe", "tokenizers", "sentencepiece")},
        "heldout": {},
        "vs_tokenizers": {"status": "not requested", "error": None},
        "vs_sentencepiece": {"status": "not requested", "error": None},
        "notes": [],
    }
    report.update(overrides)
    return report


def test_compare_chart_draws_without_held_out_documents():
    width, height, raw = _png_size_and_pixels(render_chart(_minimal_report()))
    assert width == 1000 and height > 400
    assert raw.count(b"\xff") < len(raw) - 1000  # the title and "no held-out documents encoded" are drawn
    assert not any(bytes(color) * 4 in raw for color in ((31, 119, 180), (255, 127, 14), (44, 160, 44)))  # no bars
    assert "Not compared: not requested" in render_markdown(_minimal_report())


# -- unigram: identical to spm_train, metrics against tokenizers' UnigramTrainer --------------------------------


@pytest.fixture(scope="module")
def unigram_run(tmp_path_factory, corpus_files):
    out = tmp_path_factory.mktemp("unigram")
    argv = [*map(str, corpus_files), "--algorithm", "unigram", "--vocab-size", "400", "--num-threads", "2",
            "--special-token", "<|endoftext|>", "--out", str(out), "--quiet"]
    assert cli_compare(argv) == 0
    return out, json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.crossval
def test_compare_unigram_is_identical_to_spm_train_and_measured_against_tokenizers(unigram_run):
    out, report = unigram_run
    assert report["options"]["algorithm"] == "unigram" and report["options"]["num_threads"] == 2
    for name in ("hf_bpe", "tokenizers", "sentencepiece"):
        entry = report["tokenizers"][name]
        assert entry["status"] == "trained", entry
        assert entry["vocab_size"] == 400
        assert entry["training"]["seconds"] > 0
        assert entry["training"]["peak_rss_bytes"] >= entry["training"]["baseline_rss_bytes"] > 10 * 2**20
    assert report["tokenizers"]["hf_bpe"]["configuration"]["train_sentencepiece"] \
        == report["tokenizers"]["sentencepiece"]["configuration"]
    assert report["tokenizers"]["sentencepiece"]["configuration"]["num_threads"] == 2
    heldout = report["corpus"]["heldout"]["documents"]
    exact = report["vs_sentencepiece_exact"]
    assert exact["status"] == "compared", exact["error"]
    assert exact["pieces"]["identical"] == exact["pieces"]["total"] == 400
    assert exact["pieces"]["first_difference"] is None
    assert exact["scores_identical"] and exact["types_identical"]  # scores compared as float32 bits
    assert exact["encode"]["equal"] == exact["encode"]["total"] == heldout > 50
    assert exact["encode_hf_bpe"]["equal"] == heldout  # hf_bpe's own UnigramModel encodes as sentencepiece
    assert report["heldout"]["hf_bpe"] == report["heldout"]["sentencepiece"]
    vs = report["vs_tokenizers_unigram"]
    assert vs["status"] == "compared", vs["error"]
    assert 0 < vs["vocab_overlap"]["shared"] < 400 and 0 < vs["vocab_overlap"]["jaccard"] < 1
    assert 0 < vs["segmentation"]["rate"] < 1 and 0.5 < vs["segmentation"]["boundary_f1"] < 1
    for name in ("hf_bpe", "tokenizers"):
        assert 0.05 < report["heldout"][name]["all"]["tokens_per_byte"] < 0.5
    assert report["vs_tokenizers"]["status"] == report["vs_sentencepiece"]["status"] == "not requested"
    text = (out / "report.md").read_text(encoding="utf-8")
    for line in ("## hf_bpe unigram vs SentencePiece unigram (must be identical)", "**IDENTICAL**",
                 "| scores (float32 bits) | identical |", "## hf_bpe unigram vs tokenizers' UnigramTrainer"):
        assert line in text
    assert "## hf_bpe vs tokenizers (must be equal)" not in text
    assert summary(report).startswith("unigram vs sentencepiece: identical; tokens/byte hf_bpe ")
    _png_size_and_pixels((out / "report.png").read_bytes())


@pytest.mark.crossval
def test_compare_unigram_loads_trained_models(unigram_run, corpus_files, tmp_path):
    _, report = unigram_run
    again = compare(corpus_files, vocab_size=400, out=tmp_path, algorithm="unigram", num_threads=2,
                    special_tokens=["<|endoftext|>"], models=report["files"]["models"], show_progress=False)
    assert {e["status"] for e in again["tokenizers"].values()} == {"loaded"}
    assert json.loads(json.dumps(again["vs_sentencepiece_exact"])) == report["vs_sentencepiece_exact"]
    assert json.loads(json.dumps(again["vs_tokenizers_unigram"])) == report["vs_tokenizers_unigram"]


# -- real corpora ----------------------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_compare_english_combined_at_32000(shared_data, tmp_path):
    # The full 23.5 MB corpus takes about 35 s here (tokenizers' training is most of it).
    corpus = shared_data / "corpora" / "en" / "english_combined.txt"
    report = compare(corpus, vocab_size=32000, out=tmp_path, show_progress=False)
    vs = report["vs_tokenizers"]
    assert vs["merges"]["identical"] and vs["merges"]["hf_bpe"] == 32000 - 256
    assert vs["vocab"]["identical"]
    assert vs["encode"]["equal"] == vs["encode"]["total"] > 15000
    sp = report["vs_sentencepiece"]
    assert sp["status"] == "compared" and report["tokenizers"]["sentencepiece"]["vocab_size"] == 32000
    for name in ("hf_bpe", "sentencepiece"):
        metrics = report["heldout"][name]["all"]
        assert 0.15 < metrics["tokens_per_byte"] < 0.35 and metrics["roundtrip_rate"] == 1.0
    shutil.rmtree(tmp_path / "models")


@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_compare_unigram_identical_to_spm_train_on_english(shared_data, tmp_path):
    # The first 1 MB of the English corpus at 8,000 pieces, spm_train's default num_threads.
    lines = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:1_000_000].split(b"\n")[:-1]
    corpus = tmp_path / "en.txt"
    corpus.write_bytes(b"\n".join(lines) + b"\n")
    report = compare(corpus, vocab_size=8000, out=tmp_path / "r", algorithm="unigram", show_progress=False)
    exact = report["vs_sentencepiece_exact"]
    assert exact["status"] == "compared", exact["error"]
    assert exact["pieces"]["identical"] == exact["pieces"]["total"] == 8000, exact["pieces"]["first_difference"]
    assert exact["scores_identical"] and exact["types_identical"]
    assert exact["encode"]["equal"] == exact["encode"]["total"] == exact["encode_hf_bpe"]["equal"] > 500
    vs = report["vs_tokenizers_unigram"]
    assert vs["status"] == "compared" and 0.3 < vs["vocab_overlap"]["jaccard"] < 1
    for name in ("hf_bpe", "tokenizers"):
        assert 0.15 < report["heldout"][name]["all"]["tokens_per_byte"] < 0.35
