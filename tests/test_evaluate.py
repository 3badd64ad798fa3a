"""hf-bpe evaluate: the measures (hypothesis), exact counts against each tokenizer's own library on real text, the
report files, report.html's token spans reassembling each sample line, and the command line."""

from __future__ import annotations

import html
import io
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.model.bpe import BPEModel
from hf_bpe.tools.evaluate import (
    count_words,
    evaluate,
    gini,
    parity_ratios,
    renyi_efficiency,
    renyi_entropy,
    split_documents,
    text_sizes,
)
from hf_bpe.tools.evaluate.html import token_spans
from hf_bpe.tools.evaluate.run import measure
from hf_bpe.tools.evaluate.subjects import load_subject, spans_from_pieces

GENESIS = ("english-kjv", "english-web", "finnish", "french", "german", "lolcat", "portuguese", "swedish")

# -- the measures --------------------------------------------------------------------------------------------------

counts_lists = st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=60)


@given(st.lists(st.floats(min_value=0.001, max_value=1e6), min_size=1, max_size=40), st.integers(1, 30))
def test_gini_of_equal_values_is_zero_and_of_any_values_is_scale_free(values, n):
    assert gini([values[0]] * n) == pytest.approx(0.0, abs=1e-12)
    g = gini(values)
    assert 0.0 <= g <= (len(values) - 1) / len(values) + 1e-12
    assert gini([v * 7.5 for v in values]) == pytest.approx(g, abs=1e-9)
    # The definition: mean absolute difference over twice the mean.
    mean = sum(values) / len(values)
    pairs = sum(abs(a - b) for a in values for b in values) / len(values) ** 2
    assert g == pytest.approx(pairs / (2 * mean), rel=1e-9, abs=1e-12)


def test_gini_extremes_and_bad_values():
    assert gini([0, 0, 0, 5]) == pytest.approx(0.75)
    assert gini([]) is None and gini([0, 0]) is None
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        gini([1.0, -2.0])


@given(counts_lists, st.integers(0, 100))
def test_renyi_efficiency_lies_in_zero_one(counts, extra):
    distinct = sum(1 for c in counts if c)
    if not distinct:
        assert renyi_efficiency(counts, vocab_size=1 + extra) is None
        return
    vocab = distinct + extra
    value = renyi_efficiency(counts, vocab_size=vocab)
    if vocab == 1:
        assert value is None
        return
    assert 0.0 <= value <= 1.0
    # The entropy never exceeds log of the number of outcomes, and order 2.5 never exceeds Shannon (order 1).
    assert renyi_entropy(counts) <= math.log(distinct) + 1e-9
    assert renyi_entropy(counts) <= renyi_entropy(counts, order=1) + 1e-9


@given(st.integers(2, 500), st.integers(1, 1000))
def test_renyi_efficiency_of_a_uniform_distribution_over_the_vocabulary_is_one(size, count):
    assert renyi_efficiency([count] * size, vocab_size=size) == pytest.approx(1.0, abs=1e-12)
    assert renyi_efficiency([count] * size, vocab_size=size * size) == pytest.approx(0.5, abs=1e-12)


def test_renyi_entropy_matches_its_definition_and_refuses_bad_input():
    counts = [5, 3, 2]
    p = [c / 10 for c in counts]
    assert renyi_entropy(counts) == pytest.approx(math.log(sum(x**2.5 for x in p)) / (1 - 2.5))
    assert renyi_entropy(counts, order=1) == pytest.approx(-sum(x * math.log(x) for x in p))
    assert renyi_entropy(counts, order=0) == pytest.approx(math.log(3))
    with pytest.raises(ValueError, match="order must be"):
        renyi_entropy(counts, order=-1)
    with pytest.raises(ValueError, match="more than vocab_size=2"):
        renyi_efficiency(counts, vocab_size=2)
    with pytest.raises(ValueError, match="integers >= 0"):
        renyi_entropy([1, -1])


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(texts, texts)
def test_sizes_and_documents_add_up_across_concatenated_texts(a, b):
    joined = a + "\n" + b  # a line end between them: no word or document spans the join
    first, second = text_sizes(a + "\n"), text_sizes(b)
    assert text_sizes(joined) == tuple(x + y for x, y in zip(first, second))
    assert split_documents(joined) == split_documents(a + "\n") + split_documents(b)
    assert "".join(split_documents(joined)) == joined
    assert count_words(joined) == len(joined.split())


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.integers(1, 10**6), min_size=1, max_size=8))
def test_parity_ratios_are_relative_to_the_reference(tokens):
    reference = next(iter(tokens))
    ratios = parity_ratios(tokens, reference)
    assert ratios[reference] == 1.0
    assert gini(list(ratios.values())) == pytest.approx(gini(list(tokens.values())), abs=1e-9)
    with pytest.raises(ValueError, match="not one of the texts"):
        parity_ratios(tokens, "\x00missing")


# -- spans and report.html ---------------------------------------------------------------------------------------

_SPAN = re.compile(r'<span class="(?:t[^"]*|g)"(?: title="([^"]*)")?(?: data-bytes="[^"]*")?>(.*?)</span>', re.S)
_LINE = re.compile(r'<div class="toks" data-text="([^"]*)" data-line="(\d+)" data-tokenizer="([^"]*)">(.*?)</div>',
                   re.S)


def _parse_spans(fragment: str) -> tuple[str, list[int]]:
    """The text the spans of one line hold, and the token ids their titles name."""
    text, ids = [], []
    for title, body in _SPAN.findall(fragment):
        assert "<" not in body  # nothing but escaped text inside a span
        text.append(html.unescape(body))
        if title.startswith("id "):
            ids.append(int(title.split()[1]))
    return "".join(text), ids


@pytest.fixture(scope="module")
def small_model() -> BPEModel:
    corpus = ["héllo wörld 你好 😀 naïve café <&> \"q\""] * 20 + ["日本語のテキスト、絵文字 🙂👍🏽"] * 5
    return hf_bpe.train(corpus, vocab_size=300, show_progress=False, special_tokens=["<|end|>"])


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), max_codepoint=0x1FAFF), max_size=40))
def test_byte_level_spans_reassemble_every_line_and_their_html_too(small_model, line):
    subject = load_subject("small", small_model)
    spans = subject.spans(line)
    ids = small_model.encode(line, allowed_special="all")
    assert [s.token_id for s in spans] == ids
    assert b"".join(s.surface for s in spans) == line.encode("utf-8")
    assert all(s.surface.decode("utf-8") is not None for s in spans)  # every surface is whole characters
    text, shown = _parse_spans(token_spans(spans))
    assert text == line and shown == ids


def test_spans_give_a_split_character_to_the_token_that_completes_it():
    pieces = [(1, b"a\xe4"), (2, b"\xb8"), (3, b"\xadb")]  # "a中b" with 中 split over three tokens
    spans = spans_from_pieces("a中b".encode(), pieces)
    assert [s.surface for s in spans] == [b"a", b"", "中b".encode()]
    assert spans_from_pieces(b"xyz", pieces) is None
    fragment = token_spans(spans)
    assert 'class="t a1 p"' in fragment and 'data-bytes="b8"' in fragment and "(bytes e4" not in fragment
    assert _parse_spans(fragment)[0] == "a中b"


# -- real text, each tokenizer against its own library -------------------------------------------------------------


def _lines(shared_data: Path, name: str, limit: int | None = None) -> str:
    text = (shared_data / "corpora" / "multi" / "genesis" / f"{name}.txt").read_text(encoding="utf-8")
    return text if limit is None else "".join(split_documents(text)[:limit])


@pytest.fixture(scope="module")
def genesis(shared_data: Path, tmp_path_factory) -> dict[str, Path]:
    """The eight parallel Genesis texts, and the opening of the Japanese novel (multi-byte characters, byte
    fallback), as files."""
    folder = tmp_path_factory.mktemp("texts")
    files = {}
    for name in GENESIS:
        files[name] = shared_data / "corpora" / "multi" / "genesis" / f"{name}.txt"
    novel = (shared_data / "corpora" / "multi" / "ja_wagahaiwa_nekodearu.txt").read_text(encoding="utf-8")
    files["japanese"] = folder / "ja.txt"
    files["japanese"].write_text("".join(split_documents(novel)[:400]), encoding="utf-8")
    return files


@pytest.fixture(scope="module")
def converted_llama2(shared_data: Path, tmp_path_factory) -> Path:
    """Llama 2's SentencePiece model as a tokenizer.json (not byte-level BPE: read by the tokenizers library)."""
    from hf_bpe.tools.convert import convert

    out = tmp_path_factory.mktemp("llama2-json")
    return convert(shared_data / "sentencepiece" / "llama2_tokenizer.model", to="tokenizers", out=out) \
        / "tokenizer.json"


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.crossval
def test_counts_equal_each_tokenizers_own_library_on_real_text(shared_data, genesis, converted_llama2):
    import sentencepiece
    import tiktoken
    from tokenizers import Tokenizer

    from hf_bpe.formats.tiktoken import load_tiktoken

    gpt2 = shared_data / "vocabs" / "gpt2"
    spm_file = shared_data / "sentencepiece" / "llama2_tokenizer.model"
    encoding = tiktoken.Encoding("gpt2", pat_str=PATTERNS["gpt2"],
                                 mergeable_ranks=load_tiktoken(shared_data / "tiktoken" / "gpt2.tiktoken"),
                                 special_tokens={"<|endoftext|>": 50256})
    fast = Tokenizer.from_file(str(gpt2 / "tokenizer.json"))
    llama_json = Tokenizer.from_file(str(converted_llama2))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_file))
    libraries = {  # each source, and its own library's encoding of one document
        "folder": (gpt2, lambda d: fast.encode(d, add_special_tokens=False).ids),
        "tokenizer.json": (gpt2 / "tokenizer.json", lambda d: fast.encode(d, add_special_tokens=False).ids),
        "tiktoken": (shared_data / "tiktoken" / "gpt2.tiktoken", lambda d: encoding.encode(d, allowed_special="all")),
        "sentencepiece": (spm_file, lambda d: sp.encode(d)),
        "tokenizers-unigram-json": (converted_llama2, lambda d: llama_json.encode(d, add_special_tokens=False).ids),
    }
    for label, (source, library) in libraries.items():
        subject = load_subject(label, source)
        for name, path in genesis.items():
            text = path.read_text(encoding="utf-8")
            row, counts = measure(subject, name, text)
            expected = Counter(i for d in split_documents(text) for i in library(d))
            assert counts == expected, (label, name)
            assert row["tokens"] == sum(expected.values()) and row["vocab_used"] == len(expected)
            assert row["bytes"] == path.stat().st_size and row["words"] == len(text.split())
    assert type(load_subject("x", converted_llama2)).__name__ == "TokenizersSubject"  # read by tokenizers itself
    # The folder (tokenizer.json + tokenizer.model, as hf-bpe train --algorithm sentencepiece writes) is read by
    # sentencepiece; a .tiktoken file that does not say its pattern needs one.
    assert type(load_subject("x", converted_llama2.parent)).__name__ == "SentencePieceSubject"
    with pytest.raises(ValueError, match="does not say how text is pre-tokenized"):
        load_subject("qwen", shared_data / "tiktoken" / "qwen_v1.tiktoken")
    assert load_subject("qwen", shared_data / "tiktoken" / "qwen_v1.tiktoken", pattern="gpt4").library.startswith(
        "hf_bpe")


@pytest.fixture(scope="module")
def real_report(shared_data, genesis, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "eval"
    tokenizers = {"gpt2": shared_data / "vocabs" / "gpt2", "llama2": shared_data / "sentencepiece" /
                  "llama2_tokenizer.model"}
    report = evaluate(tokenizers, genesis, reference="english-kjv", out=out, sample_lines=4)
    return out, report


@pytest.mark.shared_data
@pytest.mark.crossval
def test_report_rows_parity_and_files(real_report):
    out, report = real_report
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md", "report.png"]
    assert json.loads((out / "report.json").read_text(encoding="utf-8")) == json.loads(json.dumps(report))
    rows = {(r["tokenizer"], r["language"]): r for r in report["rows"]}
    assert len(rows) == 2 * 9
    for row in report["rows"]:
        assert {"tokenizer", "language", "bytes", "tokens", "words", "characters", "bytes_per_token",
                "tokens_per_word", "renyi_efficiency", "vocab_used_share", "unused_ids", "parity_ratio"} <= set(row)
        assert row["bytes_per_token"] == row["bytes"] / row["tokens"]
        assert row["tokens_per_word"] == row["tokens"] / row["words"]
        assert 0 < row["renyi_efficiency"] < 1 and 0 < row["vocab_used_share"] < 1
        assert row["unused_ids"] == row["vocab_size"] - row["vocab_used"]
    for entry in report["tokenizers"]:
        parity = entry["parity"]
        tokens = {lang: rows[entry["name"], lang]["tokens"] for lang in parity["ratios"]}
        assert parity["ratios"]["english-kjv"] == 1.0
        assert parity["ratios"]["finnish"] == tokens["finnish"] / tokens["english-kjv"]
        assert parity["gini"] == pytest.approx(gini(list(tokens.values())), abs=1e-12)
        assert len(entry["unused_examples"]) == 8 and entry["unused_ids"] > 0
    # gpt2 (English-trained) spends more tokens on Finnish than on English; Llama 2 too.
    assert rows["gpt2", "finnish"]["parity_ratio"] > 1.5 and rows["llama2", "finnish"]["parity_ratio"] > 1.4
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "| gpt2 | finnish | 202,347 | 26,597 | 91,896 |" in text and "![" in text and "## Definitions" in text


@pytest.mark.shared_data
@pytest.mark.crossval
def test_report_html_spans_reassemble_each_sample_line_with_the_librarys_ids(real_report, shared_data, genesis):
    import sentencepiece
    from tokenizers import Tokenizer

    out, _ = real_report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")  # self-contained
    fast = Tokenizer.from_file(str(shared_data / "vocabs" / "gpt2" / "tokenizer.json"))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(shared_data / "sentencepiece" / "llama2_tokenizer.model"))
    own = {"gpt2": lambda line: fast.encode(line, add_special_tokens=False).ids, "llama2": sp.encode}
    seen = Counter()
    for text_name, index, tokenizer, fragment in _LINE.findall(page):
        lines = [line for line in genesis[text_name].read_text(encoding="utf-8").split("\n") if line.strip()]
        expected = lines[int(index)].rstrip("\r")[:300]
        text, ids = _parse_spans(fragment)
        assert text == expected, (text_name, index, tokenizer)
        assert ids == own[tokenizer](expected)
        seen[tokenizer] += 1
    assert seen == {"gpt2": 9 * 4, "llama2": 9 * 4}
    assert 'class="t a0 p"' in page or 'class="t a1 p"' in page  # Japanese: tokens holding part of a character


# -- errors, overwrite, the command line -----------------------------------------------------------------------


@pytest.fixture
def two_texts(tmp_path) -> dict[str, Path]:
    (tmp_path / "en.txt").write_text("the cat sat on the mat\nthe end\n", encoding="utf-8")
    (tmp_path / "de.txt").write_text("die Katze sass auf der Matte\ndas Ende\n", encoding="utf-8")
    return {"en": tmp_path / "en.txt", "de": tmp_path / "de.txt"}


def test_evaluate_refuses_bad_input_and_overwrites_only_with_force(tmp_path, two_texts):
    model = BPEModel.bytes_only()
    with pytest.raises(ValueError, match=r"reference must name one of the texts \['en', 'de'\], got 'fr'"):
        evaluate({"b": model}, two_texts, reference="fr")
    with pytest.raises(FileNotFoundError, match="'nope.txt' is not a file"):
        evaluate({"b": model}, {"x": "nope.txt"})
    with pytest.raises(TypeError, match="a path .* or a BPEModel, got int 3"):
        evaluate({"b": 3}, two_texts)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="is not UTF-8 .*iconv"):
        evaluate({"b": model}, {"fr": tmp_path / "latin1.txt"})
    out = tmp_path / "out"
    evaluate({"b": model}, two_texts, out=out)
    before = (out / "report.json").read_bytes()
    with pytest.raises(FileExistsError, match="pass force=True"):
        evaluate({"b": model}, two_texts, out=out, reference="de")
    assert (out / "report.json").read_bytes() == before
    evaluate({"b": model}, two_texts, out=out, reference="de", force=True)
    assert json.loads((out / "report.json").read_text())["options"]["reference"] == "de"


def test_evaluate_without_matplotlib_writes_the_rest(tmp_path, two_texts, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    report = evaluate({"b": BPEModel.bytes_only()}, two_texts, out=tmp_path / "out")
    assert report["files"]["chart"] is None and not (tmp_path / "out" / "report.png").exists()
    assert "](report.png)" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_report_png_draws_one_colour_per_tokenizer(tmp_path, two_texts, small_model):
    from PIL import Image

    evaluate({"bytes": BPEModel.bytes_only(), "small": small_model}, two_texts, out=tmp_path / "out")
    image = Image.open(io.BytesIO((tmp_path / "out" / "report.png").read_bytes())).convert("RGB")
    colours = {c for _, c in image.getcolors(1 << 20)}
    assert {(31, 119, 180), (255, 127, 14)} <= colours


def test_cli_evaluate_writes_the_report_and_prints_the_table(tmp_path, two_texts, small_model, capsys):
    small_model.save(tmp_path / "small")
    argv = ["evaluate", str(tmp_path / "small"), "--text", f"en={two_texts['en']}", "--text",
            f"de={two_texts['de']}", "--out", str(tmp_path / "eval"), "--sample-lines", "1"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("| tokenizer | text | bytes |") and "| small | de |" in captured.out
    assert "wrote report.json, report.md, report.html" in captured.err
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and "already holds report.json" in err and err.count("\n") == 1
    assert main([*argv, "--force"]) == 0
    capsys.readouterr()
    for bad, message in ((["--text", "en"], "--text 'en' is not NAME=FILE"),
                         (["--text", "en=a", "--text", "en=b"], "the name 'en' is given twice"),
                         (["--text", f"en={two_texts['en']}", "--reference", "fr"], "reference must name")):
        assert main(["evaluate", str(tmp_path / "small"), *bad, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error: ") and message in err and err.count("\n") == 1
    assert main(["evaluate", f"mine={tmp_path / 'small'}", str(tmp_path / "small"), "--text",
                 f"en={two_texts['en']}", "--out", str(tmp_path / "y")]) == 2
    assert "name every TOKENIZER" in capsys.readouterr().err


def test_hf_bpe_exports_evaluate():
    assert "evaluate" in hf_bpe.__all__ and hf_bpe.evaluate is evaluate


@pytest.mark.shared_data
@pytest.mark.crossval
def test_tokenizers_library_spans_reassemble_lines_with_its_own_ids(converted_llama2, genesis):
    from tokenizers import Tokenizer

    subject = load_subject("llama2-json", converted_llama2)
    own = Tokenizer.from_file(str(converted_llama2))
    for path in genesis.values():
        for line in [x for x in path.read_text(encoding="utf-8").split("\n") if x.strip()][:20]:
            spans = subject.spans(line)
            text, ids = _parse_spans(token_spans(spans))
            assert text == line and ids == own.encode(line, add_special_tokens=False).ids


def test_spans_of_a_tokenizer_that_drops_text_mark_the_gaps(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(["the cat sat on the mat", "a cat"] * 5,
                                  trainers.WordPieceTrainer(vocab_size=60, special_tokens=["[UNK]"]))
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    subject = load_subject("wordpiece", tmp_path / "tokenizer.json")
    line = "the  cat, 中 sat"
    spans = subject.spans(line)
    assert b"".join(s.surface for s in spans) == line.encode()
    assert [s.surface for s in spans if s.token_id is None] == [b"  ", b" ", b" "]  # whitespace it drops
    fragment = token_spans(spans)
    assert fragment.count('class="g"') == 3 and _parse_spans(fragment) == (line, tokenizer.encode(line).ids)
