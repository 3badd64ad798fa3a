"""Tests for hf_bpe.formats.gpt2 and hf_bpe.formats.tokenizer_json: byte identity with `tokenizers`, real vocabularies, encoding parity, errors."""

from __future__ import annotations

import functools
import inspect
import json
import random
import tempfile
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _spelling
from hf_bpe.core.bytelevel import str_to_token, token_to_str
from hf_bpe.core.patterns import (
    GPT2_PATTERN,
    from_oniguruma,
    to_oniguruma,
)
from hf_bpe.formats.gpt2 import (
    dump_merges_txt,
    dump_vocab_json,
    load_merges_txt,
    load_vocab_json,
    lay_out_vocab,
    merge_parts,
    render_merges_txt,
    render_vocab_json,
)
from hf_bpe.formats.tokenizer_json import (
    dump_tokenizer_json,
    load_tokenizer_json,
)

# cl100k_base's pattern, copied from tiktoken_ext/openai_public.py (test_gpt2_format_cl100k_pattern_is_tiktokens
# proves it is still verbatim there; tiktoken only hands it out together with a download of the ranks).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
])
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)
# Specials with every character class the JSON writer must get right: quotes, backslash, controls, DEL, U+2028,
# spaces and CJK (the last ones are not spellable in the byte-level alphabet).
ODD_SPECIALS = ["<|endoftext|>", "<pad>", 'a"b\\c', "tab\there", "\x01ctl\x7f\x1f", "spa ce", "中文", "\u2028ls"]


# ----------------------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------------------

def _train(texts: list[str], vocab_size: int, specials: list[str]):
    """Train a byte-level BPE with tokenizers' BpeTrainer."""
    from hf_bpe.tools.peers import train_tokenizers

    return train_tokenizers(texts, vocab_size=vocab_size, special_tokens=specials)


def _by_id(tokens: dict[bytes, int]) -> dict[int, bytes]:
    return {idx: tok for tok, idx in tokens.items()}


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _reference_encoder(vocab: dict[bytes, int], merges: list[tuple[bytes, bytes]], specials: dict[str, int],
                       pattern: str, add_prefix_space: bool, ignore_merges: bool = False):
    """hf_bpe's encoding semantics, written out plainly (independent of tokenizers).

    Specials are split out first (leftmost, longest); each remaining non-empty piece gets a " " prefix when
    add_prefix_space is set and it does not start with one; the pattern cuts it into pre-tokens; each pre-token is
    merged by lowest rank (last rank wins for repeated merges), left to right among equal ranks.
    """
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    compiled = regex.compile(pattern)
    special_re = (regex.compile("|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True)))
                  if specials else None)

    @functools.lru_cache(maxsize=None)
    def bpe(word: bytes) -> tuple[int, ...]:
        if ignore_merges and word in vocab:
            return (vocab[word],)
        parts = [bytes([b]) for b in word]
        while len(parts) > 1:
            best = min(range(len(parts) - 1), key=lambda i: (ranks.get((parts[i], parts[i + 1]), 1 << 62), i))
            if (parts[best], parts[best + 1]) not in ranks:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return tuple(vocab[p] for p in parts)

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        position = 0
        chunks: list[tuple[str, bool]] = []
        if special_re is not None:
            for m in special_re.finditer(text):
                chunks.append((text[position:m.start()], False))
                chunks.append((m.group(), True))
                position = m.end()
        chunks.append((text[position:], False))
        for chunk, is_special in chunks:
            if is_special:
                ids.append(specials[chunk])
                continue
            if not chunk:
                continue
            if add_prefix_space and not chunk.startswith(" "):
                chunk = " " + chunk
            for piece in compiled.findall(chunk):
                ids.extend(bpe(piece.encode("utf-8")))
        return ids

    return encode


@functools.lru_cache(maxsize=1)
def _real_lines(root: str) -> tuple[str, ...]:
    """About 300 real lines: English, Chinese, many scripts (UDHR), plus edge cases with specials inside."""
    base = Path(root) / "corpora"
    with open(base / "en" / "english_combined.txt", encoding="utf-8") as f:
        english = [ln for ln in f.read(3_000_000).split("\n") if ln.strip()]
    with open(base / "zh" / "zh_hongloumeng.txt", encoding="utf-8") as f:
        chinese = [ln for ln in f.read(200_000).split("\n") if ln.strip()]
    with open(base / "multi" / "udhr2_all_lang_tab_line.tsv", encoding="utf-8") as f:
        udhr = [ln.split("\t", 1)[-1] for ln in f.read(2_000_000).split("\n") if "\t" in ln]
    rng = random.Random(1234)
    lines = rng.sample(english, 180) + rng.sample(chinese, 30) + rng.sample(udhr, 60)
    # Join some with newlines: whitespace runs and line breaks are where patterns differ.
    lines += ["\n".join(rng.sample(english, 4)) + "\n\n  " for _ in range(10)]
    return tuple(lines)


def _with_specials(lines: tuple[str, ...], names: list[str]) -> list[str]:
    """Real lines with specials inserted at random places, plus hand-made edge cases."""
    rng = random.Random(99)
    out = list(lines)
    for line in lines[:120]:
        cut = rng.randrange(len(line) + 1)
        out.append(line[:cut] + rng.choice(names) + line[cut:] + rng.choice(["", names[0], " " + names[-1]]))
    s, t = names[0], names[-1]
    out += ["", " ", "  ", s, s + s, f"hi{s}{s}x", f"{s} x", f" {s}  y {t}z", f"{t}\n\nHello{s}", f"a{s}",
            f"{s} Hello world", "Hello world", " Hello world", "0" * 17, "😀😀 emoji 😀", "你好，世界",
            "\t\ttabs\r\n"]
    return out


def _gpt2_files(shared_data: Path):
    return _gpt2_files_cached(str(shared_data))


@functools.lru_cache(maxsize=1)
def _gpt2_files_cached(root: str):
    # Read once per session (0.3 s); callers must not mutate the results.
    d = Path(root) / "vocabs" / "gpt2"
    tokens, others = load_vocab_json(d / "vocab.json")
    merges = load_merges_txt(d / "merges.txt", vocab=tokens)
    return d, tokens, others, merges


# ----------------------------------------------------------------------------------------------------------------
# byte identity with tokenizers' own writers
# ----------------------------------------------------------------------------------------------------------------

TRAIN_SETS = {
    "english": ["the quick brown fox jumps over the lazy dog", "\"quoted\" \\back\\slash\\ a\\\"b",
                "tabs\tand\nnewlines", "Don't stop, we'll go! 1234567 numbers 3.14"] * 30,
    "cjk_emoji": ["你好世界，你好！", "😀😀😀 emoji 🎉 party 👍🏽", "日本語のテキストです。", "한국어 텍스트",
                  "ĠĊ already spelled"] * 30,
}


@pytest.mark.crossval
@pytest.mark.parametrize("corpus", sorted(TRAIN_SETS))
def test_gpt2_format_vocab_and_merges_byte_identical_to_tokenizers_save(tmp_path: Path, corpus: str) -> None:
    tok = _train(TRAIN_SETS[corpus], 420, ODD_SPECIALS)
    tok.model.save(str(tmp_path))
    vocab_bytes = (tmp_path / "vocab.json").read_bytes()
    merges_bytes = (tmp_path / "merges.txt").read_bytes()

    tokens, others = load_vocab_json(tmp_path / "vocab.json")
    merges = load_merges_txt(tmp_path / "merges.txt", vocab=tokens)
    # The specials that are not byte-level spellings are exactly the "others".
    assert set(others) == {"tab\there", "\x01ctl\x7f\x1f", "spa ce", "中文", "\u2028ls"}
    assert dump_vocab_json(_by_id(tokens), others).encode("utf-8") == vocab_bytes
    assert dump_merges_txt(merges).encode("utf-8") == merges_bytes
    # Same output when the spellable specials are also passed as specials (shared id: the special's spelling wins).
    specials = {name: tok.token_to_id(name) for name in ODD_SPECIALS}
    assert dump_vocab_json(_by_id(tokens), specials).encode("utf-8") == vocab_bytes
    assert len(tokens) + len(others) == len(ODD_SPECIALS) + 256 + len(merges) <= 420


@pytest.mark.crossval
@pytest.mark.parametrize("corpus", sorted(TRAIN_SETS))
def test_gpt2_format_tokenizer_json_byte_identical_to_tokenizers_to_str(tmp_path: Path, corpus: str) -> None:
    from tokenizers import decoders, processors

    tok = _train(TRAIN_SETS[corpus], 400, ODD_SPECIALS)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    tok.model.save(str(tmp_path))
    tokens, others = load_vocab_json(tmp_path / "vocab.json")
    merges = load_merges_txt(tmp_path / "merges.txt", vocab=tokens)
    specials = {name: tok.token_to_id(name) for name in ODD_SPECIALS}
    ours = dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials)
    assert ours == tok.to_str()


@pytest.mark.crossval
@pytest.mark.parametrize("pattern", [None, LLAMA3_PATTERN, CL100K_PATTERN])
@pytest.mark.parametrize("add_prefix_space", [False, True])
@pytest.mark.parametrize("ignore_merges", [False, True])
def test_gpt2_format_tokenizer_json_is_stable_through_tokenizers(pattern, add_prefix_space, ignore_merges) -> None:
    from tokenizers import Tokenizer

    tok = _train(TRAIN_SETS["english"], 330, ["<|endoftext|>", "spa ce"])
    tokens = _bytes_vocab(tok.get_vocab())
    merges = _merges_of(tok)
    text = dump_tokenizer_json(tokens, merges, special_tokens={"<|endoftext|>": 0, "spa ce": 1},
                               pattern_regex=pattern, add_prefix_space=add_prefix_space, ignore_merges=ignore_merges)
    assert Tokenizer.from_str(text).to_str() == text


def _bytes_vocab(vocab: dict[str, int]) -> dict[int, bytes]:
    out = {}
    for text, idx in vocab.items():
        try:
            out[idx] = str_to_token(text)
        except ValueError:
            pass
    return out


def _merges_of(tok) -> list[tuple[bytes, bytes]]:
    doc = json.loads(tok.to_str())
    return [(str_to_token(a), str_to_token(b)) for a, b in doc["model"]["merges"]]


@pytest.mark.crossval
def test_gpt2_format_vocab_gaps_written_like_tokenizers(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models

    # tokenizers writes the entries in id order and skips the missing ids; its vocab size counts entries.
    spelled = {"a": 0, "b": 1, "ab": 5, "<s>": 9}
    model = models.BPE(vocab=spelled, merges=[("a", "b")])
    model.save(str(tmp_path))
    ours = dump_vocab_json({0: b"a", 1: b"b", 5: b"ab"}, {"<s>": 9})
    assert ours.encode() == (tmp_path / "vocab.json").read_bytes() == b'{"a":0,"b":1,"ab":5,"<s>":9}'
    tok = Tokenizer.from_str(dump_tokenizer_json({0: b"a", 1: b"b", 5: b"ab"}, [(b"a", b"b")],
                                                 special_tokens={"<s>": 9}))
    assert tok.get_vocab_size() == 4
    assert tok.encode("ab<s>").ids == [5, 9]


@pytest.mark.crossval
def test_gpt2_format_repeated_merge_last_rank_wins_in_tokenizers() -> None:
    from tokenizers import Tokenizer

    # (b, c) is rank 0 and rank 2: with last-rank-wins (a, b) (rank 1) goes first -> "ab" + "c".
    merges = [(b"b", b"c"), (b"a", b"b"), (b"b", b"c")]
    text = dump_tokenizer_json({0: b"a", 1: b"b", 2: b"c", 3: b"ab", 4: b"bc"}, merges)
    tok = Tokenizer.from_str(text)
    assert tok.encode("abc").ids == [3, 2]
    assert json.loads(tok.to_str())["model"]["merges"] == [["a", "b"], ["b", "c"]]  # tokenizers drops the repeat
    assert json.loads(text)["model"]["merges"] == [["b", "c"], ["a", "b"], ["b", "c"]]  # we write what we got


# hypothesis: dump_vocab_json / dump_merges_txt equal BPE.save on random vocabularies (serde escaping included)
_token_bytes = st.binary(min_size=1, max_size=6)
_special_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@pytest.mark.crossval
@settings(deadline=None, derandomize=True, max_examples=200)
@given(tokens=st.lists(_token_bytes, min_size=1, max_size=30, unique=True),
       specials=st.lists(_special_text, max_size=5, unique=True),
       gaps=st.lists(st.integers(0, 3), min_size=40, max_size=40))
def test_gpt2_format_random_vocab_equals_tokenizers_save(tokens, specials, gaps) -> None:
    from tokenizers import models

    spellings = [token_to_str(t) for t in tokens]
    specials = [s for s in specials if s not in spellings]
    ids, next_id = [], 0
    for i in range(len(tokens) + len(specials)):
        next_id += gaps[i]
        ids.append(next_id)
        next_id += 1
    by_id = dict(zip(ids, tokens))
    special_ids = dict(zip(specials, ids[len(tokens):]))
    spelled = {token_to_str(t): i for i, t in by_id.items()} | special_ids
    ours = dump_vocab_json(by_id, special_ids)
    with tempfile.TemporaryDirectory() as d:
        models.BPE(vocab=spelled, merges=[]).save(d)
        assert ours.encode("utf-8") == (Path(d) / "vocab.json").read_bytes()
        loaded_tokens, loaded_others = load_vocab_json(_write(Path(d) / "v.json", ours))
    assert {token_to_str(t): i for t, i in loaded_tokens.items()} | loaded_others == spelled


@pytest.mark.crossval
@settings(deadline=None, derandomize=True, max_examples=200)
@given(pairs=st.lists(st.tuples(_token_bytes, _token_bytes), max_size=30, unique=True))
def test_gpt2_format_random_merges_equal_tokenizers_save(pairs) -> None:
    from tokenizers import models

    spelled: dict[str, int] = {}
    for a, b in pairs:
        for t in (a, b, a + b):
            spelled.setdefault(token_to_str(t), len(spelled))
    ours = dump_merges_txt(pairs)
    with tempfile.TemporaryDirectory() as d:
        models.BPE(vocab=spelled, merges=[(token_to_str(a), token_to_str(b)) for a, b in pairs]).save(d)
        assert ours.encode("utf-8") == (Path(d) / "merges.txt").read_bytes()
        vocab = {str_to_token(s): i for s, i in spelled.items()}
        assert load_merges_txt(_write(Path(d) / "m.txt", ours), vocab=vocab) == list(pairs)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(tokens=st.lists(_token_bytes, min_size=1, max_size=30, unique=True),
       specials=st.lists(_special_text, max_size=5, unique=True),
       pairs=st.lists(st.tuples(_token_bytes, _token_bytes), max_size=30))
def test_gpt2_format_compiled_rendering_equals_json_and_token_by_token_spelling(tokens, specials, pairs) -> None:
    # The compiled writers against the definition: json.dumps of the spelled dict, one merge line per pair.
    spellings = [token_to_str(t) for t in tokens]
    specials = [s for s in specials if s not in spellings]
    by_id = dict(enumerate(reversed(tokens)))  # not in id order: the layout sorts
    special_ids = {name: len(tokens) + i for i, name in enumerate(specials)}
    spelled = {token_to_str(t): i for i, t in sorted(by_id.items())} | special_ids
    layout = lay_out_vocab(by_id, special_ids)
    assert render_vocab_json(layout) == json.dumps(spelled, ensure_ascii=False, separators=(",", ":"))
    lefts, rights = merge_parts(pairs)
    assert render_merges_txt(lefts, rights) == "#version: 0.2\n" + "".join(
        f"{token_to_str(a)} {token_to_str(b)}\n" for a, b in pairs)
    assert _spelling.merges_json(lefts, rights) == json.dumps(
        [[token_to_str(a), token_to_str(b)] for a, b in pairs], ensure_ascii=False, separators=(",", ":"))


def test_gpt2_format_bulk_checks_still_name_the_bad_entry() -> None:
    with pytest.raises(TypeError, match=r"token 1 must be bytes, got str 'b'"):
        dump_vocab_json({0: b"a", 1: "b"})
    with pytest.raises(ValueError, match=r"token 1 is empty"):
        dump_vocab_json({0: b"a", 1: b""})
    with pytest.raises(TypeError, match=r"a token id must be an int, got bool True"):
        dump_vocab_json({True: b"a"})
    with pytest.raises(ValueError, match=r"ids 0 and 1 are both spelled 'a'"):
        dump_vocab_json({0: b"a"}, {"a": 1})
    with pytest.raises(ValueError, match=r"merge 1 has an empty part"):
        dump_merges_txt([(b"a", b"b"), (b"", b"c")])
    with pytest.raises(ValueError, match=r"merge 1 has an empty part"):  # an iterator is read once, and checked
        dump_merges_txt(iter([(b"a", b"b"), (b"", b"c")]))
    assert dump_merges_txt(iter([(b"a", b"b")])) == "#version: 0.2\na b\n"
    with pytest.raises(ValueError, match=r"merge 0 \(b'a', b'c'\): its right part 'c' is not in the vocabulary"):
        dump_tokenizer_json({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"c")])
    # The compiled writers refuse what would crash them (their callers check first).
    with pytest.raises(TypeError, match=r"a token must be bytes, got str 'b'"):
        _spelling.merges_text([b"a"], ["b"])
    with pytest.raises(ValueError, match=r"ids must be >= 0, got -1"):
        _spelling.json_object([b"a"], [-1])
    with pytest.raises(ValueError, match=r"as many ids as keys"):
        _spelling.json_object([b"a"], [])


# ----------------------------------------------------------------------------------------------------------------
# real files
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.shared_data
def test_gpt2_format_loads_gpt2_vocab_and_merges(shared_data: Path) -> None:
    d, tokens, others, merges = _gpt2_files(shared_data)
    assert len(tokens) == 50_257 and others == {}
    assert len(merges) == 50_000
    assert sorted(tokens.values()) == list(range(50_257))
    assert tokens[b"!"] == 0 and tokens[b"\n"] == 198 and tokens[b" "] == 220 and tokens[b" t"] == 256
    assert tokens[b"<|endoftext|>"] == 50256  # plain ASCII: spellable, so it is a "token" (the caller marks it special)
    assert merges[:3] == [(b" ", b"t"), (b" ", b"a"), (b"h", b"e")] and merges[-1] == (b" g", b"azed")
    assert all(tokens[a + b] == 256 + rank for rank, (a, b) in enumerate(merges))


@pytest.mark.shared_data
def test_gpt2_format_redumps_gpt2_files(shared_data: Path) -> None:
    d, tokens, others, merges = _gpt2_files(shared_data)
    # merges.txt: byte for byte.
    assert dump_merges_txt(merges).encode("utf-8") == (d / "merges.txt").read_bytes()
    # vocab.json: OpenAI wrote it with Python's json.dumps defaults (", "/": " separators, \\u escapes), not in
    # serde_json's compact style; the content is identical and the original is exactly the Python-default rendering.
    original = (d / "vocab.json").read_bytes()
    ours = dump_vocab_json(_by_id(tokens))
    assert ours.encode("utf-8") != original
    assert json.loads(ours) == json.loads(original)
    assert list(json.loads(ours)) == list(json.loads(original))  # same (id) order
    assert json.dumps(json.loads(ours)).encode("ascii") == original
    assert '"\\u0120t": 256' in original.decode("ascii") and '"Ġt":256' in ours


@pytest.mark.shared_data
def test_gpt2_format_loads_llama3_encoder_and_vocab_bpe(shared_data: Path) -> None:
    d = shared_data / "vocabs" / "llama3"
    tokens, others = load_vocab_json(d / "encoder.json")
    merges = load_merges_txt(d / "vocab.bpe", vocab=tokens)
    assert len(tokens) == 128_000 and others == {}
    assert len(merges) == 280_147  # no header: line 1 is a merge
    assert merges[0] == (b" ", b" ")
    assert sum(1 for a, _ in merges if a.startswith(b"#")) == 233
    assert (b"#", b"#") in merges
    assert len({a + b for a, b in merges}) == 127_744
    assert dump_merges_txt(merges).encode("utf-8") == b"#version: 0.2\n" + (d / "vocab.bpe").read_bytes()


@pytest.mark.shared_data
def test_gpt2_format_loads_qwen2_and_redumps_its_vocab_byte_for_byte(shared_data: Path) -> None:
    d = shared_data / "vocabs" / "qwen2"
    tokens, others = load_vocab_json(d / "vocab.json")
    merges = load_merges_txt(d / "merges.txt", vocab=tokens)
    assert len(tokens) == 151_643 and others == {}
    assert len(merges) == 151_387
    assert sum(1 for a, _ in merges if a.startswith(b"#")) == 96
    # Qwen2's vocab.json was written by tokenizers (serde style): our writer reproduces it exactly.
    assert dump_vocab_json(_by_id(tokens)).encode("utf-8") == (d / "vocab.json").read_bytes()
    assert dump_merges_txt(merges).encode("utf-8") == b"#version: 0.2\n" + (d / "merges.txt").read_bytes()


@pytest.mark.shared_data
def test_gpt2_format_loads_roberta(shared_data: Path) -> None:
    d = shared_data / "vocabs" / "roberta"
    tokens, others = load_vocab_json(d / "vocab.json")
    merges = load_merges_txt(d / "merges.txt", vocab=tokens)
    assert len(tokens) == 50_265 and others == {}
    assert tokens[b"<s>"] == 0 and tokens[b"<mask>"] == 50264 and tokens[b" the"] == 5
    assert merges == load_merges_txt(shared_data / "vocabs" / "gpt2" / "merges.txt")


@pytest.mark.shared_data
def test_gpt2_format_loads_gpt2_tokenizer_json(shared_data: Path) -> None:
    d, tokens, others, merges = _gpt2_files(shared_data)
    info = load_tokenizer_json(d / "tokenizer.json")
    assert info["tokens"] == tokens and info["others"] == {}
    assert info["merges"] == merges  # the file spells merges as "a b" strings
    assert info["pattern_regex"] is None and info["add_prefix_space"] is False and info["ignore_merges"] is False
    assert [(t["id"], t["content"], t["special"]) for t in info["added_tokens"]] == [(50256, "<|endoftext|>", True)]


def test_gpt2_format_load_tokenizer_json_round_trips_every_option(tmp_path: Path) -> None:
    tokens = {0: b"a", 1: b"b", 2: b"ab", 3: b" ", 4: b" ab"}
    merges = [(b"a", b"b"), (b" ", b"ab"), (b"a", b"b")]  # a repeat is kept
    for pattern in (None, LLAMA3_PATTERN, CL100K_PATTERN):
        for aps in (False, True):
            text = dump_tokenizer_json(tokens, merges, special_tokens={"<s> x": 7}, pattern_regex=pattern,
                                       add_prefix_space=aps, ignore_merges=aps)
            info = load_tokenizer_json(_write(tmp_path / "t.json", text))
            assert info["tokens"] == {t: i for i, t in tokens.items()}
            assert info["others"] == {"<s> x": 7}
            assert info["merges"] == merges
            written = None if pattern is None else to_oniguruma(pattern)  # == pattern, except for cl100k
            assert (info["pattern_regex"], info["add_prefix_space"], info["ignore_merges"]) == (written, aps, aps)
            assert info["added_tokens"][0]["content"] == "<s> x" and info["added_tokens"][0]["normalized"] is False


# ----------------------------------------------------------------------------------------------------------------
# encoding parity: tokenizers / transformers load our tokenizer.json and encode like hf_bpe
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.crossval
@pytest.mark.shared_data
def test_gpt2_format_tokenizer_json_encodes_like_gpt2s_own(shared_data: Path) -> None:
    from tokenizers import Tokenizer

    d, tokens, others, merges = _gpt2_files(shared_data)
    ours = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens={"<|endoftext|>": 50256}))
    reference = Tokenizer.from_file(str(d / "tokenizer.json"))
    texts = _with_specials(_real_lines(str(shared_data)), ["<|endoftext|>"])
    assert ours.encode_batch(texts) and [e.ids for e in ours.encode_batch(texts)] == [
        e.ids for e in reference.encode_batch(texts)]
    assert ours.encode("Hello world").ids == [15496, 995]
    assert ours.encode("hello <|endoftext|>").ids == [31373, 220, 50256]
    assert ours.encode("0" * 17).ids == [8269, 10535, 830]


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("pattern", [None, CL100K_PATTERN, LLAMA3_PATTERN], ids=["gpt2", "cl100k", "llama3"])
@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_gpt2_format_tokenizer_json_encodes_like_hf_bpe_semantics(shared_data: Path, pattern, add_prefix_space) -> None:
    from tokenizers import Tokenizer

    d, tokens, others, merges = _gpt2_files(shared_data)
    specials = {"<|endoftext|>": 50256, "<|im start|>": 50257}
    ours = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials,
                                                  pattern_regex=pattern, add_prefix_space=add_prefix_space))
    reference = _reference_encoder(tokens, merges, specials, pattern or GPT2_PATTERN, add_prefix_space)
    texts = _with_specials(_real_lines(str(shared_data)), list(specials))
    got = [e.ids for e in ours.encode_batch(texts)]
    mismatches = [(t, g, reference(t)) for t, g in zip(texts, got) if g != reference(t)]
    assert not mismatches[:3]
    if add_prefix_space:
        assert ours.encode("hi<|endoftext|><|endoftext|>x").ids == reference(" hi<|endoftext|><|endoftext|> x")
        assert ours.encode(" Hello").ids == ours.encode("Hello").ids == [18435]


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["gpt2", "gpt4", "llama3", "o200k"])
@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_gpt2_format_tokenizer_json_encodes_like_hf_bpe_model(shared_data: Path, name: str,
                                                              add_prefix_space: bool) -> None:
    """tokenizers, loading our tokenizer.json, gives the ids of hf_bpe's own BPEModel (patterns by name)."""
    from tokenizers import Tokenizer

    from hf_bpe.model.bpe import BPEModel
    from hf_bpe.core.patterns import PATTERNS

    d, tokens, others, merges = _gpt2_files(shared_data)
    specials = {"<|endoftext|>": 50256, "<|im start|>": 50257}
    vocab = {t: i for t, i in tokens.items() if t != b"<|endoftext|>"}
    model = BPEModel(vocab, merges, special_tokens=specials, pattern=name, add_prefix_space=add_prefix_space)
    pattern = None if name == "gpt2" else PATTERNS[name]
    ours = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials,
                                                  pattern_regex=pattern, add_prefix_space=add_prefix_space))
    texts = _with_specials(_real_lines(str(shared_data)), list(specials))
    got = [e.ids for e in ours.encode_batch(texts)]
    mismatches = [(t, g) for t, g in zip(texts, got) if g != model.encode(t, allowed_special="all")]
    assert not mismatches[:3]


@pytest.mark.crossval
@pytest.mark.shared_data
def test_gpt2_format_prefix_space_sequence_equals_native_bytelevel(shared_data: Path) -> None:
    """The Metaspace+Split construct with GPT-2's pattern is id-equal to ByteLevel(add_prefix_space=True)."""
    from tokenizers import Tokenizer

    d, tokens, others, merges = _gpt2_files(shared_data)
    specials = {"<|endoftext|>": 50256, "<|im start|>": 50257}
    native = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials,
                                                    add_prefix_space=True))
    custom = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials,
                                                    pattern_regex=GPT2_PATTERN, add_prefix_space=True))
    texts = _with_specials(_real_lines(str(shared_data)), list(specials))
    assert [e.ids for e in custom.encode_batch(texts)] == [e.ids for e in native.encode_batch(texts)]
    # and the naive construct (ByteLevel(add_prefix_space=True) after Split) is different: it prefixes every split.
    doc = json.loads(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials, pattern_regex=GPT2_PATTERN))
    doc["pre_tokenizer"]["pretokenizers"][-1]["add_prefix_space"] = True
    naive = Tokenizer.from_str(json.dumps(doc))
    assert naive.encode("Hello,world").ids != native.encode("Hello,world").ids


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("pattern", [None, CL100K_PATTERN], ids=["gpt2", "cl100k"])
@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_gpt2_format_tokenizer_json_in_transformers(tmp_path: Path, shared_data: Path, pattern,
                                                    add_prefix_space) -> None:
    from transformers import PreTrainedTokenizerFast

    d, tokens, others, merges = _gpt2_files(shared_data)
    specials = {"<|endoftext|>": 50256, "<|im start|>": 50257}
    path = _write(tmp_path / "tokenizer.json",
                  dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials, pattern_regex=pattern,
                                      add_prefix_space=add_prefix_space))
    hf = PreTrainedTokenizerFast(tokenizer_file=str(path))
    # transformers keeps our ByteLevel post-processor (it replaces only a null one, by a no-op TemplateProcessing).
    assert type(hf.backend_tokenizer.post_processor).__name__ == "ByteLevel"
    reference = _reference_encoder(tokens, merges, specials, pattern or GPT2_PATTERN, add_prefix_space)
    texts = _with_specials(_real_lines(str(shared_data))[:150], list(specials))
    assert [hf.encode(t) for t in texts] == [reference(t) for t in texts]
    assert hf.convert_ids_to_tokens(50257) == "<|im start|>"
    assert hf.decode(hf.encode("héllo wörld 😀")) == (" " if add_prefix_space else "") + "héllo wörld 😀"


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.slow
def test_gpt2_format_llama3_tokenizer_json_with_ignore_merges(shared_data: Path) -> None:
    from tokenizers import Tokenizer

    d = shared_data / "vocabs" / "llama3"
    tokens, _ = load_vocab_json(d / "encoder.json")
    merges = load_merges_txt(d / "vocab.bpe", vocab=tokens)
    specials = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001}
    tok = Tokenizer.from_str(dump_tokenizer_json(_by_id(tokens), merges, special_tokens=specials,
                                                 pattern_regex=LLAMA3_PATTERN, ignore_merges=True))
    assert tok.encode("hello world").ids == [15339, 1917]
    assert tok.encode("hello <|end_of_text|>").ids == [15339, 220, 128001]
    assert tok.encode("<|begin_of_text|>A B!").ids == [128000, 32, 426, 0]
    assert tok.encode("0" * 17).ids == [931, 931, 931, 931, 931, 410]
    assert tok.encode(" Việt").ids == [101798]  # only with ignore_merges (plain BPE: [11655, 26298, 83])


def test_gpt2_format_cl100k_pattern_is_tiktokens() -> None:
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    source = inspect.getsource(openai_public)
    assert CL100K_PATTERN in source and R50K_PATTERN in source
    assert all(part in source for part in O200K_PATTERN.split("|")[2:])


# ----------------------------------------------------------------------------------------------------------------
# to_oniguruma: Python-regex patterns that Oniguruma (tokenizers' Split) reads differently
# ----------------------------------------------------------------------------------------------------------------

def _python_split(pattern: str, text: str) -> list[str]:
    """Split "isolated" as tokenizers does (matches and the gaps between them), with Python regex semantics."""
    out, position = [], 0
    for m in regex.finditer(pattern, text):
        if m.start() > position:
            out.append(text[position:m.start()])
        if m.end() > m.start():
            out.append(m.group())
        position = m.end()
    if position < len(text):
        out.append(text[position:])
    return out


def _onig_split(pattern: str, text: str) -> list[str]:
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
    return [piece for piece, _ in split.pre_tokenize_str(text)]


@pytest.mark.crossval
def test_gpt2_format_oniguruma_reads_possessive_intervals_and_anchors_differently() -> None:
    # The peer quirk that to_oniguruma exists for (tokenizers 0.23.3, Oniguruma Ruby syntax).
    assert _python_split(r"\p{N}{1,3}+", "1234567") == ["123", "456", "7"]
    assert _onig_split(r"\p{N}{1,3}+", "1234567") == ["1234567"]
    assert _python_split(r"a$", "a\na") == ["a\n", "a"]
    assert _onig_split(r"a$", "a\na") == ["a", "\n", "a"]
    assert _python_split(r"xa{2}?", "xa") == ["xa"]  # exactly two a's (lazy exact count)
    assert _onig_split(r"xa{2}?", "xa") == ["x", "a"]  # Ruby syntax: (?:a{2})?
    for pattern, text in [(r"\p{N}{1,3}+", "1234567"), (r"a$", "a\na"), (r"xa{2}?", "xa"), (r"^a", "a\na")]:
        assert _onig_split(to_oniguruma(pattern), text) == _python_split(pattern, text)


def test_gpt2_format_to_oniguruma_keeps_real_patterns() -> None:
    for pattern in (GPT2_PATTERN, LLAMA3_PATTERN, O200K_PATTERN):
        assert to_oniguruma(pattern) == pattern
    assert to_oniguruma(CL100K_PATTERN) == CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})").replace(
        r"\s++$", r"\s++(?=\n?(?![\s\S]))")
    assert to_oniguruma(r"(?i)x(?#note)[$^]{2}+\Z") == r"(?i)x(?>[$^]{2})(?![\s\S])"
    assert to_oniguruma(r"\{a{1,}?b{,2}") == r"\{a{1,}?b{,2}"
    with pytest.raises(ValueError, match="inline flags '\\(\\?m\\)' are not supported"):
        to_oniguruma(r"(?m)a$")
    with pytest.raises(ValueError, match="inline flags"):
        dump_tokenizer_json({0: b"a"}, [], pattern_regex=r"(?x) a")


_TRICKY = st.sampled_from(list("aZé中ǅ1٣½ 's'S'T\t\n\r\x0b\x1c\x85\u2028\xa0!?,.-/😀\u0301ſ"))
_CONSTRUCTS = [GPT2_PATTERN, LLAMA3_PATTERN, CL100K_PATTERN, R50K_PATTERN, O200K_PATTERN,
               r"\p{N}{2}+|\p{L}{1,2}+|\s{1,}+|.", r"^\s+|\S+$|\S+|\s", r"(?:a|\d){2,3}+|[^a\d]+|.",
               r"'\p{L}{2}?|[^']+|'", r"(?i:[st]'){1,2}+|'|[^']+"]


@pytest.mark.crossval
@settings(deadline=None, derandomize=True, max_examples=300)
@given(text=st.lists(_TRICKY, max_size=40).map("".join), which=st.integers(0, len(_CONSTRUCTS) - 1))
def test_gpt2_format_to_oniguruma_splits_like_python_regex(text: str, which: int) -> None:
    pattern = _CONSTRUCTS[which]
    assert _onig_split(to_oniguruma(pattern), text) == _python_split(pattern, text)


@pytest.mark.crossval
@settings(deadline=None, derandomize=True, max_examples=300)
@given(text=st.lists(_TRICKY, max_size=40).map("".join), which=st.integers(0, len(_CONSTRUCTS) - 1))
def test_gpt2_format_from_oniguruma_splits_like_tokenizers(text: str, which: int) -> None:
    # The same texts read as Oniguruma patterns (as a tokenizer.json holds them): Python must split like tokenizers,
    # and writing the pattern back must not change what tokenizers does.
    raw = _CONSTRUCTS[which] + r"|(?m:^)\s|\s\Z|x\z"
    assert _python_split(from_oniguruma(raw), text) == _onig_split(raw, text)
    assert _onig_split(to_oniguruma(from_oniguruma(raw)), text) == _onig_split(raw, text)


def test_gpt2_format_from_oniguruma_examples() -> None:
    for pattern in (GPT2_PATTERN, LLAMA3_PATTERN, O200K_PATTERN):
        assert from_oniguruma(pattern) == pattern
    assert from_oniguruma(r"\p{N}{1,3}+|a{2}?|^x$") == r"(?:\p{N}{1,3})+|(?:a{2})?|(?m:^)x(?m:$)"
    assert to_oniguruma(from_oniguruma(r"^x$")) == r"^x$"
    for pattern in (CL100K_PATTERN, R50K_PATTERN):  # what a tokenizer.json written by hf_bpe reads back as
        assert from_oniguruma(to_oniguruma(pattern)) == to_oniguruma(pattern)
        assert regex.compile(from_oniguruma(to_oniguruma(pattern)))
    with pytest.raises(ValueError, match="inline flags"):
        from_oniguruma(r"(?m).")


# ----------------------------------------------------------------------------------------------------------------
# readers: accepted variants
# ----------------------------------------------------------------------------------------------------------------

def test_gpt2_format_merges_variants_accepted(tmp_path: Path) -> None:
    expect = [(b"#", b"#"), (b" ", b"t")]
    for body in ["#version: 0.2\n# #\nĠ t\n", "# #\nĠ t\n", "# #\nĠ t", "#version: 0.2\r\n# #\r\nĠ t\r\n",
                 "# #\nĠ t\n\n\n", "\ufeff#version: 0.2\n# #\nĠ t\n"]:
        assert load_merges_txt(_write(tmp_path / "m.txt", body)) == expect, body
    assert load_merges_txt(_write(tmp_path / "m.txt", "#version: 0.2\n")) == []
    assert load_merges_txt(_write(tmp_path / "m.txt", "#version: 0.2")) == []
    # a '#version' line is only a header on line 1; later it is a merge like any other
    assert load_merges_txt(_write(tmp_path / "m.txt", "a b\n#version: 0.2\n")) == [(b"a", b"b"),
                                                                                 (b"#version:", b"0.2")]
    # repeats are kept in order; the caller applies last-rank-wins
    assert load_merges_txt(_write(tmp_path / "m.txt", "a b\nc d\na b\n")) == [(b"a", b"b"), (b"c", b"d"),
                                                                             (b"a", b"b")]


def test_gpt2_format_vocab_json_any_style_and_others(tmp_path: Path) -> None:
    text = '{\n  "\\u0120a": 0,\n  "<|im start|>": 1, "中": 2, "": 3, "<s>": 4\n}\n'
    tokens, others = load_vocab_json(_write(tmp_path / "v.json", text))
    assert tokens == {b" a": 0, b"<s>": 4}
    assert others == {"<|im start|>": 1, "中": 2, "": 3}


def test_gpt2_format_vocab_round_trip_with_shared_special_id(tmp_path: Path) -> None:
    text = dump_vocab_json({0: b"a", 1: b"<s>", 2: b"b"}, {"<s>": 1, "<|x y|>": 5})
    assert text == '{"a":0,"<s>":1,"b":2,"<|x y|>":5}'
    # A special replacing a regular token with another spelling: one entry, the special's.
    assert dump_vocab_json({0: b"a", 1: b"zz"}, {"<s>": 1}) == '{"a":0,"<s>":1}'
    tokens, others = load_vocab_json(_write(tmp_path / "v.json", text))
    assert tokens == {b"a": 0, b"<s>": 1, b"b": 2} and others == {"<|x y|>": 5}


# ----------------------------------------------------------------------------------------------------------------
# malformed inputs: clear errors naming the file (and line)
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ("{not json", "is not valid JSON"),
    ('["a", "b"]', "must be a JSON object"),
    ('{"a": "1"}', "ids must be non-negative integers"),
    ('{"a": -1}', "ids must be non-negative integers"),
    ('{"a": 1.0}', "ids must be non-negative integers"),
    ('{"a": true}', "ids must be non-negative integers"),
    ('{"a": 4294967296}', "above 4294967295"),
    ('{"a": 0, "b": 0}', "share id 0"),
    ('{"a": 0, "a": 1}', "appears twice"),
])
def test_gpt2_format_load_vocab_json_errors(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path / "bad_vocab.json", body)
    with pytest.raises(ValueError, match=message) as info:
        load_vocab_json(path)
    assert "bad_vocab.json" in str(info.value)


def test_gpt2_format_load_errors_not_utf8_and_missing(tmp_path: Path) -> None:
    path = _write(tmp_path / "latin1.json", '{"é": 0}'.encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.json.*not UTF-8.*offset 2"):
        load_vocab_json(path)
    with pytest.raises(ValueError, match=r"latin1.txt.*not UTF-8"):
        load_merges_txt(_write(tmp_path / "latin1.txt", b"a \xe9\n"))
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_vocab_json(tmp_path / "nope.json")
    with pytest.raises(TypeError, match="path must be"):
        load_vocab_json(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("body, line, message", [
    ("#version: 0.2\na b\na b c\n", 3, "is not a merge"),
    ("a b\nab\n", 2, "is not a merge"),
    ("a b\na  b\n", 2, "is not a merge"),
    ("a b\n\nc d\n", 2, "is not a merge"),
    ("a b\na \n", 2, "is not a merge"),
    ("a b\na 中\n", 2, "not a byte-level token"),
    ("a b\nx\ty z\n", 2, "not a byte-level token"),
    ("a\tb c\n", 1, "not a byte-level token"),
])
def test_gpt2_format_load_merges_txt_errors(tmp_path: Path, body: str, line: int, message: str) -> None:
    path = _write(tmp_path / "bad_merges.txt", body)
    with pytest.raises(ValueError, match=message) as info:
        load_merges_txt(path)
    assert "bad_merges.txt" in str(info.value) and f"line {line}:" in str(info.value)


def test_gpt2_format_load_merges_txt_checks_vocab(tmp_path: Path) -> None:
    vocab = {b"a": 0, b"b": 1, b"ab": 2, b"c": 3}
    path = _write(tmp_path / "m.txt", "#version: 0.2\na b\na c\n")
    with pytest.raises(ValueError, match=r"m.txt.*line 3: the merged result 'ac'"):
        load_merges_txt(path, vocab=vocab)
    with pytest.raises(ValueError, match=r"line 2: the right part 'd'"):
        load_merges_txt(_write(tmp_path / "m.txt", "#version: 0.2\na d\n"), vocab=vocab)
    assert load_merges_txt(_write(tmp_path / "m.txt", "a b\n"), vocab=vocab) == [(b"a", b"b")]
    with pytest.raises(TypeError, match="vocab must be a mapping"):
        load_merges_txt(path, vocab=[b"a"])  # type: ignore[arg-type]


@pytest.mark.parametrize("body", ["", "\n", "\n\n"])
def test_gpt2_format_empty_merges_file_is_an_error(tmp_path: Path, body: str) -> None:
    with pytest.raises(ValueError, match=r"empty.txt.*empty merges file"):
        load_merges_txt(_write(tmp_path / "empty.txt", body))


def _tokenizer_doc(**changes) -> dict:
    doc = json.loads(dump_tokenizer_json({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"b")]))
    for dotted, value in changes.items():
        target = doc
        *path, last = dotted.split("__")
        for key in path:
            target = target[key]
        target[last] = value
    return doc


@pytest.mark.parametrize("changes, message", [
    ({"model__type": "WordPiece"}, "model type is 'WordPiece', expected 'BPE'"),
    ({"model__merges": ["a b c"]}, r"model.merges\[0\] is 'a b c'"),
    ({"model__merges": [["a", "b", "c"]]}, r"model.merges\[0\]"),
    ({"model__merges": [["a", "x"]]}, r"model.merges\[0\]: the right part 'x'"),
    ({"model__merges": "a b"}, "model.merges must be a list"),
    ({"model__vocab": {"a": 0, "b": 0}}, "share id 0"),
    ({"model__byte_fallback": True}, "byte_fallback"),
    ({"model__dropout": 0.1}, "dropout"),
    ({"model__continuing_subword_prefix": "##"}, "continuing_subword_prefix"),
    ({"normalizer": {"type": "NFC"}}, "normalizer"),
    ({"pre_tokenizer": None}, "pre_tokenizer null is not supported"),
    ({"pre_tokenizer": {"type": "Whitespace"}}, "unexpected sequence of steps"),
    ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}}, "without a regex"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": True, "use_regex": False}]}}, "prefixes every split"),
    ({"added_tokens": [{"id": "1", "content": "x"}]}, r"added_tokens\[0\]"),
])
def test_gpt2_format_load_tokenizer_json_errors(tmp_path: Path, changes: dict, message: str) -> None:
    path = _write(tmp_path / "bad_tokenizer.json", json.dumps(_tokenizer_doc(**changes)))
    with pytest.raises(ValueError, match=message) as info:
        load_tokenizer_json(path)
    assert "bad_tokenizer.json" in str(info.value)


def test_gpt2_format_load_tokenizer_json_reads_pattern_as_tokenizers_does(tmp_path: Path) -> None:
    doc = _tokenizer_doc(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\p{N}{1,3}+|\D+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]})
    info = load_tokenizer_json(_write(tmp_path / "t.json", json.dumps(doc)))
    assert info["pattern_regex"] == r"(?:\p{N}{1,3})+|\D+"
    assert regex.findall(info["pattern_regex"], "1234567") == ["1234567"]  # as tokenizers splits it


def test_gpt2_format_load_tokenizer_json_rejects_non_tokenizer(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"x.json.*is not a tokenizer.json"):
        load_tokenizer_json(_write(tmp_path / "x.json", "[1, 2]"))
    with pytest.raises(ValueError, match=r"x.json.*not valid JSON.*line 1 column 2"):
        load_tokenizer_json(_write(tmp_path / "x.json", "{,}"))


@pytest.mark.parametrize("call, error, message", [
    (lambda: dump_vocab_json({0: "a"}), TypeError, "token 0 must be bytes, got str 'a'"),
    (lambda: dump_vocab_json({True: b"a"}), TypeError, "a token id must be an int, got bool True"),
    (lambda: dump_vocab_json({-1: b"a"}), ValueError, "must be in 0..4294967295"),
    (lambda: dump_vocab_json({0: b""}), ValueError, "token 0 is empty"),
    (lambda: dump_vocab_json({0: b"a", 1: b"a"}), ValueError, "ids 0 and 1 are both spelled 'a'"),
    (lambda: dump_vocab_json({0: b"a"}, {"a": 3}), ValueError, "ids 0 and 3 are both spelled 'a'"),
    (lambda: dump_vocab_json({0: b"a"}, {"<s>": 3, "</s>": 3}), ValueError, "share id 3"),
    (lambda: dump_vocab_json({0: b"a"}, {"": 3}), ValueError, "special token name is empty"),
    (lambda: dump_vocab_json({0: b"a"}, {"\ud800": 3}), ValueError, "lone surrogate"),
    (lambda: dump_vocab_json([b"a"]), TypeError, "tokens must be a mapping"),  # type: ignore[arg-type]
    (lambda: dump_merges_txt("a b"), TypeError, "merges must be a sequence"),
    (lambda: dump_merges_txt([(b"a",)]), TypeError, r"merge 0 must be a pair"),
    (lambda: dump_merges_txt([("a", "b")]), TypeError, r"merge 0 must be a pair of bytes"),
    (lambda: dump_merges_txt([(b"a", b"")]), ValueError, r"merge 0 has an empty part"),
    (lambda: dump_tokenizer_json({0: b"a", 1: b"b"}, [(b"a", b"b")]), ValueError,
     r"merge 0 .*merged result 'ab' is not in the vocabulary"),
    (lambda: dump_tokenizer_json({0: b"a"}, [], pattern_regex="(unclosed"), ValueError, "does not compile"),
    (lambda: dump_tokenizer_json({0: b"a"}, [], pattern_regex=""), ValueError, "pattern_regex is empty"),
    (lambda: dump_tokenizer_json({0: b"a"}, [], pattern_regex=b"x"), TypeError, "pattern_regex must be a str"),
    (lambda: dump_tokenizer_json({0: b"a"}, [], add_prefix_space=1), TypeError, "add_prefix_space must be a bool"),
    (lambda: dump_tokenizer_json({0: b"a"}, [], ignore_merges=None), TypeError, "ignore_merges must be a bool"),
])
def test_gpt2_format_dump_validation(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


# -- malformed files: one short ValueError naming the file, bounded memory (issue 22.13) ----------------------------

def _byte_vocab() -> dict[str, int]:
    return {token_to_str(bytes([b])): b for b in range(256)}


def _folder_with(tmp_path: Path, name: str, *, vocab: str | None = None, merges: str | bytes = "#version: 0.2\n",
                 tokenizer: str | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    if tokenizer is not None:
        (folder / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
        return folder
    (folder / "vocab.json").write_text(json.dumps(_byte_vocab()) if vocab is None else vocab, encoding="utf-8")
    (folder / "merges.txt").write_bytes(merges.encode() if isinstance(merges, str) else merges)
    return folder


def _cli_error(folder: Path, capsys) -> str:
    from hf_bpe.cli import main

    assert main(["encode", "--model", str(folder), "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and "Traceback" not in err, err[:2000]
    assert len(err) < 600, err[:2000]  # a bad value is quoted by at most ~80 characters
    return err


@pytest.mark.parametrize("which", ["vocab.json", "tokenizer.json", "tokenizer_config.json"])
def test_gpt2_format_deeply_nested_json_is_a_value_error(tmp_path, capsys, which):
    import hf_bpe

    nested = "[" * 100_000
    if which == "vocab.json":
        folder = _folder_with(tmp_path, "m", vocab=nested)
    elif which == "tokenizer.json":
        folder = _folder_with(tmp_path, "m", tokenizer=nested)
    else:
        folder = _folder_with(tmp_path, "m")
        (folder / which).write_text(nested, encoding="utf-8")
    with pytest.raises(ValueError, match=f"{which}' is not JSON that hf_bpe reads: .* nested deeper"):
        hf_bpe.BPEModel.load(folder)
    assert f"{which}' is not JSON that hf_bpe reads" in _cli_error(folder, capsys)


def test_gpt2_format_lone_surrogate_key_is_a_clear_value_error(tmp_path, capsys):
    import hf_bpe

    folder = _folder_with(tmp_path, "m", vocab=json.dumps(_byte_vocab())[:-1] + ', "a\\ud800b": 256}')
    with pytest.raises(ValueError, match=r"the string 'a\\ud800b' holds a lone surrogate \(U\+D800"):
        load_vocab_json(folder / "vocab.json")
    with pytest.raises(ValueError, match="lone surrogate"):
        hf_bpe.BPEModel.load(folder)
    assert "lone surrogate" in _cli_error(folder, capsys)
    # A surrogate pair written as two escapes is one real character: accepted, as by tokenizers.
    (folder / "vocab.json").write_text(json.dumps(_byte_vocab())[:-1] + ', "\\ud83d\\ude00": 256}', encoding="utf-8")
    assert load_vocab_json(folder / "vocab.json")[1] == {"😀": 256}


def test_gpt2_format_huge_values_are_quoted_short(tmp_path, capsys):
    huge = "x" * 10_000_000
    bad_line = _folder_with(tmp_path, "a", merges=f"#version: 0.2\n{huge}\n")
    assert "line 2: 'xxxx" in _cli_error(bad_line, capsys)
    for folder in (bad_line,
                   _folder_with(tmp_path, "b", vocab=json.dumps({**_byte_vocab(), huge: -1})),
                   _folder_with(tmp_path, "c", vocab=json.dumps({**_byte_vocab(), huge: 0})),
                   _folder_with(tmp_path, "d", merges=f"#version: 0.2\nĠ {huge}\n")):
        err = _cli_error(folder, capsys)
        assert "x" * 80 in err and "x" * 81 not in err, err


def test_gpt2_format_a_line_too_long_is_refused_after_reading_the_bound(tmp_path, capsys, monkeypatch):
    import tracemalloc

    from hf_bpe.formats import gpt2

    assert gpt2.MAX_LINE_BYTES == 16 << 20
    bound = 1 << 20  # a smaller bound, so that a line 16x longer stays a small test file
    monkeypatch.setattr(gpt2, "MAX_LINE_BYTES", bound)
    folder = _folder_with(tmp_path, "m", merges=b"#version: 0.2\n\xc4\xa0 t\n" + b"a" * (16 * bound) + b"\n")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=rf"merges.txt': line 3 is longer than {bound:,} bytes"):
            load_merges_txt(folder / "merges.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * bound  # counted allocations: the 16 MiB line is never held, one bounded read at most
    assert "line 3 is longer than" in _cli_error(folder, capsys)
    # A line of exactly the bound (with its newline) is read, and judged as a merge.
    (folder / "merges.txt").write_bytes(b"#version: 0.2\n" + b"a" * bound + b"\n")
    with pytest.raises(ValueError, match="line 2: 'aaa.*is not a merge"):
        load_merges_txt(folder / "merges.txt")
