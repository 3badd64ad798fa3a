"""The named recipes reproduce the published trainers: golden merges and ids, the PyPI subword-nmt, the CLI."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.errors import InputError
from hf_bpe.formats.bpe_codes import dump_codes
from hf_bpe.model.bpe import BPEModel
from hf_bpe.model.classic import ClassicModel
from hf_bpe.model.segment import tokenize_longest_first
from hf_bpe.training.classic.recipes import RECIPES, train_recipe

PAPER_WORDS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]


def test_recipes_sennrich_paper_golden() -> None:
    model = hf_bpe.train_classic(PAPER_WORDS, recipe="sennrich-paper", num_merges=15, show_progress=False)
    assert [f"{a} {b}" for a, b in model.merge_pairs] == [
        "e s", "es t", "est </w>", "l o", "lo w", "n e", "ne w", "new est</w>", "low </w>", "w i", "wi d",
        "wid est</w>", "low e", "lowe r", "lower </w>"]
    vocab = ["errrr</w>", "tain</w>", "moun", "est</w>", "high", "the</w>", "a</w>"]
    pieces = [p for w in "the highest mountain".split() for p in tokenize_longest_first(w + "</w>", vocab)]
    assert pieces == ["the</w>", "high", "est</w>", "moun", "tain</w>"]


def test_recipes_subword_nmt_dictionary_golden() -> None:
    # subword-nmt 0.3.8 on the paper's dictionary: 13 codes, then no pair reaches min frequency 2.
    model = train_recipe(PAPER_WORDS, "subword-nmt", num_merges=100, show_progress=False)
    assert [f"{a} {b}" for a, b in model.merge_pairs] == [
        "s t</w>", "e st</w>", "l o", "w est</w>", "n e", "ne west</w>", "lo w</w>", "w i", "wi d", "wid est</w>",
        "w e", "we r</w>", "lo wer</w>"]


@pytest.mark.shared_data
def test_recipes_subword_nmt_reproduces_bpe_ref_and_apply(shared_data: Path, tmp_path: Path) -> None:
    seeds = shared_data / "seeds" / "subword_nmt"
    out = tmp_path / "nmt"
    assert main(["train", str(seeds / "corpus.en"), "--recipe", "subword-nmt", "--num-merges", "1000",
                 "--out", str(out), "--quiet"]) == 0
    assert (out / "bpe.codes").read_bytes() == (seeds / "bpe.ref").read_bytes()
    # A second run into the same folder is refused before training unless --force.
    assert main(["train", str(seeds / "corpus.en"), "--recipe", "subword-nmt", "--num-merges", "10",
                 "--out", str(out), "--quiet"]) == 2
    assert (out / "bpe.codes").read_bytes() == (seeds / "bpe.ref").read_bytes()
    model = ClassicModel.load(out)
    assert model.segment((seeds / "corpus.en").read_text(encoding="utf-8")) == (
        seeds / "corpus.bpe.ref.en").read_text(encoding="utf-8")
    assert model.segment("  iron cement  \n") == "  ir@@ on c@@ ement  \n"


@pytest.mark.crossval
@pytest.mark.shared_data
def test_recipes_subword_nmt_equals_pypi_package(shared_data: Path, tmp_path: Path, capsys) -> None:
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    # ~300 KB of other English: Shakespeare, news, reviews (not the corpus bpe.ref was learned on).
    raw = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[5_000_000:5_300_000]
    text = raw[raw.index(b"\n") + 1: raw.rindex(b"\n") + 1].decode("utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    expected = io.StringIO()
    with codecs.open(str(corpus), encoding="utf-8") as handle:
        learn_bpe.learn_bpe(handle, expected, 2000, min_frequency=2)
    assert main(["train", str(corpus), "--recipe", "subword-nmt", "--num-merges", "2000", "--out",
                 str(tmp_path / "m"), "--quiet"]) == 0
    assert (tmp_path / "m" / "bpe.codes").read_text(encoding="utf-8") == expected.getvalue()
    capsys.readouterr()
    assert main(["apply", "--model", str(tmp_path / "m"), str(corpus)]) == 0
    bpe = apply_bpe.BPE(io.StringIO(expected.getvalue()))
    assert capsys.readouterr().out == "".join(bpe.process_line(line) for line in text.splitlines(keepends=True))


@pytest.mark.crossval
@pytest.mark.shared_data
def test_recipes_subword_nmt_vocab_size_is_total_symbols(shared_data: Path) -> None:
    # --vocab-size N is subword-nmt's "-s N --total-symbols": N minus the distinct symbols before any merge.
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    path = shared_data / "seeds" / "subword_nmt" / "corpus.en"
    expected = io.StringIO()
    with codecs.open(str(path), encoding="utf-8") as handle:
        learn_bpe.learn_bpe(handle, expected, 1200, min_frequency=2, total_symbols=True)
    model = train_recipe(path, "subword-nmt", vocab_size=1200, show_progress=False)
    assert model.files()["bpe.codes"] == expected.getvalue()


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_recipes_subword_nmt_equals_pypi_on_10_mb(shared_data: Path, tmp_path: Path) -> None:
    # Measured here: identical codes, hf_bpe ~1 s, subword-nmt ~16 s (english_combined whole: 2.1 s vs 30 s).
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    raw = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:10_000_000]
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(raw[: raw.rindex(b"\n") + 1])
    expected = io.StringIO()
    with codecs.open(str(corpus), encoding="utf-8") as handle:
        learn_bpe.learn_bpe(handle, expected, 10000, min_frequency=2)
    model = train_recipe(corpus, "subword-nmt", num_merges=10000, show_progress=False)
    assert model.files()["bpe.codes"] == expected.getvalue()


def test_recipes_hf_course_golden(tmp_path: Path) -> None:
    model = train_recipe(COURSE, "hf-course", vocab_size=50, show_progress=False)
    assert model.merge_pairs == [
        ("Ġ", "t"), ("i", "s"), ("e", "r"), ("Ġ", "a"), ("Ġt", "o"), ("e", "n"), ("T", "h"), ("Th", "is"),
        ("o", "u"), ("s", "e"), ("Ġto", "k"), ("Ġtok", "en"), ("n", "d"), ("Ġ", "is"), ("Ġt", "h"), ("Ġth", "e"),
        ("i", "n"), ("Ġa", "b"), ("Ġtoken", "i")]
    assert model.tokens[:4] == ("<|endoftext|>", ",", ".", "C") and len(model.tokens) == 50
    assert model.tokenize("This is not a token.") == ["This", "Ġis", "Ġ", "n", "o", "t", "Ġa", "Ġtoken", "."]
    # The same ids through BPEModel (the bytes the course never saw come after its 50 tokens).
    bpe = model.to_bpe_model()
    assert bpe.encode("This is not a token.") == model.encode("This is not a token.")
    assert bpe.vocab_size == 50 + 256 - 30 and bpe.decode(bpe.encode("Quiz!")) == "Quiz!"
    from transformers import PreTrainedTokenizerFast

    folder = model.save(tmp_path / "course")  # the BPEModel folder beside hf_bpe_classic.json
    fast = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    assert fast("This is not a token.")["input_ids"] == model.encode("This is not a token.")
    assert BPEModel.load(folder) == bpe and ClassicModel.load(folder) == model
    assert (folder / "merges.txt").read_text(encoding="utf-8").splitlines()[1:3] == ["Ġ t", "i s"]
    with pytest.raises(InputError, match="'Q' is not in this 'hf-course' vocabulary"):
        model.encode("Q")


@pytest.mark.parametrize("recipe", ["minbpe-basic", "minbpe-regex"])
def test_recipes_minbpe_wikipedia_example(recipe: str) -> None:
    model = train_recipe(["aaabdaaabac"], recipe, num_merges=3, show_progress=False)
    assert model.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert model.to_bpe_model().encode("aaabdaaabac") == [258, 100, 258, 97, 99]


@pytest.mark.shared_data
@pytest.mark.parametrize("recipe", ["minbpe-basic", "minbpe-regex"])
def test_recipes_minbpe_taylorswift_roundtrip(shared_data: Path, recipe: str) -> None:
    # minbpe's test_save_load trains 64 merges on taylorswift.txt; encode and decode must be identity.
    path = shared_data / "seeds" / "minbpe" / "taylorswift.txt"
    text = path.read_text(encoding="utf-8")
    model = train_recipe(path, recipe, vocab_size=256 + 64, show_progress=False)
    bpe = model.to_bpe_model()
    ids = bpe.encode(text)
    assert bpe.decode(ids) == text
    assert ids[:2000] == model.encode(text[:20000])[:2000]


def _minbpe_by_hand(chunks: list[bytes], num_merges: int) -> list[tuple[int, int]]:
    """minbpe's loop written out: recount over every chunk (repeats included), max keeps the first of ties."""
    ids = [list(chunk) for chunk in chunks]
    merges = []
    for new in range(256, 256 + num_merges):
        stats: dict[tuple[int, int], int] = {}
        for chunk in ids:
            for pair in zip(chunk, chunk[1:]):
                stats[pair] = stats.get(pair, 0) + 1
        best = max(stats, key=stats.__getitem__)
        merges.append(best)
        for k, chunk in enumerate(ids):
            out, i = [], 0
            while i < len(chunk):
                if chunk[i:i + 2] == list(best):
                    out.append(new)
                    i += 2
                else:
                    out.append(chunk[i])
                    i += 1
            ids[k] = out
    return merges


@pytest.mark.shared_data
def test_recipes_minbpe_regex_equals_its_loop_over_repeated_chunks(shared_data: Path) -> None:
    # The recipe counts each distinct GPT-4 chunk once with its count; minbpe recounts every chunk in order.
    from hf_bpe.core.pretokenize import Pretokenizer

    text = (shared_data / "seeds" / "minbpe" / "taylorswift.txt").read_text(encoding="utf-8")[:30_000]
    model = train_recipe([text], "minbpe-regex", num_merges=60, show_progress=False)
    expected = _minbpe_by_hand(Pretokenizer("gpt4").split_bytes(text), 60)
    assert [(a, b) for a, b, _ in model.merges] == expected


@pytest.mark.shared_data
@pytest.mark.parametrize("recipe, derived", [("rasbt-simple", "derived_merges_bpe-from-scratch-simple.json"),
                                             ("rasbt", "derived_merges_bpe-from-scratch.json")])
def test_recipes_rasbt_golden(shared_data: Path, tmp_path: Path, recipe: str, derived: str) -> None:
    seeds = shared_data / "seeds" / "the_verdict"
    reference = json.loads((seeds / derived).read_text(encoding="utf-8"))
    model = train_recipe(seeds / "the-verdict.txt", recipe, vocab_size=1000, show_progress=False)
    assert len(model.merges) == 742 and len(model.tokens) == 1000
    assert [[model.tokens[a], model.tokens[b], n] for a, b, n in model.merges] == reference["merges_in_order"]
    text = "Jack embraced beauty through art and life."
    assert model.encode(text) == reference[f"encode({text!r})"]
    model.save(tmp_path / "m")
    assert ClassicModel.load(tmp_path / "m") == model


def test_recipes_bad_input_is_refused_before_writing(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower newest\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown recipe 'nmt'; the recipes are: sennrich-paper, subword-nmt"):
        hf_bpe.train_classic([corpus], recipe="nmt", show_progress=False)
    with pytest.raises(InputError, match="recipe 'hf-course' is sized by vocab_size"):
        hf_bpe.train_classic([corpus], recipe="hf-course", num_merges=3, show_progress=False)
    with pytest.raises(InputError, match="drop pattern='gpt4'"):
        hf_bpe.train([corpus], recipe="subword-nmt", num_merges=3, pattern="gpt4", show_progress=False)
    with pytest.raises(InputError, match="lowercase belongs to the wordpiece recipe"):
        hf_bpe.train_classic([corpus], recipe="subword-nmt", num_merges=3, lowercase=True, show_progress=False)
    with pytest.raises(InputError, match="give vocab_size >= 256"):
        hf_bpe.train_classic([corpus], recipe="minbpe-basic", vocab_size=100, show_progress=False)
    with pytest.raises(InputError, match="needs a size"):
        hf_bpe.train_classic([corpus], recipe="subword-nmt", show_progress=False)
    out = tmp_path / "out"
    assert main(["train", str(corpus), "--recipe", "sennrich", "--out", str(out)]) == 2
    assert main(["train", str(corpus), "--recipe", "rasbt", "--num-merges", "3", "--out", str(out)]) == 2
    assert not out.exists()


def test_recipes_all_named_recipes_documented() -> None:
    # The recipes' guide of the docs site (the README is a landing page since issue 34).
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "classic-recipes.md").read_text(encoding="utf-8")
    for name in RECIPES:
        assert f"`{name}`" in guide, f"recipe {name!r} is not named in docs/guides/classic-recipes.md"


def test_recipes_cli_apply_reads_stdin_and_refuses_other_schemes(tmp_path: Path, monkeypatch, capsys) -> None:
    codes = train_recipe(PAPER_WORDS, "subword-nmt", num_merges=100, show_progress=False).save(tmp_path / "nmt")
    monkeypatch.setattr("sys.stdin", io.StringIO("lowest newer\n  wider\n"))
    assert main(["apply", "--model", str(codes)]) == 0
    assert capsys.readouterr().out == "lo@@ west ne@@ wer\n  wid@@ e@@ r\n"  # as subword-nmt apply-bpe
    course = train_recipe(COURSE, "hf-course", vocab_size=40, show_progress=False).save(tmp_path / "course")
    assert main(["apply", "--model", str(course), str(tmp_path / "course" / "merges.txt")]) == 2
    assert "segment() applies subword-nmt codes" in capsys.readouterr().err
    assert main(["apply", "--model", str(tmp_path / "missing")]) == 2
    assert "holds no hf_bpe_classic.json" in capsys.readouterr().err


@pytest.mark.crossval
@pytest.mark.shared_data
def test_recipes_minbpe_gpt4_tokenizer_expectations(shared_data: Path, openai_file) -> None:
    # minbpe's GPT4Tokenizer (its cl100k_base replica) must equal tiktoken on these texts and on taylorswift.txt,
    # and cl100k_base gives tiktoken's published ids (seeds/minbpe/SOURCE.txt). hf_bpe loads the same ranks.
    tiktoken = pytest.importorskip("tiktoken")
    from helpers import tiktoken_pat_str

    from hf_bpe.formats.tiktoken import load_tiktoken
    from hf_bpe.tools.convert import load_any

    source = openai_file("cl100k_base")
    model = load_any(source, pattern="cl100k", special_tokens={"<|endoftext|>": 100257})
    encoding = tiktoken.Encoding("cl100k_base", pat_str=tiktoken_pat_str("cl100k_base"),
                                 mergeable_ranks=load_tiktoken(source), special_tokens={"<|endoftext|>": 100257})
    texts = ["", "?", "hello world!!!? (안녕하세요!) lol123 😉",
             (shared_data / "seeds" / "minbpe" / "taylorswift.txt").read_text(encoding="utf-8")]
    for text in texts:
        assert model.encode_ordinary(text) == encoding.encode_ordinary(text)
    assert model.encode("hello world") == [15339, 1917]
    assert model.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]


# -- issue 22.19/22.20: words with whitespace other than spaces, line ends kept, against the real subword-nmt ----

# subword-nmt splits words on " " only: tabs, form feeds, U+00A0, ... stay inside words, and \x0b, \x0c, \x1c-\x1e,
# \x85, \u2028, \u2029 and a lone \r end a line in its codecs reader (the character stays on the word before).
_WS_ALPHABET = list("abc\t\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029\u3000\r")


def _learn_bpe_real(corpus: Path, num_merges: int) -> str:
    # As `subword-nmt learn-bpe -i FILE` reads and writes (its main opens the input with codecs.open).
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    written = io.StringIO()
    with codecs.open(str(corpus), encoding="utf-8") as handle:
        learn_bpe.learn_bpe(handle, written, num_merges, min_frequency=2)
    return written.getvalue()


def _apply_bpe_real(codes: str, corpus: Path) -> str:
    # As `subword-nmt apply-bpe -c CODES -i FILE`: the codes and the input through codecs readers, line by line.
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    bpe = apply_bpe.BPE(io.StringIO(codes))
    with codecs.open(str(corpus), encoding="utf-8") as handle:
        return "".join(bpe.process_line(line) for line in handle)


def _whitespace_corpus(data) -> str:
    from hypothesis import strategies as st

    alphabet = data.draw(st.lists(st.sampled_from(_WS_ALPHABET), min_size=2, max_size=5, unique=True))
    words = data.draw(st.lists(st.text(st.sampled_from(alphabet), min_size=1, max_size=6), min_size=1, max_size=8))
    lines = data.draw(st.lists(st.lists(st.sampled_from(words), min_size=1, max_size=8), min_size=1, max_size=10))
    ends = data.draw(st.lists(st.sampled_from(["\n", "\r\n", " \n", "\t\n"]), min_size=len(lines),
                              max_size=len(lines)))
    return "".join(" ".join(line) + end for line, end in zip(lines, ends))


def test_recipes_subword_nmt_codes_with_inner_whitespace_equal_learn_bpe(tmp_path, capsys, monkeypatch) -> None:
    # Issue 22.19: such text was refused ("merge ('\t', '\t') cannot be written to a codes file"), and words ending
    # at \x0b lost it; learn-bpe's own regex merge step (which matches across a tab inside a symbol) is followed.
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    pytest.importorskip("subword_nmt")
    corpus, out = tmp_path / "corpus.txt", tmp_path / "m"

    @settings(max_examples=80, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(data=st.data(), num_merges=st.integers(1, 40))
    def check(data, num_merges):
        text = _whitespace_corpus(data)
        corpus.write_bytes(text.encode("utf-8"))
        try:
            expected = _learn_bpe_real(corpus, num_merges)
        except ValueError:  # learn-bpe fails on a corpus without any pair (max() of nothing): not accepted
            return
        assert main(["train", str(corpus), "--recipe", "subword-nmt", "--num-merges", str(num_merges), "--out",
                     str(out), "--quiet", "--force"]) == 0, capsys.readouterr().err
        assert (out / "bpe.codes").read_bytes() == expected.encode("utf-8")
        # apply, from a file and from stdin, byte for byte (\r\n and a lone \r kept).
        try:
            segmented = _apply_bpe_real(expected, corpus)
        except SystemExit:  # apply-bpe refuses codes without a merge ("invalid line 2")
            return
        capsys.readouterr()
        assert main(["apply", "--model", str(out), str(corpus)]) == 0
        assert capsys.readouterr().out == segmented
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", newline="\n"))
        assert main(["apply", "--model", str(out)]) == 0
        assert capsys.readouterr().out == segmented

    check()


def test_recipes_subword_nmt_console_scripts_byte_for_byte(tmp_path, capsys, monkeypatch) -> None:
    # The real `subword-nmt` commands (not their functions): learn-bpe's codes, apply-bpe from a file and from stdin,
    # on a file with tabs inside words, CRLF lines, a lone CR and U+2028 (issue 22.20: apply FILE wrote "\n").
    import shutil
    import subprocess
    import sys

    script = shutil.which("subword-nmt", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the subword-nmt command is not installed beside this Python")
    raw = ("low\tlow lower\tlow newest\r\nwidest\rlow\u2028lowest  \r\n\tnew\t\tnewer \xa0wide\n" * 3).encode()
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(raw)
    codes = tmp_path / "real.codes"
    subprocess.run([script, "learn-bpe", "-s", "30", "-i", str(corpus), "-o", str(codes)], check=True,
                   capture_output=True)
    assert main(["train", str(corpus), "--recipe", "subword-nmt", "--num-merges", "30", "--out", str(tmp_path / "m"),
                 "--quiet"]) == 0
    assert (tmp_path / "m" / "bpe.codes").read_bytes() == codes.read_bytes()
    from_file = subprocess.run([script, "apply-bpe", "-c", str(codes), "-i", str(corpus)], check=True,
                               capture_output=True).stdout
    from_stdin = subprocess.run([script, "apply-bpe", "-c", str(codes)], input=raw, check=True,
                                capture_output=True).stdout
    assert b"\r\n" in from_file and from_file == from_stdin
    capsys.readouterr()
    assert main(["apply", "--model", str(tmp_path / "m"), str(corpus)]) == 0
    assert capsys.readouterr().out.encode() == from_file
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline="\n"))
    assert main(["apply", "--model", str(tmp_path / "m")]) == 0
    assert capsys.readouterr().out.encode() == from_stdin


def test_recipes_apply_file_keeps_crlf_and_lone_cr_as_apply_bpe(tmp_path, capsys) -> None:
    # Issue 22.20: `hf-bpe apply --model M FILE` read the file with newline translation and wrote "\n".
    model = train_recipe(PAPER_WORDS, "subword-nmt", num_merges=100, show_progress=False).save(tmp_path / "nmt")
    corpus = tmp_path / "in.txt"
    corpus.write_bytes(b"lowest newer\r\n  wider\rlow \r\n\r\nnewest")
    expected = _apply_bpe_real((model / "bpe.codes").read_text(encoding="utf-8"), corpus)
    assert expected == "lo@@ west ne@@ wer\r\n  wid@@ e@@ r\rlow \r\n\r\nnewest"
    assert main(["apply", "--model", str(model), str(corpus)]) == 0
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("text", [
    # Found by the hypothesis test above: learn-bpe's regex merge step matches "c</w>" after the tab inside "\xa0c\t"
    # and across "\t\t", so its merges differ from an exact BPE's after a few steps.
    "\xa0c\t\xa0 b\xa0 \xa0b\n\t\xa0bb \t\xa0\xa0\xa0 \xa0c\t\xa0 \t\t\t\t\xa0c \t\xa0bb\n\xa0b \t\t\t\t\xa0c \t\xa0bb \t\t\n"
    "\xa0b \xa0b \t\xa0bb\n\t\xa0bb \xa0c\t\xa0 \xa0c\t\xa0\n\t\xa0bb \xa0b cbb \xa0c\t\xa0 cbb\n\t\xa0bb b\xa0 \xa0b \t\t\n",
])
def test_recipes_subword_nmt_follows_learn_bpe_where_its_regex_merges_across_a_tab(tmp_path, text) -> None:
    from hf_bpe.training.classic.classic import learn, words_subword_nmt
    from hf_bpe.training.classic.subword_nmt_loop import merges_stay_exact

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    expected = _learn_bpe_real(corpus, 40)
    model = train_recipe(corpus, "subword-nmt", num_merges=40, show_progress=False)
    assert model.files()["bpe.codes"] == expected
    # The compiled loop's merges are not learn-bpe's here (the ported loop was taken)...
    words, counts = words_subword_nmt([text])
    exact = learn(words, counts, num_merges=40, tie_break="largest-pair", min_frequency=2)
    assert not merges_stay_exact(words, exact) and expected != dump_codes(exact)
    # ... and apply-bpe segments with the codes as learn-bpe wrote them.
    assert model.segment(text) == _apply_bpe_real(expected, corpus)
