"""Parity-aware BPE: the reference equals the fast loop, and both equal tokenizers' ParityBpeTrainer, file for file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from helpers import udhr
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.errors import InputError
from hf_bpe.tools.peers import train_tokenizers_parity
from hf_bpe.training.parity.parity import StallWarning, train_parity
from hf_bpe.training.parity.reference import train_parity_reference
from hf_bpe.training.parity.trainer import train_parity_fast

ROOT = Path(__file__).resolve().parents[1]

# -- the reference and the fast loop --------------------------------------------------------------------------------

_WORD = st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b" ", b"\xc3\xa9", b"\xe4\xb8\xad"]), min_size=1,
                 max_size=6).map(b"".join)
_TABLE = st.dictionaries(_WORD, st.integers(1, 6), max_size=8)


@st.composite
def parity_cases(draw: st.DrawFn) -> tuple[list[dict[bytes, int]], list[dict[bytes, int]] | None, dict]:
    """Languages (some empty), optional dev sets, and options of every kind, ties likely."""
    n = draw(st.integers(1, 5))
    languages = draw(st.lists(_TABLE, min_size=n, max_size=n))
    dev = draw(st.none() | st.lists(_TABLE, min_size=n, max_size=n))
    options = {
        "num_merges": draw(st.integers(0, 25)),
        "variant": draw(st.sampled_from(["base", "window"])),
        "window_size": draw(st.integers(1, 6)),
        "alpha": draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])),
        "global_merges": draw(st.sampled_from([0, 0, 1, 3])),
        "min_frequency": draw(st.sampled_from([0, 0, 2, 4])),
        "total_symbols": draw(st.booleans()),
        "special_tokens": draw(st.sampled_from([(), ("<s>",), ("a", "<s>"), ("ab", "c", "ab"), ("Ā",)])),
        "all_bytes": draw(st.booleans()),
    }
    if dev is None and draw(st.booleans()):
        options["ratio"] = tuple(draw(st.lists(st.sampled_from([0.5, 1.0, 1.3, 2.0, 2.57]), min_size=n, max_size=n)))
    return languages, dev, options


@settings(max_examples=300)
@given(parity_cases())
def test_parity_fast_loop_equals_reference(case) -> None:
    languages, dev, options = case
    assert train_parity_fast(languages, dev, **options) == train_parity_reference(languages, dev, **options)


def _merges(result) -> list[str]:
    return [result.vocab[a] + " " + result.vocab[b] for a, b, _ in result.merges]


# The unit cases of tokenizers' parity_trainer.rs, with their expected merges.
@pytest.mark.parametrize("train_fn", [train_parity_reference, train_parity_fast])
@pytest.mark.parametrize(("languages", "dev", "options", "expected"), [
    ([{b"aabb": 10}, {b"ccdd": 10}], None, {"num_merges": 6}, ["b b", "d d", "a bb", "c dd", "a abb", "c cdd"]),
    ([{b"ab": 10}, {b"cd": 5}], [{b"ab": 1}, {b"cd": 10}], {"num_merges": 2}, ["c d", "a b"]),
    ([{b"aabb": 100}, {b"ccdd": 1}], None, {"num_merges": 6, "variant": "window", "window_size": 2, "alpha": 1.0},
     ["b b", "a bb", "d d", "a abb", "c dd", "c cdd"]),
    ([{b"ab": 10}, {b"cdef": 10}], None, {"num_merges": 10}, ["e f", "d ef", "a b", "c def"]),
    ([{b"ab": 5, b"cd": 1}, {b"ab": 1, b"cd": 5}], None, {"num_merges": 2, "global_merges": 1}, ["c d", "a b"]),
])
def test_parity_rust_unit_cases(train_fn, languages, dev, options, expected) -> None:
    assert _merges(train_fn(languages, dev, min_frequency=1, **options)) == expected


@pytest.mark.parametrize("train_fn", [train_parity_reference, train_parity_fast])
def test_parity_stall_where_tokenizers_never_returns(train_fn) -> None:
    # Three languages, the last two run out at once; language 0 then holds more than alpha / 3 of the window and
    # tokenizers' window search returns to it forever. hf_bpe goes on serving language 0.
    languages = [{b"abcdefghijkl": 9}, {b"xy": 1}, {b"zw": 1}]
    result = train_fn(languages, None, num_merges=12, variant="window", window_size=3, alpha=1.0)
    assert result.stalls > 0
    assert len(result.merges) == 12
    # base + ratio with an empty language after language 0: tokenizers chooses the exhausted language 0 forever.
    result = train_fn([{b"ab": 3}, {}], None, num_merges=5, ratio=(1.0, 1.0))
    assert (_merges(result), result.stalls) == (["a b"], 1)


# -- against tokenizers ---------------------------------------------------------------------------------------------

def assert_same_folder(model: hf_bpe.BPEModel, tokenizer, tmp_path: Path) -> None:
    """vocab.json, merges.txt and tokenizer.json byte-identical to what tokenizers writes."""
    ours = model.save(tmp_path / "ours")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    tokenizer.model.save(str(theirs))
    for name in ("vocab.json", "merges.txt"):
        assert (ours / name).read_text("utf-8") == (theirs / name).read_text("utf-8"), name
    assert (ours / "tokenizer.json").read_text("utf-8") == tokenizer.to_str()


def both(tmp_path: Path, languages: dict[str, list[str]], *, dev: dict[str, list[str]] | None = None,
         ratio: dict[str, float] | None = None, special_tokens=(), **options) -> hf_bpe.BPEModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small corpora run out of pairs
        model = train_parity(languages, dev=dev, ratio=ratio, special_tokens=special_tokens, show_progress=False,
                             **options)
    tokenizer = train_tokenizers_parity(list(languages.values()), dev=None if dev is None else list(dev.values()),
                                        ratio=None if ratio is None else [ratio[k] for k in languages],
                                        special_tokens=special_tokens, **options)
    assert_same_folder(model, tokenizer, tmp_path)
    return model


_TEXT = st.lists(st.sampled_from(["ab", "ba", "abc", "c", " ", "  ", "é", "中文", "x!", "\n", "aa", "ab ab", "<s>"]),
                 max_size=8).map("".join)


@pytest.mark.crossval
@settings(max_examples=150)
@given(st.lists(st.lists(_TEXT, min_size=1, max_size=5), min_size=1, max_size=4), st.data())
def test_parity_equals_tokenizers_on_generated_texts(tmp_path_factory, texts, data) -> None:
    names = [f"l{i}" for i in range(len(texts))]
    languages = dict(zip(names, texts))
    mode = data.draw(st.sampled_from(["neither", "dev", "ratio"]))
    dev = {n: data.draw(st.lists(_TEXT, max_size=4)) for n in names} if mode == "dev" else None
    ratio = {n: data.draw(st.sampled_from([0.7, 1.0, 2.0])) for n in names} if mode == "ratio" else None
    options = {"num_merges": data.draw(st.integers(0, 30)), "variant": data.draw(st.sampled_from(["base", "window"])),
               "window_size": data.draw(st.integers(1, 5)), "alpha": data.draw(st.sampled_from([0.5, 1.0, 2.0])),
               "global_merges": data.draw(st.sampled_from([0, 2])), "min_frequency": data.draw(st.sampled_from([0, 2])),
               "total_symbols": data.draw(st.booleans())}
    specials = data.draw(st.sampled_from([(), ("<s>",), ("a", "<|x|>")]))
    options["all_bytes"] = data.draw(st.booleans())
    # Only where tokenizers returns (no stall: it never returns otherwise) and there is text (else hf_bpe refuses).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            train_parity(languages, dev=dev, ratio=ratio, special_tokens=specials, show_progress=False, **options)
        except InputError:
            assume(False)
    assume(not any(issubclass(w.category, StallWarning) for w in caught))
    both(tmp_path_factory.mktemp("gen"), languages, dev=dev, ratio=ratio, special_tokens=specials, **options)


# -- real multilingual text -----------------------------------------------------------------------------------------

# Latin, Cyrillic, Devanagari, Arabic: training on the first 60 articles, the rest as the (parallel) dev set.
_SCRIPTS = ["eng", "rus", "hin", "arb"]
# Rates proportional to the languages' UTF-8 lengths on parallel text (the trainer's advice), one way round.
_RATIOS = {"eng": 1.0, "rus": 1.9, "hin": 2.6, "arb": 1.8}


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("variant", ["base", "window"])
@pytest.mark.parametrize("mode", ["dev", "ratio", "neither"])
@pytest.mark.parametrize("global_merges", [0, 25])
def test_parity_equals_tokenizers_on_udhr(tmp_path, shared_data, variant, mode, global_merges) -> None:
    lines = udhr(shared_data, _SCRIPTS)
    languages = {code: lines[code][:60] for code in _SCRIPTS}
    dev = {code: lines[code][60:] for code in _SCRIPTS} if mode == "dev" else None
    ratio = _RATIOS if mode == "ratio" else None
    model = both(tmp_path, languages, dev=dev, ratio=ratio, num_merges=400, variant=variant, window_size=20,
                 alpha=1.5, global_merges=global_merges, special_tokens=("<|endoftext|>",))
    assert len(model.merges) == 400


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("variant", ["base", "window"])
def test_parity_equals_tokenizers_on_genesis_files(tmp_path, shared_data, variant) -> None:
    # Files as `hf-bpe train FILE` reads them (each line with its newline): 4 Latin-script Genesis slices, and the
    # UDHR in Chinese and Greek; min_frequency and total_symbols; tokenizers gets the same lines.
    folder = shared_data / "corpora" / "multi" / "genesis"
    texts = {name: (folder / f"{name}.txt").read_bytes()[:30000].decode("utf-8", "ignore").splitlines(True)[:-1]
             for name in ("english-web", "french", "german", "finnish")}
    texts.update(udhr(shared_data, ["cmn_hans", "ell_monotonic"]))
    paths = {}
    for name, lines in texts.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("".join(lines), encoding="utf-8")
    model = train_parity(paths, num_merges=900, variant=variant, min_frequency=2, total_symbols=True,
                         all_bytes=False, show_progress=False)
    tokenizer = train_tokenizers_parity(list(texts.values()), num_merges=900, variant=variant, min_frequency=2,
                                        total_symbols=True, all_bytes=False)
    assert_same_folder(model, tokenizer, tmp_path)


@pytest.mark.crossval
@pytest.mark.shared_data
def test_parity_equals_tokenizers_with_prefix_space_and_gpt4_pattern(tmp_path, shared_data) -> None:
    lines = udhr(shared_data, ["eng", "ell_monotonic", "cmn_hant"])
    languages = {code: lines[code][:50] for code in lines}
    dev = {code: lines[code][50:] for code in lines}
    for pattern, add_prefix_space in (("gpt2", True), ("gpt4", False)):
        both(tmp_path / f"{pattern}-{add_prefix_space}", languages, dev=dev, num_merges=300, variant="window",
             pattern=pattern, add_prefix_space=add_prefix_space)


@pytest.mark.shared_data
def test_parity_same_output_whatever_workers_and_hash_seed(tmp_path, shared_data) -> None:
    lines = udhr(shared_data, _SCRIPTS)
    languages = {code: lines[code][:40] for code in _SCRIPTS}
    for workers in (1, 2):
        train_parity(languages, num_merges=300, variant="window", workers=workers,
                     show_progress=False).save(tmp_path / f"w{workers}")
    script = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); import hf_bpe; "
              "langs = {p.stem: pathlib.Path(p).read_text('utf-8').splitlines(True) for p in "
              "sorted(pathlib.Path(sys.argv[2]).glob('*.txt'))}; "
              "hf_bpe.train_parity(langs, num_merges=300, variant='window', show_progress=False).save(sys.argv[3])")
    (tmp_path / "in").mkdir()
    for code in _SCRIPTS:  # file names sort in the language order
        (tmp_path / "in" / f"{_SCRIPTS.index(code)}{code}.txt").write_text("".join(languages[code]), "utf-8")
    for seed in ("0", "12345"):
        subprocess.run([sys.executable, "-c", script, str(ROOT), str(tmp_path / "in"), str(tmp_path / f"s{seed}")],
                       check=True, env={**os.environ, "PYTHONHASHSEED": seed})
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        expected = (tmp_path / "w1" / name).read_bytes()
        assert all((tmp_path / d / name).read_bytes() == expected for d in ("w2", "s0", "s12345")), name


# -- options --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "error", "match"), [
    ({"variant": "windowed"}, ValueError, "variant must be one of"),
    ({"ratio": {"en": 1.0}}, ValueError, r"missing \['de'\]"),
    ({"ratio": {"en": 1.0, "de": 1.0, "fr": 2.0}}, ValueError, r"unknown \['fr'\]"),
    ({"ratio": {"en": 1.0, "de": 0}}, ValueError, r"ratio\['de'\] must be a positive finite number, got 0"),
    ({"ratio": {"en": 1.0, "de": float("nan")}}, ValueError, "positive finite"),
    ({"dev": {"en": ["x"]}}, ValueError, r"dev must name exactly.*missing \['de'\]"),
    ({"dev": {"en": ["x"], "de": ["y"]}, "ratio": {"en": 1.0, "de": 1.0}}, ValueError, "not both"),
    ({"dev": ["x"]}, TypeError, "dev must be None or a mapping"),
    ({"window_size": 0}, ValueError, "window_size must be an int >= 1, got 0"),
    ({"alpha": -1.0}, ValueError, "alpha must be a positive finite number, got -1.0"),
    ({"num_merges": -1}, ValueError, "num_merges must be an int >= 0"),
    ({"num_merges": 1.5}, ValueError, "num_merges must be an int >= 0, got 1.5"),
    ({"global_merges": None}, ValueError, "global_merges"),
    ({"min_frequency": True}, ValueError, "min_frequency"),
    ({"total_symbols": "yes"}, TypeError, "total_symbols must be a bool"),
    ({"special_tokens": "<s>"}, TypeError, "special_tokens must be a list of str"),
    ({"all_bytes": 1}, TypeError, "all_bytes must be a bool"),
])
def test_parity_bad_options_are_clear_errors(options, error, match) -> None:
    options = {"num_merges": 10, **options}
    with pytest.raises(error, match=match):
        train_parity({"en": ["hello"], "de": ["hallo"]}, show_progress=False, **options)


@pytest.mark.parametrize("languages", [{}, ["en"], {"": ["x"]}, {1: ["x"]}])
def test_parity_bad_languages(languages) -> None:
    with pytest.raises(TypeError, match="language"):
        train_parity(languages, num_merges=5, show_progress=False)


def test_parity_empty_corpora() -> None:
    with pytest.raises(InputError, match="every training corpus is empty"):
        train_parity({"en": [""], "de": []}, num_merges=5, show_progress=False)
    # One empty language is fine (tokenizers allows it too); too few pairs is a warning.
    with pytest.warns(UserWarning, match="ran out of mergeable pairs"):
        model = train_parity({"en": ["ab ab"], "de": []}, num_merges=5, show_progress=False)
    assert [a + b for a, b in model.merges] == [b"ab", b" ab"]


def test_parity_is_exported() -> None:
    assert hf_bpe.train_parity is train_parity
    assert "train_parity" in hf_bpe.__all__


# -- command line ---------------------------------------------------------------------------------------------------

def _write_languages(tmp_path: Path) -> dict[str, Path]:
    texts = {"en": "the cat sat on the mat\nthe dog ate\n",
             "ru": "кот сидел на коврике\nсобака ела\n",
             "hi": "बिल्ली चटाई पर बैठी\nकुत्ते ने खाया\n"}
    paths = {}
    for name, text in texts.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text * 3, encoding="utf-8")
    return paths


@pytest.mark.crossval
def test_parity_cli_equals_tokenizers(tmp_path, capsys) -> None:
    from hf_bpe.cli import main

    paths = _write_languages(tmp_path)
    argv = ["train", "--algorithm", "parity", "--num-merges", "40", "--variant", "window", "--window-size", "4",
            "--alpha", "1.5", "--global-merges", "3", "--special-token", "<s>", "--out", str(tmp_path / "out"),
            "--quiet"]
    for name, path in paths.items():
        argv += ["--language", f"{name}={path}", "--ratio", f"{name}={ {'en': 1, 'ru': 1.8, 'hi': 2.5}[name]}"]
    assert main(argv) == 0
    assert "merges to" in capsys.readouterr().err
    lines = [path.read_text("utf-8").splitlines(True) for path in paths.values()]
    tokenizer = train_tokenizers_parity(lines, ratio=[1, 1.8, 2.5], num_merges=40, variant="window", window_size=4,
                                        alpha=1.5, global_merges=3, special_tokens=["<s>"])
    assert (tmp_path / "out" / "tokenizer.json").read_text("utf-8") == tokenizer.to_str()
    # --dev, several files per language, --total-symbols; the folder is refused without --force.
    argv = ["train", "--algorithm", "parity", "--num-merges", "300", "--total-symbols", "--seen-bytes-only",
            "--out", str(tmp_path / "out"), "--quiet"]
    for name, path in paths.items():
        argv += ["--language", f"{name}={path}", "--language", f"{name}={path}", "--dev", f"{name}={path}"]
    assert main(argv) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    tokenizer = train_tokenizers_parity([x * 2 for x in lines], dev=lines, num_merges=300, total_symbols=True,
                                        all_bytes=False)
    assert (tmp_path / "out" / "tokenizer.json").read_text("utf-8") == tokenizer.to_str()


@pytest.mark.parametrize(("extra", "message"), [
    ([], "needs --language NAME=FILE"),
    (["--language", "en"], "expected NAME=VALUE"),
    (["--language", "en=missing.txt"], "'missing.txt' is not a file"),
    (["--language", "en=EN", "--ratio", "en=fast"], "expected a number"),
    (["--language", "en=EN", "--ratio", "en=1", "--ratio", "en=2"], "given twice"),
    (["--language", "en=EN", "--ratio", "de=1"], r"ratio must name exactly the languages \['en'\]"),
    (["--language", "en=EN", "--vocab-size", "300"], "--vocab-size cannot be used with --algorithm parity"),
    (["--language", "en=EN", "EN"], "FILE arguments cannot be used with --algorithm parity"),
])
def test_parity_cli_errors_are_one_line(tmp_path, capsys, extra, message) -> None:
    from hf_bpe.cli import main

    path = _write_languages(tmp_path)["en"]
    extra = [str(path) if x == "EN" else x.replace("=EN", f"={path}") for x in extra]
    argv = ["train", "--algorithm", "parity", "--num-merges", "5", "--out", str(tmp_path / "o"), "--quiet", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and re.search(message, err), err


def test_parity_cli_flags_need_the_algorithm(tmp_path, capsys) -> None:
    from hf_bpe.cli import main

    path = _write_languages(tmp_path)["en"]
    assert main(["train", str(path), "--variant", "window", "--out", str(tmp_path / "o")]) == 2
    assert "--variant apply to --algorithm parity" in capsys.readouterr().err
    assert main(["train", "--algorithm", "parity", "--language", f"en={path}", "--out", str(tmp_path / "o")]) == 2
    assert "needs --num-merges" in capsys.readouterr().err


@pytest.mark.crossval
@pytest.mark.shared_data
def test_parity_folder_encodes_as_tokenizers_in_transformers(tmp_path, shared_data) -> None:
    # A datasets Dataset per language; the saved folder through AutoTokenizer encodes held-out text as tokenizers'
    # trained tokenizer does.
    from datasets import Dataset
    from transformers import AutoTokenizer

    lines = udhr(shared_data, _SCRIPTS)
    languages = {code: Dataset.from_dict({"text": lines[code][:60]}) for code in _SCRIPTS}
    model = train_parity(languages, ratio=_RATIOS, num_merges=500, variant="window", show_progress=False)
    model.save(tmp_path / "tok")
    tokenizer = train_tokenizers_parity([lines[code][:60] for code in _SCRIPTS], ratio=list(_RATIOS.values()),
                                        num_merges=500, variant="window")
    auto = AutoTokenizer.from_pretrained(tmp_path / "tok")
    for code in _SCRIPTS:
        for line in lines[code][60:70]:
            assert auto.encode(line) == tokenizer.encode(line).ids == model.encode(line)


def test_parity_provenance_and_verify(tmp_path) -> None:
    model = train_parity({"en": ["hello world"] * 3, "de": ["hallo welt"] * 3}, num_merges=5, variant="window",
                         show_progress=False)
    folder = model.save(tmp_path / "tok")
    options = json.loads((folder / "hf_bpe_manifest.json").read_text())["options"]
    assert options["algorithm"] == "parity" and options["languages"] == ["en", "de"]
    assert options["variant"] == "window" and options["num_merges"] == 5
    report = hf_bpe.verify(folder)
    assert report.ok, report


@pytest.mark.parametrize("train_fn", [train_parity_reference, train_parity_fast])
def test_parity_counts_are_64_bit(train_fn) -> None:
    # Word counts past 2**32 (a pair count of 2**41): no wrap, and the order follows the true counts.
    big = 2**40
    result = train_fn([{b"ab": 2 * big, b"cd": big + 1}, {b"ef": 3}], None, num_merges=3, variant="base")
    assert _merges(result) == ["a b", "c d", "e f"]
