"""tiktoken files: byte-exact load/dump, merges recovered from ranks and back, encoding equal to tiktoken."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core.bytelevel import str_to_token, token_to_str
from hf_bpe.formats.tiktoken import dump_tiktoken, load_tiktoken, merges_from_ranks, ranks_from_merges
from helpers import tiktoken_pat_str

# tiktoken_ext/openai_public.py (tiktoken 0.14): the pre-tokenizer patterns and the sha256 of the real files.
CL100K_PAT = tiktoken_pat_str("cl100k_base")
O200K_PAT = tiktoken_pat_str("o200k_base")
OPENAI = {
    # name: (hf_bpe pattern name, tiktoken pat_str, sha256 of the file, number of tokens)
    "cl100k_base": ("gpt4", CL100K_PAT, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", 100256),
    "o200k_base": ("o200k", O200K_PAT, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", 199998),
}


# ----------------------------------------------------------------------------------------------------------------
# Independent references (the spec, written the slow obvious way)
# ----------------------------------------------------------------------------------------------------------------

def ref_bpe(ranks: Mapping[bytes, int], data: bytes, max_rank: int | None = None) -> list[bytes]:
    """tiktoken's _educational.bpe_encode (lowest rank of the concatenation, leftmost), stopping at max_rank."""
    parts = [bytes([b]) for b in data]
    while True:
        best_i, best = None, None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (max_rank is None or rank < max_rank) and (best is None or rank < best):
                best_i, best = i, rank
        if best_i is None:
            return parts
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]


def ref_merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]] | bytes:
    """transformers' old TikTokenConverter: bpe(ranks, token, max_rank=rank); the first unbuildable token instead."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) >= 2:
            parts = ref_bpe(ranks, token, rank)
            if len(parts) != 2:
                return token
            merges.append((parts[0], parts[1]))
    return merges


def merge_list_bpe(merges: list[tuple[bytes, bytes]], data: bytes) -> list[bytes]:
    """tokenizers' BPE: only listed pairs merge, lowest merge rank first, leftmost on ties."""
    priority = {pair: i for i, pair in enumerate(merges)}
    parts = [bytes([b]) for b in data]
    while True:
        best_i, best = None, None
        for i in range(len(parts) - 1):
            p = priority.get((parts[i], parts[i + 1]))
            if p is not None and (best is None or p < best):
                best_i, best = i, p
        if best_i is None:
            return parts
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]


@st.composite
def rank_tables(draw: st.DrawFn) -> dict[bytes, int]:
    """Small rank tables: tokens made by joining earlier ones (like training), single bytes ranked anywhere,
    ranks with gaps, sometimes two ranks swapped -- valid and invalid BPE orders, with many repeats (ties)."""
    alphabet = [bytes([b]) for b in draw(st.lists(st.sampled_from(b"ab/*\xe4"), min_size=1, max_size=3, unique=True))]
    tokens = list(alphabet)
    for _ in range(draw(st.integers(0, 24))):
        joined = draw(st.sampled_from(tokens)) + draw(st.sampled_from(tokens))
        if joined not in tokens:
            tokens.append(joined)
    order = [t for t in tokens if len(t) > 1]
    for byte in alphabet:
        order.insert(draw(st.integers(0, len(order))), byte)
    if len(order) > 1 and draw(st.integers(0, 3)) == 0:
        i, j = draw(st.integers(0, len(order) - 1)), draw(st.integers(0, len(order) - 1))
        order[i], order[j] = order[j], order[i]
    values = sorted(draw(st.lists(st.integers(0, 10_000), min_size=len(order), max_size=len(order), unique=True)))
    return dict(zip(order, values))


# ----------------------------------------------------------------------------------------------------------------
# load_tiktoken / dump_tiktoken
# ----------------------------------------------------------------------------------------------------------------

def test_tiktoken_format_load_reads_lines_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "t.tiktoken"
    # CRLF, a blank line, Whisper's empty token '=' and no final newline are all accepted.
    path.write_bytes(b"IQ== 0\r\nIGhp 7\n\nYWI= 3\n= 9")
    assert load_tiktoken(path) == {b"!": 0, b" hi": 7, b"ab": 3, b"": 9}
    assert list(load_tiktoken(str(path))) == [b"!", b" hi", b"ab", b""]


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        (b"IQ== 0\nIg==\n", 2, "rank is missing"),
        (b"IQ== 0\nI!== 1\n", 2, "not valid base64"),
        (b"IQ 0\n", 1, "not valid base64"),
        (b"IQ== zero\n", 1, "not a non-negative integer"),
        (b"IQ== -1\n", 1, "not a non-negative integer"),
        (b"IQ== +1\n", 1, "not a non-negative integer"),
        (b"IQ== 1_0\n", 1, "not a non-negative integer"),
        (b"IQ== 0 1\n", 1, "3 fields"),
        (b"IQ== 0\nIg== 1\nIQ== 2\n", 3, "already appeared on line 1"),
        (b"IQ== 0\nIg== 1\nIw== 1\n", 3, "already given on line 2"),
    ],
)
def test_tiktoken_format_load_errors_name_file_and_line(tmp_path: Path, content: bytes, line: int, phrase: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=phrase) as info:
        load_tiktoken(path)
    assert f"{str(path)!r}: line {line}:" in str(info.value)


@pytest.mark.parametrize("content", [b"", b"\n\n", b" \r\n"])
def test_tiktoken_format_load_rejects_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="empty tiktoken file") as info:
        load_tiktoken(path)
    assert repr(str(path)) in str(info.value)


def test_tiktoken_format_load_rejects_bad_path(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        load_tiktoken(b"x.tiktoken")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        load_tiktoken(tmp_path / "missing.tiktoken")


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.data())
def test_tiktoken_format_dump_then_load_round_trips(data: st.DataObject) -> None:
    tokens = data.draw(st.lists(st.binary(max_size=6), min_size=1, max_size=30, unique=True))
    ranks = data.draw(st.lists(st.integers(0, 2**40), min_size=len(tokens), max_size=len(tokens), unique=True))
    table = dict(zip(tokens, ranks))
    text = dump_tiktoken(table)
    assert text.endswith("\n") and text.isascii()
    assert [int(line.split(" ")[1]) for line in text.splitlines()] == sorted(ranks)
    # A fresh directory per example (a function-scoped tmp_path would be shared by all examples).
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "t.tiktoken"
        file.write_text(text, encoding="ascii")
        assert load_tiktoken(file) == table


def test_tiktoken_format_dump_writes_tiktoken_layout() -> None:
    assert dump_tiktoken({b" hi": 1, b"!": 0, b"": 2}) == "IQ== 0\nIGhp 1\n= 2\n"


@pytest.mark.parametrize(
    ("ranks", "error", "phrase"),
    [
        ({b"a": 0, b"b": 0}, ValueError, "gives rank 0 to both"),
        ({}, ValueError, "ranks is empty"),
        ({"a": 0}, TypeError, "keys must be bytes"),
        ({b"a": -1}, TypeError, "non-negative int"),
        ({b"a": True}, TypeError, "non-negative int"),
        ({b"a": 1.0}, TypeError, "non-negative int"),
        ([(b"a", 0)], TypeError, "must be a mapping"),
    ],
)
def test_tiktoken_format_dump_rejects_bad_ranks(ranks: object, error: type[Exception], phrase: str) -> None:
    with pytest.raises(error, match=phrase):
        dump_tiktoken(ranks)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------------
# merges_from_ranks / ranks_from_merges on small tables
# ----------------------------------------------------------------------------------------------------------------

def test_tiktoken_format_merges_follow_rank_order() -> None:
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"bab": 3, b"abab": 4}
    assert merges_from_ranks(ranks) == [(b"a", b"b"), (b"b", b"ab"), (b"ab", b"ab")]
    assert merges_from_ranks({b"a": 3}) == []


def test_tiktoken_format_merges_break_ties_leftmost() -> None:
    # Qwen's '/******/': '******' is '****' + '**', because merging '**' '**' '**' takes the leftmost pair first.
    ranks = {b"*": 0, b"/": 1, b"**": 2, b"****": 3, b"******": 4, b"******/": 5, b"/******/": 6}
    merges = merges_from_ranks(ranks)
    assert merges == [(b"*", b"*"), (b"**", b"**"), (b"****", b"**"), (b"******", b"/"), (b"/", b"******/")]
    assert merges == ref_merges_from_ranks(ranks)


def test_tiktoken_format_merges_allow_single_bytes_ranked_anywhere() -> None:
    assert merges_from_ranks({b"ab": 0, b"a": 5, b"b": 7, b"abb": 8}) == [(b"a", b"b"), (b"ab", b"b")]


def test_tiktoken_format_merges_reject_unbuildable_token() -> None:
    with pytest.raises(ValueError, match=r"b'abc' \(rank 3\) cannot be built from two lower-ranked tokens") as info:
        merges_from_ranks({b"a": 0, b"b": 1, b"c": 2, b"abc": 3})
    assert "[b'a', b'b', b'c']" in str(info.value)
    # Its halves 'ab' + 'ab' would do, but merging takes 'ba' first and ends in three parts.
    with pytest.raises(ValueError, match=r"b'abab' \(rank 4\).*\[b'a', b'ba', b'b'\]"):
        merges_from_ranks({b"a": 0, b"b": 1, b"ba": 2, b"ab": 3, b"abab": 4})


def test_tiktoken_format_merges_reject_unranked_byte_and_bad_input() -> None:
    with pytest.raises(ValueError, match=r"contains the bytes \[b'b'\], which have no rank"):
        merges_from_ranks({b"a": 0, b"ab": 1})
    with pytest.raises(ValueError, match="gives rank 1 to both"):
        merges_from_ranks({b"a": 1, b"b": 1})
    with pytest.raises(TypeError, match="keys must be bytes"):
        merges_from_ranks({"a": 0})  # type: ignore[dict-item]


@settings(deadline=None, derandomize=True, max_examples=400)
@given(rank_tables(), st.lists(st.binary(min_size=1, max_size=12), min_size=1, max_size=4))
def test_tiktoken_format_merges_equal_reference_bpe(ranks: dict[bytes, int], texts: list[bytes]) -> None:
    expected = ref_merges_from_ranks(ranks)
    if isinstance(expected, bytes):
        with pytest.raises(ValueError, match=re.escape(f"token {expected!r} (rank {ranks[expected]})")):
            merges_from_ranks(ranks)
        return
    merges = merges_from_ranks(ranks)
    assert merges == expected
    assert ranks_from_merges(ranks, merges) == ranks
    # Rank semantics (tiktoken: any pair whose concatenation has a rank) == merge-list semantics (tokenizers).
    alphabet = sorted({t for t in ranks if len(t) == 1})
    for text in texts:
        data = b"".join(alphabet[b % len(alphabet)] for b in text)
        assert ref_bpe(ranks, data) == merge_list_bpe(merges, data)


def test_tiktoken_format_ranks_from_merges_keeps_bytes_and_merge_results() -> None:
    vocab = {b"<|end|>": 0, b"a": 1, b"b": 2, b"c": 3, b"ab": 4, b"abc": 5, b"zz": 6}
    ranks = ranks_from_merges(vocab, [(b"a", b"b"), (b"ab", b"c")])
    # The special token and 'zz' (no merge makes it) are left out; ranks are ids, sorted.
    assert ranks == {b"a": 1, b"b": 2, b"c": 3, b"ab": 4, b"abc": 5}
    assert list(ranks.values()) == [1, 2, 3, 4, 5]


def test_tiktoken_format_ranks_from_merges_accepts_several_merges_per_token() -> None:
    # Llama 3's vocab.bpe lists every split of a token, some from parts with higher ids.
    vocab = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3, b"bb": 4}
    merges = [(b"a", b"b"), (b"ab", b"b"), (b"a", b"bb"), (b"b", b"b")]
    assert ranks_from_merges(vocab, merges) == vocab
    assert merges_from_ranks(vocab) == [(b"a", b"b"), (b"ab", b"b"), (b"b", b"b")]


def test_tiktoken_format_ranks_from_merges_last_repeat_wins() -> None:
    vocab = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    assert ranks_from_merges(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"b")]) == vocab
    with pytest.raises(ValueError, match=r"merge 1 \(b'b', b'c'\) makes id 3, but the earlier merge"):
        ranks_from_merges(vocab, [(b"a", b"b"), (b"b", b"c")])


@pytest.mark.parametrize(
    ("vocab", "merges", "error", "phrase"),
    [
        ({b"a": 0, b"b": 1}, [(b"a", b"b")], ValueError, r"its result b'ab' is not in vocab"),
        ({b"a": 0, b"ab": 1}, [(b"a", b"b")], ValueError, r"its right part b'b' is not in vocab"),
        ({b"a": 0, b"b": 0}, [], ValueError, "gives rank 0 to both"),
        ({b"a": 0, b"b": 1, b"ab": 2}, [("a", "b")], TypeError, "merge 0 must be a pair of non-empty bytes"),
        ({b"a": 0, b"b": 1, b"ab": 2}, {(b"a", b"b")}, TypeError, "merges must be a sequence"),
        ({"a": 0}, [], TypeError, "vocab keys must be bytes"),
        ([(b"a", 0)], [], TypeError, "vocab must be a mapping"),
    ],
)
def test_tiktoken_format_ranks_from_merges_rejects_bad_input(
    vocab: object, merges: object, error: type[Exception], phrase: str
) -> None:
    with pytest.raises(error, match=phrase):
        ranks_from_merges(vocab, merges)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------------
# Real files
# ----------------------------------------------------------------------------------------------------------------


# Loaded and recovered once per session: o200k is 200k tokens.
@functools.cache
def cached_ranks(path: Path) -> dict[bytes, int]:
    return load_tiktoken(path)


@functools.cache
def cached_merges(path: Path) -> list[tuple[bytes, bytes]]:
    return merges_from_ranks(cached_ranks(path))


def read_vocab_json(path: Path) -> dict[bytes, int]:
    """vocab.json -> {bytes: id}, leaving out entries not spelled in the byte-level alphabet."""
    out = {}
    for text, idx in json.loads(path.read_text(encoding="utf-8")).items():
        try:
            out[str_to_token(text)] = idx
        except ValueError:
            pass
    return out


def read_merges_txt(path: Path) -> list[tuple[bytes, bytes]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines[0].startswith("#version"):
        lines = lines[1:]
    return [(str_to_token(a), str_to_token(b)) for a, b in (line.split(" ") for line in lines if line)]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["gpt2", "multilingual", "qwen_v1"])
def test_tiktoken_format_dump_is_byte_identical_shared(shared_data: Path, name: str) -> None:
    path = shared_data / "tiktoken" / f"{name}.tiktoken"
    assert dump_tiktoken(cached_ranks(path)).encode("ascii") == path.read_bytes()


@pytest.mark.parametrize("name", list(OPENAI))
def test_tiktoken_format_dump_is_byte_identical_openai(openai_file, name: str) -> None:
    path = openai_file(name)
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == OPENAI[name][2]  # the file tiktoken itself would download
    ranks = cached_ranks(path)
    assert len(ranks) == OPENAI[name][3] and sorted(ranks.values()) == list(range(len(ranks)))
    assert dump_tiktoken(ranks).encode("ascii") == data


@pytest.mark.crossval
@pytest.mark.shared_data
def test_tiktoken_format_load_equals_tiktoken_loader(shared_data: Path, openai_file, monkeypatch) -> None:
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the local file; no cache written to /tmp
    for path in [shared_data / "tiktoken" / "multilingual.tiktoken", openai_file("cl100k_base")]:
        assert load_tiktoken(path) == load_tiktoken_bpe(str(path))


@pytest.mark.shared_data
def test_tiktoken_format_gpt2_ranks_are_vocab_json_ids(shared_data: Path) -> None:
    ranks = cached_ranks(shared_data / "tiktoken" / "gpt2.tiktoken")
    vocab = read_vocab_json(shared_data / "vocabs" / "gpt2" / "vocab.json")
    assert len(ranks) == 50_256
    assert {token: idx for token, idx in vocab.items() if token != b"<|endoftext|>"} == ranks
    assert vocab[b"<|endoftext|>"] == 50_256


@pytest.mark.shared_data
def test_tiktoken_format_gpt2_merges_recovered_exactly(shared_data: Path) -> None:
    path = shared_data / "tiktoken" / "gpt2.tiktoken"
    ranks = cached_ranks(path)
    vocab = read_vocab_json(shared_data / "vocabs" / "gpt2" / "vocab.json")
    merges_txt = read_merges_txt(shared_data / "vocabs" / "gpt2" / "merges.txt")
    recovered = cached_merges(path)
    assert set(recovered) == set(merges_txt)
    assert recovered == merges_txt  # same order: merge rank r makes id 256 + r
    assert recovered == ref_merges_from_ranks(ranks)
    assert ranks_from_merges(vocab, merges_txt) == ranks


@pytest.mark.shared_data
def test_tiktoken_format_qwen2_files_equal_qwen_v1_ranks(shared_data: Path) -> None:
    # Qwen2's vocab.json + merges.txt are the Qwen v1 tiktoken ranks, converted one merge per token.
    path = shared_data / "tiktoken" / "qwen_v1.tiktoken"
    vocab = read_vocab_json(shared_data / "vocabs" / "qwen2" / "vocab.json")
    merges_txt = read_merges_txt(shared_data / "vocabs" / "qwen2" / "merges.txt")
    assert ranks_from_merges(vocab, merges_txt) == cached_ranks(path)
    assert cached_merges(path) == merges_txt


@pytest.mark.shared_data
def test_tiktoken_format_whisper_empty_token_drops_on_round_trip(shared_data: Path) -> None:
    path = shared_data / "tiktoken" / "multilingual.tiktoken"
    ranks = cached_ranks(path)
    assert ranks[b""] == 50_256
    assert ranks_from_merges(ranks, cached_merges(path)) == {t: r for t, r in ranks.items() if t}


@pytest.mark.shared_data
def test_tiktoken_format_roberta_has_no_tiktoken_form(shared_data: Path) -> None:
    vocab = read_vocab_json(shared_data / "vocabs" / "roberta" / "vocab.json")
    merges_txt = read_merges_txt(shared_data / "vocabs" / "roberta" / "merges.txt")
    with pytest.raises(ValueError, match=r"merge 1 \(b' ', b'a'\) makes id 10, but the earlier merge"):
        ranks_from_merges(vocab, merges_txt)


@pytest.mark.slow
@pytest.mark.shared_data
def test_tiktoken_format_llama3_extends_cl100k_with_unbuildable_tokens(shared_data: Path, openai_file) -> None:
    # Llama 3 = cl100k's 100,256 ranks + 27,744 tokens, 678 of which no merge of two lower ranks builds
    # ('.:.:' merges to ['.', ':.', ':'] below its rank); its vocab.bpe lists every split instead.
    vocab = read_vocab_json(shared_data / "vocabs" / "llama3" / "encoder.json")
    ranks = ranks_from_merges(vocab, read_merges_txt(shared_data / "vocabs" / "llama3" / "vocab.bpe"))
    assert ranks == vocab
    assert {t: r for t, r in ranks.items() if r < 100_256} == cached_ranks(openai_file("cl100k_base"))
    with pytest.raises(ValueError, match=r"token b'\.:\.:' \(rank 100421\) cannot be built"):
        merges_from_ranks(ranks)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OPENAI))
def test_tiktoken_format_openai_ranks_merges_ranks_round_trip(openai_file, name: str) -> None:
    path = openai_file(name)
    ranks = cached_ranks(path)
    merges = cached_merges(path)  # ~0.6 s (cl100k) and ~1.5 s (o200k): measured, not asserted (no test may time)
    assert len(merges) == len(ranks) - 256
    assert ranks_from_merges(ranks, merges) == ranks
    # The recovered pair of a sample of tokens, against the obvious quadratic replay.
    for token, rank in list(ranks.items())[256::97]:
        assert merges[rank - 256] == tuple(ref_bpe(ranks, token, rank))


def corpus_texts(shared: Path) -> list[str]:
    """About 300 real snippets (3 lines each): English, Chinese, UDHR in many languages, Genesis, Japanese."""
    corpora = shared / "corpora"
    sources = [
        (corpora / "en" / "english_combined.txt", 100),
        *[(path, 20) for path in sorted((corpora / "zh").glob("*.txt"))],
        (corpora / "multi" / "udhr2_all_lang_tab_line.tsv", 80),
        *[(path, 5) for path in sorted((corpora / "multi" / "genesis").glob("*.txt"))],
        (corpora / "multi" / "ja_wagahaiwa_nekodearu.txt", 20),
    ]
    texts = []
    for path, count in sources:
        lines = path.read_text(encoding="utf-8").split("\n")
        step = max(1, len(lines) // count)
        texts += ["\n".join(lines[i : i + 3]) for i in range(0, len(lines), step)][:count]
    return texts


@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("name", list(OPENAI))
def test_tiktoken_format_recovered_merges_encode_like_tiktoken(shared_data: Path, openai_file, name: str) -> None:
    """tiktoken (ranks), tokenizers' BPE (recovered merge list) and hf_bpe's BPEModel give the same ids."""
    import regex
    import tiktoken
    from tokenizers.models import BPE

    pattern_name, pat_str, _, _ = OPENAI[name]
    path = openai_file(name)
    ranks, merges = cached_ranks(path), cached_merges(path)
    texts = corpus_texts(shared_data)
    assert len(texts) >= 300
    encoding = tiktoken.Encoding(f"{name}_local", pat_str=pat_str, mergeable_ranks=ranks, special_tokens={})
    expected = [encoding.encode_ordinary(text) for text in texts]

    # tokenizers' BPE model allows only the listed merges: equal ids prove the list is tiktoken's merging.
    bpe = BPE({token_to_str(t): r for t, r in ranks.items()}, [(token_to_str(a), token_to_str(b)) for a, b in merges])
    split = regex.compile(pat_str)
    by_tokenizers = [
        [tok.id for piece in split.findall(text) for tok in bpe.tokenize(token_to_str(piece.encode("utf-8")))]
        for text in texts
    ]
    mismatches = [i for i, (a, b) in enumerate(zip(expected, by_tokenizers)) if a != b]
    assert not mismatches, f"tokenizers differs on {len(mismatches)} texts, first: {texts[mismatches[0]][:200]!r}"

    from hf_bpe.model.bpe import BPEModel

    model = BPEModel(ranks, merges, pattern=pattern_name)
    got = [model.encode_ordinary(text) for text in texts]
    mismatches = [i for i, (a, b) in enumerate(zip(expected, got)) if a != b]
    assert not mismatches, f"hf_bpe differs on {len(mismatches)} texts, first: {texts[mismatches[0]][:200]!r}"
