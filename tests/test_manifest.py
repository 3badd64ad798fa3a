"""The training manifest: corpus fingerprints, the manifest file, and `verify` (files, corpus, retraining)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.formats.manifest import (
    MANIFEST_NAME,
    SCHEMA_VERSION,
    CorpusFingerprint,
    build_manifest,
    dump_manifest,
    load_manifest,
    training_record,
)
from hf_bpe.cli import main
from hf_bpe.tools.verify import (
    first_difference,
    verify,
)


def cli_verify(argv: list[str]) -> int:
    return main(["verify", *argv])


OPTIONS = {"vocab_size": 290, "min_frequency": 0, "special_tokens": ["<|endoftext|>"], "pattern": "gpt2",
           "add_prefix_space": False, "max_token_length": None}
LINES = ["hello world\n", "hello there, world!\n", "lower lowest low\n", "中文 😀 naïve café\n", "\n"]


def _fingerprint(texts, order="sequence") -> dict:
    fp = CorpusFingerprint(order=order)
    fp.update(texts)
    return fp.as_dict()


def _write_corpus(path: Path, lines=LINES, repeat: int = 40) -> Path:
    path.write_text("".join(lines) * repeat, encoding="utf-8")
    return path


def _train_folder(folder: Path, corpus, *, order: str = "sequence", **overrides) -> Path:
    """Train and save with a manifest, as `hf-bpe train` does (writing the manifest if save did not)."""
    options = {**OPTIONS, **overrides}
    model = hf_bpe.train(corpus, **options, show_progress=False)
    out = model.save(folder)
    if not (out / MANIFEST_NAME).exists() or order != "sequence":
        from hf_bpe.training.corpus import iter_texts

        files = {p.name: p.read_bytes() for p in out.iterdir() if p.name != MANIFEST_NAME}
        manifest = build_manifest(files, options=options, corpus=_fingerprint(iter_texts(corpus), order))
        (out / MANIFEST_NAME).write_text(dump_manifest(manifest), encoding="utf-8")
    return out


# -- fingerprints ----------------------------------------------------------------------------------------------------


def test_manifest_fingerprint_sequence_is_sha256_of_length_prefixed_texts():
    texts = ["ab", "", "c\n", "中"]
    expected = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        expected.update(len(data).to_bytes(8, "little") + data)
    assert _fingerprint(texts) == {"order": "sequence", "sha256": expected.hexdigest(), "documents": 4, "bytes": 7}


def test_manifest_fingerprint_framing_is_unambiguous():
    assert _fingerprint(["ab", "c"])["sha256"] != _fingerprint(["a", "bc"])["sha256"]
    assert _fingerprint(["a", ""])["sha256"] != _fingerprint(["a"])["sha256"]
    assert _fingerprint(["a", ""], "multiset")["sha256"] != _fingerprint(["a"], "multiset")["sha256"]


_TEXTS_AND_PERMUTATION = st.lists(st.text(max_size=8), max_size=8).flatmap(
    lambda texts: st.tuples(st.just(texts), st.permutations(texts))
)


@settings(deadline=None, derandomize=True, max_examples=100)
@given(_TEXTS_AND_PERMUTATION)
def test_manifest_fingerprint_multiset_ignores_order_sequence_does_not(case):
    texts, shuffled = case
    assert _fingerprint(texts, "multiset") == _fingerprint(shuffled, "multiset")
    assert (_fingerprint(texts)["sha256"] == _fingerprint(shuffled)["sha256"]) == (texts == shuffled)


@settings(deadline=None, derandomize=True, max_examples=100)
@given(st.lists(st.text(max_size=12), max_size=12), st.integers(0, 12), st.sampled_from(["sequence", "multiset"]))
def test_manifest_fingerprint_streams_in_any_chunks(texts, cut, order):
    fp = CorpusFingerprint(order=order)
    fp.update(texts[:cut])
    fp.update(iter(texts[cut:]))
    assert fp.as_dict() == _fingerprint(texts, order)
    assert fp.as_dict()["bytes"] == sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


def test_manifest_fingerprint_multiset_is_the_sum_of_sha256_digests():
    # The definition, written with hashlib: the compiled sums must give exactly this.
    texts = ["ab", "", "c\n", "中", "\ud800"]  # a lone surrogate is hashed (surrogatepass), not an error
    total = sum(int.from_bytes(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest(), "big") for t in texts)
    assert _fingerprint(texts, "multiset")["sha256"] == f"{total % 2**256:064x}"


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.lists(st.binary(max_size=150).map(lambda b: b.replace(b"\n", b"")), max_size=20), st.booleans())
def test_manifest_fingerprint_file_blocks_equal_lines_in_both_orders(lines, last_newline):
    # A file's block (update_lines, hashed in compiled code) fingerprints as its lines given one by one; lengths
    # cross SHA-256's 55/56/64-byte padding boundaries.
    lines = [line.decode("latin-1") for line in lines]
    texts = [line + "\n" for line in lines]
    if texts and not last_newline:
        texts[-1] = texts[-1][:-1]
    texts = [t for t in texts if t]
    raw = "".join(texts).encode("utf-8")
    for order in ("sequence", "multiset"):
        block = CorpusFingerprint(order=order)
        block.update_lines(raw, len(texts))
        assert block.as_dict() == _fingerprint(texts, order)


def test_manifest_fingerprint_same_with_and_without_sha_extensions():
    # The stream hash is the compiled SHA-256 on CPUs with SHA extensions and hashlib's elsewhere (forced here by
    # turning the extensions off): the same fingerprint either way, from blocks or from texts.
    from hf_bpe.core._tally import _set_sha_extensions

    texts = ["ab\n", "", "c\n", "中\n", "x" * 200 + "\n", "last"]
    raw = "".join(texts).encode("utf-8")
    results = []
    for on in (True, False):
        previous = _set_sha_extensions(on)
        try:
            block = CorpusFingerprint()
            block.update_lines(raw, len(texts) - 1)
            results.append((block.as_dict()["sha256"], _fingerprint([t for t in texts if t], "sequence")["sha256"]))
        finally:
            _set_sha_extensions(previous)
    assert results[0] == results[1] and len(set(results[0])) == 1


def test_manifest_fingerprint_wrap_passes_texts_through():
    fp = CorpusFingerprint()
    assert list(fp.wrap(x for x in ["a", "b"])) == ["a", "b"]
    assert fp.as_dict() == _fingerprint(["a", "b"])


def test_manifest_fingerprint_rejects_bad_input():
    with pytest.raises(ValueError, match="'sorted'"):
        CorpusFingerprint(order="sorted")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="wrap it in a list"):
        CorpusFingerprint().update("hello")
    with pytest.raises(TypeError, match="must be str, got bytes"):
        CorpusFingerprint().update([b"hello"])  # type: ignore[list-item]


# -- building and writing manifests ------------------------------------------------------------------------------


def test_manifest_build_records_versions_options_corpus_and_file_hashes():
    files = {"vocab.json": '{"a": 0}\n', "merges.txt": b"#version: 0.2\n"}
    corpus = _fingerprint(["a\n"])
    manifest = build_manifest(files, options={**OPTIONS, "special_tokens": ("<s>",)}, corpus=corpus)
    assert manifest["schema_version"] == SCHEMA_VERSION == 1
    assert manifest["files"] == {
        "vocab.json": {"sha256": hashlib.sha256(b'{"a": 0}\n').hexdigest(), "bytes": 9},
        "merges.txt": {"sha256": hashlib.sha256(b"#version: 0.2\n").hexdigest(), "bytes": 14},
    }
    assert manifest["options"]["special_tokens"] == ["<s>"] and manifest["options"]["max_token_length"] is None
    assert manifest["corpus"] == corpus
    versions = manifest["versions"]
    assert versions["hf_bpe"] == hf_bpe.__version__
    assert {"python", "tokenizers", "transformers", "datasets", "sentencepiece", "regex"} <= set(versions)
    import tokenizers

    assert versions["tokenizers"] == tokenizers.__version__


def test_manifest_dump_is_byte_stable_sorted_and_ends_with_newline():
    files = {"b.txt": "x", "a.txt": "y"}
    first = dump_manifest(build_manifest(files, options={"z": 1, "a": [1, 2]}, corpus=None))
    second = dump_manifest(build_manifest(dict(reversed(files.items())), options={"a": (1, 2), "z": 1}, corpus=None))
    assert first == second and first.endswith("}\n")
    keys = list(json.loads(first))
    assert keys == sorted(keys)
    assert "time" not in first and "date" not in first


def test_manifest_build_rejects_bad_names_and_values():
    with pytest.raises(ValueError, match="plain file name"):
        build_manifest({"../x": "a"}, options={}, corpus=None)
    with pytest.raises(ValueError, match="manifest itself"):
        build_manifest({MANIFEST_NAME: "{}"}, options={}, corpus=None)
    with pytest.raises(TypeError, match="'progress'"):
        build_manifest({}, options={"progress": print}, corpus=None)
    with pytest.raises(ValueError, match="lacks"):
        build_manifest({}, options={}, corpus={"sha256": "0"})
    with pytest.raises(TypeError, match="bytes or str"):
        build_manifest({"a": 1}, options={}, corpus=None)  # type: ignore[dict-item]


def test_manifest_build_with_trained_lists_edited_files_and_a_note():
    trained = build_manifest({"vocab.json": "{}", "merges.txt": "a b\n", "tokenizer_config.json": "{}"},
                             options=OPTIONS, corpus=_fingerprint(["a\n"]))
    now = {"vocab.json": "{}", "merges.txt": "a b\n", "tokenizer_config.json": '{"pad": 1}', "chat.jinja": "x"}
    record = training_record(trained)
    assert record == {"options": trained["options"], "corpus": trained["corpus"],
                      "trained": {"files": trained["files"], "versions": trained["versions"]}}
    later = build_manifest(now, options=record["options"], corpus=record["corpus"], trained=record["trained"])
    # Changed files and files that training did not write are both "edited after training".
    assert later["edited_after_training"] == ["chat.jinja", "tokenizer_config.json"]
    assert later["trained"] == record["trained"] and later["corpus"] == trained["corpus"]
    assert later["note"].startswith("vocab.json and merges.txt (the trained content) are as trained")
    # A manifest written after training passes the training's record on, not its own files.
    assert training_record(later)["trained"] == record["trained"]
    changed = build_manifest({**now, "merges.txt": "b c\n", "vocab.json": "[]"}, options={}, corpus=None,
                             trained=record["trained"])
    assert changed["edited_after_training"] == ["chat.jinja", "merges.txt", "tokenizer_config.json", "vocab.json"]
    assert changed["note"].startswith("vocab.json and merges.txt differ from what training wrote")
    assert training_record(build_manifest(now, options={}, corpus=None)) is None
    with pytest.raises(TypeError, match="training_record"):
        build_manifest(now, options={}, corpus=None, trained={"files": {"a": 1}})
    with pytest.raises(TypeError, match="mapping"):
        training_record([])  # type: ignore[arg-type]


def test_manifest_first_difference_names_the_line():
    assert first_difference(b"a\nb\n", b"a\nc\n") == "line 2: 'b\\n' vs 'c\\n'"
    assert first_difference(b"a\nb", b"a\nb\n") == "line 2: 'b' vs 'b\\n'"
    assert first_difference(b"a\nb\n", b"a\n") == "line 2: 'b\\n' vs <end of file>"


# -- verify -----------------------------------------------------------------------------------------------------


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    return _write_corpus(tmp_path / "corpus.txt")


@pytest.fixture
def trained(tmp_path, corpus_file) -> Path:
    return _train_folder(tmp_path / "tok", corpus_file)


def test_manifest_verify_passes_on_a_fresh_training(trained, corpus_file):
    report = verify(trained)
    assert report.ok and not report.problems
    assert any("merges.txt" in c for c in report.checked) and any("vocab.json" in c for c in report.checked)
    report = verify(trained, corpus=corpus_file)
    assert report.ok, report.format()
    assert any(c.startswith("corpus: fingerprint matches") for c in report.checked)
    assert "merges.txt: retrained output is byte-identical" in report.checked
    assert "vocab.json: retrained output is byte-identical" in report.checked
    assert report.format().endswith("verified: everything matches\n")


def test_manifest_verify_names_a_file_changed_by_one_byte(trained, corpus_file):
    path = trained / "merges.txt"
    data = bytearray(path.read_bytes())
    data[-2] ^= 1  # one byte of the last merge
    path.write_bytes(bytes(data))
    report = verify(trained)
    assert not report.ok
    assert len(report.problems) == 1 and report.problems[0].startswith("merges.txt: sha256 differs")
    with_corpus = verify(trained, corpus=corpus_file)
    assert any(p.startswith("merges.txt: retrained output differs at line ") for p in with_corpus.problems)


def test_manifest_verify_reports_the_first_differing_line_after_retraining(trained, corpus_file):
    # A tampered merges.txt with a manifest that agrees with it: only retraining can catch it.
    lines = (trained / "merges.txt").read_text(encoding="utf-8").split("\n")
    lines[3], lines[4] = lines[4], lines[3]
    (trained / "merges.txt").write_text("\n".join(lines), encoding="utf-8")
    manifest = load_manifest(trained)
    manifest["files"]["merges.txt"] = {"sha256": hashlib.sha256((trained / "merges.txt").read_bytes()).hexdigest(),
                                       "bytes": (trained / "merges.txt").stat().st_size}
    (trained / MANIFEST_NAME).write_text(dump_manifest(manifest), encoding="utf-8")
    report = verify(trained, corpus=corpus_file)
    assert report.problems == (f"merges.txt: retrained output differs at line 4: {lines[4] + chr(10)!r} vs "
                               f"{lines[3] + chr(10)!r} (retrained vs folder)",)


def test_manifest_verify_names_a_missing_file(trained):
    (trained / "vocab.json").unlink()
    report = verify(trained)
    assert not report.ok and report.problems[0].startswith("vocab.json: missing")


def test_manifest_verify_catches_a_one_byte_change_in_the_corpus(trained, corpus_file):
    text = corpus_file.read_text(encoding="utf-8")
    corpus_file.write_text(text.replace("hello", "hellp", 1), encoding="utf-8")
    report = verify(trained, corpus=corpus_file)
    assert not report.ok
    assert report.problems[0].startswith("corpus fingerprint differs: ")
    assert "same document and byte counts" in report.problems[0]
    assert "not retrained" in report.notes[-1]


def test_manifest_verify_accepts_reordered_rows_of_a_multiset_corpus(tmp_path):
    rows = [line for line in LINES * 10]
    folder = _train_folder(tmp_path / "tok", rows, order="multiset")
    assert load_manifest(folder)["corpus"]["order"] == "multiset"
    assert verify(folder, corpus=list(reversed(rows))).ok
    changed = verify(folder, corpus=rows[:-1])
    assert not changed.ok and changed.problems[0].startswith("corpus fingerprint differs")


def test_manifest_verify_reads_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = LINES * 10
    folder = _train_folder(tmp_path / "tok", rows)
    dataset = datasets.Dataset.from_dict({"body": rows})
    assert verify(folder, corpus=dataset, text_column="body").ok


def test_manifest_verify_bad_input(tmp_path, trained, corpus_file):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        verify(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=MANIFEST_NAME):
        verify(empty)
    with pytest.raises(TypeError, match="one-shot iterator"):
        verify(trained, corpus=iter(["a"]))
    (trained / MANIFEST_NAME).write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not valid JSON: Expecting property name"):
        verify(trained)
    (trained / MANIFEST_NAME).write_text('{"schema_version": 99, "files": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="schema_version 99"):
        verify(trained)


def test_manifest_cli_verify_exit_status(trained, corpus_file, capsys):
    assert cli_verify([str(trained), "--corpus", str(corpus_file), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ok    merges.txt: retrained output is byte-identical" in out and out.endswith("everything matches\n")
    path = trained / "merges.txt"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\n ", 1))
    assert cli_verify([str(trained)]) == 1
    captured = capsys.readouterr()
    assert "FAIL  merges.txt: sha256 differs" in captured.out and captured.err == ""
    assert cli_verify([str(trained / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and "Traceback" not in err
    assert cli_verify([str(trained), "--corpus", "a.txt", "--dataset", "d"]) == 2
    assert "not both" in capsys.readouterr().err


def _rewrite_after_training(folder: Path, edits: dict[str, bytes]) -> None:
    """Rewrite files as save_pretrained would: new contents, and a manifest that carries the training's record."""
    for name, data in edits.items():
        (folder / name).write_bytes(data)
    record = training_record(load_manifest(folder))
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != MANIFEST_NAME}
    manifest = build_manifest(files, options=record["options"], corpus=record["corpus"], trained=record["trained"])
    (folder / MANIFEST_NAME).write_text(dump_manifest(manifest), encoding="utf-8")


def test_manifest_verify_skips_config_files_edited_after_training(trained, corpus_file, capsys):
    config = json.loads((trained / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["pad_token"] = "<|endoftext|>"
    _rewrite_after_training(trained, {"tokenizer_config.json": json.dumps(config).encode()})
    assert load_manifest(trained)["edited_after_training"] == ["tokenizer_config.json"]
    report = verify(trained)
    assert report.ok and "edited after training (e.g. by save_pretrained): tokenizer_config.json; vocab.json and " \
        "merges.txt are as trained" in report.notes
    report = verify(trained, corpus=corpus_file)
    assert report.ok, report.format()
    assert "merges.txt: retrained output is byte-identical" in report.checked
    assert "tokenizer_config.json: edited after training, so not compared with the retrained output" in report.notes
    assert cli_verify([str(trained), "--corpus", str(corpus_file), "--quiet"]) == 0
    assert "note  tokenizer_config.json: edited after training" in capsys.readouterr().out
    # A later one-byte change is still caught by its hash.
    path = trained / "tokenizer_config.json"
    path.write_bytes(path.read_bytes().replace(b"{", b"{ ", 1))
    report = verify(trained)
    assert [p.split(":")[0] for p in report.problems] == ["tokenizer_config.json"]


def test_manifest_verify_still_retrains_trained_content_edited_after_training(trained, corpus_file):
    # merges.txt recorded as edited after training: the hashes agree, but retraining compares it and names it.
    lines = (trained / "merges.txt").read_bytes().split(b"\n")
    lines[3], lines[4] = lines[4], lines[3]
    _rewrite_after_training(trained, {"merges.txt": b"\n".join(lines)})
    assert load_manifest(trained)["edited_after_training"] == ["merges.txt"]
    assert verify(trained).ok
    report = verify(trained, corpus=corpus_file)
    assert not report.ok and len(report.problems) == 1
    assert report.problems[0].startswith("merges.txt: retrained output differs at line 4")


# -- determinism --------------------------------------------------------------------------------------------------

_TRAIN_SCRIPT = """
import hashlib, sys
from pathlib import Path
import hf_bpe
model = hf_bpe.train([Path(sys.argv[1])], vocab_size=600, special_tokens=["<|endoftext|>"], workers=int(sys.argv[2]),
                     show_progress=False)
out = model.save(Path(sys.argv[3]))
names = ("vocab.json", "merges.txt", "tokenizer.json", "hf_bpe_manifest.json")
print(" ".join(hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names))
"""


@pytest.mark.slow
def test_manifest_determinism_workers_and_hash_seed(tmp_path):
    # Enough distinct words that hash order would show if it leaked into tie-breaking.
    words = [f"w{i * 7919 % 1000}x{i % 37} " for i in range(4000)]
    corpus = _write_corpus(tmp_path / "corpus.txt", ["".join(words[i : i + 20]) + "\n" for i in range(0, 4000, 20)], 3)
    root = Path(hf_bpe.__file__).resolve().parents[1]
    digests = set()
    # Threads for the named pattern (issue 10): the manifest too is byte-identical (workers is not recorded).
    for run, (workers, seed) in enumerate([(1, "0"), (2, "1"), (3, "random"), (1, "random")]):
        path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": path}
        command = [sys.executable, "-c", _TRAIN_SCRIPT, str(corpus), str(workers), str(tmp_path / f"o{run}")]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        digests.add(done.stdout.strip())
    assert len(digests) == 1


def test_manifest_determinism_row_order(tmp_path):
    rows = [f"{w} {w}s {w}ing\n" for w in ("walk", "talk", "jump", "run", "read", "lead")] * 7 + LINES
    first = _train_folder(tmp_path / "a", rows)
    second = _train_folder(tmp_path / "b", list(reversed(rows)))
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_versions_read_as_importlib_metadata_reads_them(tmp_path, monkeypatch):
    # The fast lookup of the dependencies' versions (no `email` import) gives what importlib.metadata gives: for the
    # installed ones, and for a directory put first on sys.path that holds a stale and an odd dist-info.
    from importlib import metadata

    from hf_bpe.formats import manifest

    installed = manifest.versions()
    assert all(installed[name] == metadata.version(name) for name in manifest.DEPENDENCIES)
    site = tmp_path / "site"
    (site / "Regex-9.9.dist-info").mkdir(parents=True)
    (site / "Regex-9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: regex\nVersion:  9.9.post1 \n\n")
    (site / "tokenizers-1.0.egg-info").mkdir()
    (site / "tokenizers-1.0.egg-info" / "PKG-INFO").write_text("Name: tokenizers\r\nversion: 1.0\r\n\r\nVersion: 2\n")
    (site / "datasets-0.1.dist-info").mkdir()  # no metadata file: importlib.metadata has the last word
    monkeypatch.syspath_prepend(os.fspath(site))
    metadata.FastPath.__new__.cache_clear()  # importlib.metadata caches directory listings
    fresh = manifest.versions()
    for name in manifest.DEPENDENCIES:
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert fresh[name] == expected, name
    assert fresh["regex"] == "9.9.post1 " and fresh["tokenizers"] == "1.0"
