"""Pre-token counts as a seam: shards add up, save/load round-trips, and training from the sum equals training."""

from __future__ import annotations

from array import array

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.errors import InputError
from hf_bpe.training.counts import WordCounts

MODEL_FILES = ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _lines(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    words = ["low", "lower", "newest", "widest", "中文", "café", "I'M", "12345", "x=1;", "  ", "\t", "don't"]
    return [" ".join(rnd.choices(words, k=rnd.randint(1, 9))) + rnd.choice(["\n", "", "\r\n"]) for _ in range(n)]


def _shards(lines: list[str], k: int) -> list[list[str]]:
    return [lines[i::k] for i in range(k)]


def _files(model: hf_bpe.BPEModel, folder: Path) -> dict[str, bytes]:
    out = model.save(folder)
    return {name: (out / name).read_bytes() for name in MODEL_FILES}


@pytest.mark.parametrize("options", [
    {},
    {"pattern": "gpt4", "special_tokens": ["<|endoftext|>"], "min_frequency": 2},
    {"pattern": "llama3", "add_prefix_space": True, "max_token_length": 4},
])
def test_counts_sum_of_shards_trains_byte_identical_files(tmp_path, options):
    lines = _lines(1, 600)
    count_options = {k: v for k, v in options.items() if k in ("pattern", "add_prefix_space")}
    train_options = {k: v for k, v in options.items() if k not in count_options}
    shards = [WordCounts.from_corpus(s, show_progress=False, **count_options) for s in _shards(lines, 4)]
    whole = hf_bpe.train(lines, vocab_size=290, show_progress=False, **options)
    summed = hf_bpe.train_from_counts(sum(shards), vocab_size=290, show_progress=False, **train_options)
    assert _files(summed, tmp_path / "sum") == _files(whole, tmp_path / "whole")


def test_counts_sum_equals_counting_the_whole_and_keeps_the_multiset_fingerprint():
    lines = _lines(2, 300)
    whole = WordCounts.from_corpus(lines, show_progress=False)
    shards = [WordCounts.from_corpus(s, show_progress=False) for s in _shards(lines, 3)]
    assert sum(shards) == whole == shards[0] + shards[1] + shards[2]
    assert whole.fingerprint["order"] == "multiset" and whole.documents == 300


def test_counts_sum_of_ordered_fingerprints_keeps_none():
    a = WordCounts.from_corpus(["a b"], corpus_order="sequence", show_progress=False)
    b = WordCounts.from_corpus(["c"], corpus_order="sequence", show_progress=False)
    assert (a + b).fingerprint is None and (a + b).documents == 2


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=30), st.integers(1, 5))
def test_counts_any_split_adds_up_to_the_whole(texts, k):
    whole = WordCounts.from_corpus(texts, show_progress=False, workers=1)
    assert sum(WordCounts.from_corpus(s, show_progress=False, workers=1) for s in _shards(texts, k)) == whole


def test_counts_save_load_round_trips_exactly_above_2_32(tmp_path):
    counts = WordCounts({b"the": 2**40 + 3, b" \xc3\xbf": 2**63 - 1, b"x": 1}, pattern="gpt4", documents=5,
                        total_bytes=2**35)
    path = counts.save(tmp_path / "c.parquet")
    assert WordCounts.load(path) == counts
    # The same counts, inserted in another order, give the same bytes.
    again = WordCounts(dict(reversed(list(counts.items()))), pattern="gpt4", documents=5, total_bytes=2**35)
    assert again.save(tmp_path / "d.parquet").read_bytes() == path.read_bytes()
    with pytest.raises(FileExistsError):
        counts.save(path)


def test_counts_refuses_other_options_naming_both(tmp_path):
    a = WordCounts.from_corpus(["hello world"], show_progress=False).save(tmp_path / "a.parquet")
    b = WordCounts.from_corpus(["hello world"], pattern="gpt4", show_progress=False).save(tmp_path / "b.parquet")
    with pytest.raises(InputError, match=r"b\.parquet.*gpt4.*a\.parquet.*gpt2"):
        WordCounts.load_all([a, b])
    with pytest.raises(ValueError, match="different options"):
        WordCounts.load(a) + WordCounts.load(b)
    # Two spellings of one pattern count the same.
    c = WordCounts.from_corpus(["hello world"], pattern="cl100k", show_progress=False)
    assert (WordCounts.load(b) + c).documents == 2


def test_counts_refuses_bad_files_and_overflow(tmp_path):
    good = WordCounts({b"a": 2**62 + 1}, documents=1, total_bytes=1).save(tmp_path / "good.parquet")
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[:-20])
    text = tmp_path / "text.parquet"
    text.write_text("not parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"word": ["a"], "n": [1]}), foreign)
    for bad, message in ((truncated, "not a readable Parquet"), (text, "not a readable Parquet"),
                         (foreign, "not hf_bpe counts")):
        with pytest.raises(InputError, match=message):
            WordCounts.load(bad)
    with pytest.raises(InputError, match="overflows"):
        WordCounts.load_all([good, good])
    with pytest.raises(InputError, match="non-empty list"):
        WordCounts.load_all([])
    with pytest.raises(FileNotFoundError, match="hf-bpe count"):
        WordCounts.load(tmp_path / "absent.parquet")
    with pytest.raises(ValueError, match="1..2\\*\\*63-1"):
        WordCounts({b"a": 2**63})


def test_counts_cli_count_then_train_equals_train(tmp_path, capsys):
    lines = _lines(3, 400)
    files = []
    for i, shard in enumerate(_shards(lines, 2)):
        files.append(tmp_path / f"s{i}.txt")
        files[-1].write_text("".join(line if line.endswith("\n") else line + "\n" for line in shard), encoding="utf-8")
    for i, f in enumerate(files):
        assert main(["count", str(f), "--out", str(tmp_path / f"s{i}.parquet"), "--quiet"]) == 0
    assert main(["train", "--counts", str(tmp_path / "s0.parquet"), str(tmp_path / "s1.parquet"),
                 "--vocab-size", "320", "--out", str(tmp_path / "from_counts"), "--quiet"]) == 0
    assert main(["train", *map(str, files), "--vocab-size", "320", "--out", str(tmp_path / "direct"), "--quiet"]) == 0
    for name in MODEL_FILES:
        assert (tmp_path / "from_counts" / name).read_bytes() == (tmp_path / "direct" / name).read_bytes(), name
    # The model trained from counts verifies against the whole corpus (the multiset fingerprint is a sum).
    assert main(["verify", str(tmp_path / "from_counts"), "--corpus", *map(str, files), "--quiet"]) == 0
    assert "verified: everything matches" in capsys.readouterr().out


def test_counts_cli_bad_input_writes_nothing(tmp_path, capsys):
    (tmp_path / "bad.parquet").write_text("nope")
    out = tmp_path / "out"
    assert main(["train", "--counts", str(tmp_path / "bad.parquet"), "--out", str(out), "--quiet"]) == 2
    assert "not a readable Parquet" in capsys.readouterr().err and not out.exists()
    (tmp_path / "c.txt").write_text("hello\n", encoding="utf-8")
    assert main(["train", "--counts", str(tmp_path / "bad.parquet"), str(tmp_path / "c.txt"), "--out", str(out)]) == 2
    assert main(["train", "--counts", str(tmp_path / "bad.parquet"), "--pattern", "gpt4", "--out", str(out)]) == 2
    assert "record the pre-tokenizer" in capsys.readouterr().err
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    assert main(["count", str(tmp_path / "empty.txt"), "--out", str(tmp_path / "e.parquet"), "--quiet"]) == 2
    assert "empty" in capsys.readouterr().err and not (tmp_path / "e.parquet").exists()
    assert not out.exists()


def _rewrite(source, target, tokens=None, meta=None):
    """A copy of the counts file ``source`` with other tokens or metadata (as a damaged or hostile file has)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hf_bpe.training.counts import _METADATA_KEY

    table = pq.read_table(source)
    recorded = json.loads(table.schema.metadata[_METADATA_KEY])
    if tokens is not None:
        table = pa.table({"token": pa.array(tokens, pa.binary()), "count": table.column("count")})
    table = table.replace_schema_metadata({_METADATA_KEY: json.dumps({**recorded, **(meta or {})}).encode()})
    pq.write_table(table, target)
    return target


@pytest.mark.parametrize(("tokens", "meta", "message"), [
    ([b"ab", b"\xff\xfe"], None, r"holds the pre-token b'\\xff\\xfe', which is not UTF-8 \(invalid start byte\)"),
    ([b"\xc3", b"\xa9"], None, r"holds the pre-token b'\\xc3', which is not UTF-8"),
    ([b"ab", b"\xed\xa0\x80"], None, r"which is not UTF-8"),  # a surrogate
    (None, {"pattern_regex": "\\w+"}, r"its metadata names the pattern 'gpt2' \(regex .*\) but records the regex "
                                       r"'\\\\w\+'; the two disagree"),
    (None, {"pattern": "gpt4"}, r"names the pattern 'gpt4' .* the two disagree"),
])
def test_counts_load_refuses_pre_tokens_no_text_gives_and_a_pattern_its_regex_denies(tmp_path, capsys, tokens, meta,
                                                                                    message):
    # Issue 33.5: such a file trained a tokenizer whose pre-tokenizer its counts were not made with.
    good = WordCounts({b"ab": 3, b" c": 2}, documents=1, total_bytes=5).save(tmp_path / "good.parquet")
    assert WordCounts.load(_rewrite(good, tmp_path / "same.parquet")) == WordCounts.load(good)
    bad = _rewrite(good, tmp_path / "bad.parquet", tokens, meta)
    with pytest.raises(InputError, match=message):
        WordCounts.load(bad)
    assert main(["train", "--counts", str(bad), "--vocab-size", "260", "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hf-bpe: error: {str(bad)!r}") and err.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.shared_data
def test_counts_four_shards_of_english_combined_train_identical_files(shared_data, tmp_path):
    corpus = shared_data / "corpora" / "en" / "english_combined.txt"
    data = corpus.read_bytes()
    # Cut the file's bytes into 4 shards at line ends: together they hold exactly the file's lines.
    cuts = [0] + [data.index(b"\n", len(data) * i // 4) + 1 for i in (1, 2, 3)] + [len(data)]
    paths = []
    for i in range(4):
        paths.append(tmp_path / f"shard{i}.txt")
        paths[-1].write_bytes(data[cuts[i]:cuts[i + 1]])
    shards = [WordCounts.from_corpus(p, show_progress=False) for p in paths]
    whole = hf_bpe.train(corpus, vocab_size=32000, show_progress=False)
    summed = hf_bpe.train_from_counts(sum(shards), vocab_size=32000, show_progress=False)
    assert _files(summed, tmp_path / "sum") == _files(whole, tmp_path / "whole")


# -- the flat path: train() hands the compiled tally's buffers to the merge loop (no Python object per pre-token) --

_FLAT_TEXT = st.lists(st.sampled_from(list("ab c\n\t1'é中🙂") + ["don't", "  ", "x=1;", "\r\n", "Low"]),
                      max_size=20).map("".join)


def _dict_counts(counts: WordCounts) -> WordCounts:
    """The same counts as a plain dict (read through the Mapping API)."""
    return WordCounts(dict(counts.items()), pattern=counts.pattern, add_prefix_space=counts.add_prefix_space,
                      documents=counts.documents, total_bytes=counts.total_bytes, fingerprint=counts.fingerprint)


@pytest.mark.parametrize("pattern", sorted(hf_bpe.PATTERNS))
@settings(max_examples=12, deadline=None)
@given(texts=st.lists(_FLAT_TEXT, min_size=1, max_size=25), workers=st.sampled_from([1, 2]),
       as_file=st.booleans(), add_prefix_space=st.booleans(), vocab_size=st.integers(256, 330))
def test_counts_flat_train_equals_train_from_dict_counts(pattern, texts, workers, as_file, add_prefix_space,
                                                          vocab_size):
    import tempfile
    import warnings

    options = {"pattern": pattern, "add_prefix_space": add_prefix_space, "workers": workers}
    with tempfile.TemporaryDirectory() as folder:
        corpus: list = texts
        if as_file:  # files go through the tally's line blocks, texts through its batches
            corpus = [Path(folder) / "corpus.txt"]
            corpus[0].write_text("\n".join(texts), encoding="utf-8", newline="")
        counts = WordCounts.from_corpus(corpus, show_progress=False, **options)
        assert counts._flat is not None  # the flat form, kept until read as a mapping
        if counts.documents == 0 or not len(counts):
            return
        as_dict = _dict_counts(counts)
        assert counts._flat is None and as_dict == counts  # read: the dict made once, the flat form dropped
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "ran out of mergeable pairs", alike on both sides
            flat = hf_bpe.train(corpus, vocab_size=vocab_size, show_progress=False, **options)
            from_dict = hf_bpe.train_from_counts(as_dict, vocab_size=vocab_size, show_progress=False)
    assert flat.merges == from_dict.merges
    rendered, expected = flat.files(), from_dict.files()
    assert {name: rendered[name] for name in MODEL_FILES} == {name: expected[name] for name in MODEL_FILES}


def test_counts_flat_form_behaves_as_the_dict(tmp_path):
    lines = _lines(3, 6000)  # ~150K characters: counted on two threads, the flat form in first-seen order still
    made = [WordCounts.from_corpus(lines, show_progress=False, workers=2) for _ in range(4)]
    assert all(c._flat is not None for c in made)
    plain = _dict_counts(WordCounts.from_corpus(lines, show_progress=False))
    assert len(made[0]) == len(plain) and made[0]._flat is not None  # len() reads the flat form
    assert repr(made[0]) == repr(plain)
    assert made[0] == plain and plain == made[1]
    assert list(made[2].keys()) == list(plain.keys()) and list(made[2].items()) == list(plain.items())
    assert made[3][b"low"] == plain[b"low"] and set(made[3]) == set(plain)
    flat = WordCounts.from_corpus(lines, show_progress=False)
    assert flat.save(tmp_path / "flat.parquet").read_bytes() == plain.save(tmp_path / "plain.parquet").read_bytes()
    assert WordCounts.load(tmp_path / "flat.parquet") == plain
    shard = WordCounts.from_corpus(lines[:50], show_progress=False)
    assert WordCounts.from_corpus(lines, show_progress=False) + shard == plain + _dict_counts(shard)
    from hf_bpe.training.counts import Pretokenizer, count_words

    assert list(count_words(lines, Pretokenizer("gpt2"), workers=2)[0].items()) == list(plain.items())
    trained = hf_bpe.train(lines, vocab_size=350, workers=2, show_progress=False)
    assert trained.merges == hf_bpe.train_from_counts(plain, vocab_size=350, show_progress=False).merges


def test_counts_flat_buffers_round_trip_and_the_merge_loop_takes_them():
    from hf_bpe.core import _core
    from hf_bpe.core._tally import FlatCounts

    counts = {b"low": 5, b" lower": 2, b"\xe4\xb8\xad": 3, b"a": 1}
    flat = FlatCounts.from_dict(counts)
    assert flat.to_dict() == counts and list(flat.to_dict()) == list(counts) and len(flat) == 4
    assert flat.blob == b"low lower\xe4\xb8\xada" and list(flat.ends) == [3, 9, 12, 13]
    options = {"vocab_size": 270, "special_tokens": ["<s>"], "max_token_length": 3}
    vocab, merges = _core.train_merges(list(counts), list(counts.values()), **options)
    assert _core.train_merges_flat(flat, **options) == (vocab, array("i", [i for triple in merges for i in triple]))
    _core.train_merges_flat(flat, consume=True, **options)
    assert len(flat) == 0 and flat.blob == b""  # consumed: emptied once copied
    # A count the flat checks refuse goes the lists' way: the reference's error, word for word.
    huge = FlatCounts.from_dict({b"ab": 2**62})
    with pytest.raises(ValueError, match="above 2\\*\\*61"):
        _core.train_merges_flat(huge, vocab_size=300)
    with pytest.raises(TypeError, match="non-empty bytes"):
        FlatCounts.from_dict({"low": 1})
    with pytest.raises(ValueError, match="1..2\\*\\*63-1"):
        FlatCounts.from_dict({b"low": 0})
