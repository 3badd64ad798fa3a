"""hf_bpe.extend: every base id, token, merge and special kept; BpeTrainer's loop continued from the base's own
segmentation; the compiled seeded loop equal to its spec; the consistency checks; real vocabularies and loaders."""

from __future__ import annotations

import functools
import json
import random
import shutil
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hf_bpe
from hf_bpe import BPEModel
from hf_bpe.cli import main
from hf_bpe.core import _core, _reference, _reference_continue
from hf_bpe.formats.manifest import MANIFEST_NAME
from hf_bpe.tools.extend import load_base
from hf_bpe.training.bpe.extend import extend_from_counts, extend_model, seed_keys
from hf_bpe.training.counts import WordCounts
from helpers import first_lines

_ALPHABETS = ["ab ", "abc  ", "aab c\n", "éa b", "aaaa", "aaab", "ababa", "中文中 a", "xyz x'", "1 22 333"]


@st.composite
def small_corpora(draw: st.DrawFn) -> list[str]:
    alphabet = draw(st.sampled_from(_ALPHABETS))
    return draw(st.lists(st.text(alphabet=alphabet, min_size=1, max_size=30), min_size=1, max_size=20))


def quiet_train(texts: list[str], **options: object) -> BPEModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small corpora run out of pairs
        return hf_bpe.train(texts, show_progress=False, **options)


def quiet_extend(base: BPEModel, texts: list[str], **options: object) -> BPEModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extend_model(base, texts, show_progress=False, **options)


def files_but_manifest(model: BPEModel) -> dict[str, str]:
    return {name: text for name, text in model.files().items() if name != MANIFEST_NAME}


def assert_contract(base: BPEModel, extended: BPEModel) -> None:
    """Contract point 1 and 2: ids, bytes, merges prefix, specials, roles, options; new ids after the largest."""
    for token, index in base.vocab.items():
        assert extended.vocab[token] == index
    assert extended.merges[: len(base.merges)] == base.merges
    assert dict(extended.special_tokens) == dict(base.special_tokens)
    assert dict(extended.roles) == dict(base.roles)
    assert (extended.pattern, extended.add_prefix_space, extended.ignore_merges) == (
        base.pattern, base.add_prefix_space, base.ignore_merges)
    new_ids = sorted(i for t, i in extended.vocab.items() if t not in base.vocab)
    assert new_ids == list(range(base.vocab_size, extended.vocab_size))
    for left, right in extended.merges[len(base.merges):]:
        assert left + right in extended.vocab


# -- the seeded merge loop: compiled == reference, and train_merges is its special case ---------------------------

@st.composite
def seeded_states(draw: st.DrawFn) -> tuple[list[bytes | None], list[list[int]], list[int], dict[str, object]]:
    """A vocabulary of bytes plus a few multi-byte tokens (holes and reuse included) and random id words."""
    extra = draw(st.lists(st.sampled_from([b"ab", b"abc", b"ba", b"aa", b"aab", b"bc", b"cab"]), max_size=6))
    keys: list[bytes | None] = [bytes([b]) for b in range(256)]
    for token in extra:
        keys.append(None if draw(st.booleans()) and len(keys) % 3 == 0 else token)
    usable = [97, 98, 99] + [i for i in range(256, len(keys)) if keys[i] is not None]
    words = draw(st.lists(st.lists(st.sampled_from(usable), min_size=1, max_size=8), min_size=1, max_size=12))
    counts = draw(st.lists(st.integers(1, 9), min_size=len(words), max_size=len(words)))
    options = {"vocab_size": len(keys) + draw(st.integers(0, 12)),
               "min_frequency": draw(st.sampled_from([0, 0, 2, 5])),
               "max_token_length": draw(st.sampled_from([None, None, 1, 2, 3, 5]))}
    return keys, words, counts, options


@given(seeded_states())
def test_continue_merges_compiled_equals_reference(state) -> None:
    keys, words, counts, options = state
    expected = _reference_continue.continue_merges(words, counts, keys=keys, **options)
    assert _core.continue_merges(words, counts, keys=keys, **options) == expected


@given(small_corpora(), st.integers(0, 40), st.sampled_from([None, None, 1, 2, 3, 4]))
def test_continue_merges_from_bytes_is_train_merges(texts: list[str], merges: int, max_len: int | None) -> None:
    counts = WordCounts.from_corpus(texts, show_progress=False)
    words, word_counts = list(counts.keys()), list(counts.values())
    vocab, expected = _reference.train_merges(words, word_counts, vocab_size=256 + merges, max_token_length=max_len)
    keys = [bytes([b]) for b in _reference.BYTE_ORDER]
    ids = {key: i for i, key in enumerate(keys)}
    sequences = [[ids[bytes([b])] for b in word] for word in words]
    for continue_merges in (_reference_continue.continue_merges, _core.continue_merges):
        assert continue_merges(sequences, word_counts, keys=keys, vocab_size=256 + merges,
                               max_token_length=max_len) == (vocab, expected)


@given(small_corpora(), small_corpora(), st.integers(0, 20), st.sampled_from([None, None, 2, 3]))
def test_continue_from_words_is_continue_merges_on_the_encodings(base_texts: list[str], texts: list[str], more: int,
                                                                  max_len: int | None) -> None:
    base = quiet_train(base_texts, vocab_size=256 + more)
    counts = WordCounts.from_corpus(texts, show_progress=False)
    words, word_counts = list(counts.keys()), list(counts.values())
    options = {"keys": seed_keys(base), "vocab_size": base.vocab_size + more, "max_token_length": max_len}
    expected = _reference_continue.continue_merges([base.encode_word(w) for w in words], word_counts, **options)
    assert _core.continue_merges_from_words(base.word_encoder, words, word_counts, **options) == expected


def test_continue_merges_checks_its_input() -> None:
    keys = [bytes([b]) for b in range(256)]
    for bad, kind, words in (({"vocab_size": 10}, ValueError, [[1, 2]]), ({"vocab_size": 300}, ValueError, [[1, 999]]),
                             ({"vocab_size": 300, "min_frequency": -1}, ValueError, [[1, 2]])):
        for continue_merges in (_reference_continue.continue_merges, _core.continue_merges):
            with pytest.raises(kind):
                continue_merges(words, [1], keys=keys, **bad)


# -- the consistency checks ------------------------------------------------------------------------------------------

@given(small_corpora(), st.integers(0, 20), st.sampled_from([None, None, 2, 3]))
def test_extend_by_zero_gives_the_base_files(texts: list[str], merges: int, max_len: int | None) -> None:
    base = quiet_train(texts, vocab_size=257 + merges, special_tokens=["<|endoftext|>"], max_token_length=max_len,
                       eos_token="<|endoftext|>")
    extended = extend_model(base, texts, new_tokens=0, show_progress=False)
    ours, theirs = extended.files(), base.files()
    assert {n: t for n, t in ours.items() if n != MANIFEST_NAME} == {n: t for n, t in theirs.items() if n != MANIFEST_NAME}
    assert json.loads(ours[MANIFEST_NAME])["files"] == json.loads(theirs[MANIFEST_NAME])["files"]


@given(small_corpora(), st.integers(0, 30), st.integers(0, 30), st.sampled_from([None, None, 1, 2, 3, 4]),
       st.sampled_from([[], ["<s>"], ["a", "<|x|>"]]))
def test_extending_a_trained_base_on_its_corpus_is_training_longer(texts: list[str], first: int, more: int,
                                                                   max_len: int | None, specials: list[str]) -> None:
    # Exact statement: the BpeTrainer state after V ids is, word for word, the base's encoding of the word (each
    # merge's pair is in one heap entry listing every word holding it, so every occurrence is merged in rank order),
    # and the seeded loop counts pairs as the loop would have (byte pairs always, longer ones under max_len).
    size = len(specials) + 256 + first
    base = quiet_train(texts, vocab_size=size, special_tokens=specials, max_token_length=max_len)
    longer = quiet_train(texts, vocab_size=max(size, base.vocab_size) + more, special_tokens=specials,
                         max_token_length=max_len)
    extended = quiet_extend(base, texts, vocab_size=max(size, base.vocab_size) + more, max_token_length=max_len)
    assert files_but_manifest(extended) == files_but_manifest(longer)


@pytest.mark.shared_data
@pytest.mark.slow
def test_extending_a_trained_base_on_english_is_training_longer(shared_data: Path) -> None:
    lines = first_lines(shared_data / "corpora" / "en" / "english_combined.txt", 20000)
    base = hf_bpe.train(lines, vocab_size=2000, show_progress=False)
    longer = hf_bpe.train(lines, vocab_size=4000, show_progress=False)
    extended = extend_model(base, lines, vocab_size=4000, show_progress=False)
    assert files_but_manifest(extended) == files_but_manifest(longer)


def untouched_by(base: BPEModel, extended: BPEModel) -> Callable[[str], bool]:
    """The contract's condition on a text, from the base alone: none of its pre-tokens, as the base encodes them,
    holds two neighbouring tokens a new merge joins (nor, with ignore_merges, is a new token)."""
    new_pairs = {(extended.vocab[a], extended.vocab[b]) for a, b in extended.merges[len(base.merges):]}

    def untouched(piece: bytes) -> bool:
        if extended.ignore_merges and extended.vocab.get(piece, -1) >= base.vocab_size:
            return False
        ids = base.encode_word(piece)
        return not any(pair in new_pairs for pair in zip(ids, ids[1:]))

    return lambda text: all(map(untouched, base.pretokenizer.split_bytes(text)))


def assert_untouched_text_same(base: BPEModel, extended: BPEModel, texts: list[str]) -> int:
    """Contract point (c): a text none of whose pre-tokens, as the base encodes them, holds a pair a new merge names
    (nor, with ignore_merges, is a new token) encodes to the same ids. Returns how many texts were untouched."""
    untouched = untouched_by(base, extended)
    same = 0
    for text in texts:
        if untouched(text):
            assert extended.encode_ordinary(text) == base.encode_ordinary(text)
            same += 1
    return same


@given(small_corpora(), small_corpora(), st.integers(0, 20))
def test_text_the_new_merges_do_not_touch_encodes_as_before(texts: list[str], other: list[str], more: int) -> None:
    base = quiet_train(other, vocab_size=270)
    extended = quiet_extend(base, texts, new_tokens=more)
    assert_contract(base, extended)
    assert_untouched_text_same(base, extended, texts + other)


@given(small_corpora(), small_corpora(), small_corpora(), st.integers(0, 20), st.booleans())
def test_text_encodes_as_before_exactly_when_no_new_merge_joins_neighbours_of_its_base_encoding(
        texts: list[str], other: list[str], probes: list[str], more: int, ignore_merges: bool) -> None:
    # Issue 33.11: "untouched text encodes as before", stated exactly (hf_bpe.extend's docstring,
    # docs/guides/extending.md): a text encodes to the same ids if and only if none of its pre-tokens, as the base
    # encodes them, holds two neighbouring tokens that a new merge joins (with ignore_merges: nor is a new token).
    base = quiet_train(other, vocab_size=270)
    if ignore_merges:
        base = BPEModel(base.vocab, base.merges, pattern=base.pattern, ignore_merges=True)
    extended = quiet_extend(base, texts, new_tokens=more)
    untouched = untouched_by(base, extended)
    for text in texts + other + probes:
        assert (extended.encode_ordinary(text) == base.encode_ordinary(text)) == untouched(text), text


def test_first_new_merge_is_the_most_frequent_pair_of_the_base_encodings() -> None:
    base = quiet_train(["the cat sat on the mat"] * 3, vocab_size=265)
    texts = ["東京 東京都 京都", "東京都庁"] * 5
    extended = extend_model(base, texts, new_tokens=1, show_progress=False)
    pairs: Counter[tuple[int, int]] = Counter()
    for word, count in WordCounts.from_corpus(texts, show_progress=False).items():
        ids = base.encode_word(word)
        for pair in zip(ids, ids[1:]):
            pairs[pair] += count
    best = max(pairs.items(), key=lambda item: (item[1], tuple(-i for i in item[0])))[0]
    left, right = extended.merges[-1]
    assert (extended.vocab[left], extended.vocab[right]) == best


def test_a_merge_that_rebuilds_a_base_token_reuses_its_id() -> None:
    # "abc" is a base token reached only as (ab, c); "xabc" ... "a" + "bc" is not a base merge, so the words encode
    # as [a, bc] and the new merge (a, bc) builds the existing "abc": its id is reused, as BpeTrainer does.
    vocab = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"bc": 258}
    base = BPEModel(vocab, [(b"b", b"c"), (b"ab", b"c"), (b"a", b"b")])
    assert [base.id_to_bytes(i) for i in base.encode_word(b"abc")] == [b"a", b"bc"]
    extended = extend_model(base, ["abc abc abc"], new_tokens=1, show_progress=False)
    assert extended.merges[3] == (b"a", b"bc") and extended.encode_ordinary("abc") == [257]
    assert_contract(base, extended)


def test_ignore_merges_a_word_that_is_a_token_stays_one_token() -> None:
    # Llama 3's rule: "abc" is a token reached by no merge chain from [a, bc]; with ignore_merges the base encodes the
    # pre-token "abc" as that one token, so it holds no pair to count; without, it is [a, bc].
    vocab = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"abc": 257}
    for ignore, expected in ((True, []), (False, [(b"a", b"bc")])):
        base = BPEModel(vocab, [(b"b", b"c")], ignore_merges=ignore)
        extended = quiet_extend(base, ["abc"] * 3, new_tokens=1)
        assert list(extended.merges[1:]) == expected and extended.ignore_merges is ignore


@pytest.mark.parametrize("seed", [0, 1])
def test_extending_on_mixed_scripts_is_training_longer(seed: int) -> None:
    from test_trainer import mixed_corpus

    texts = mixed_corpus(seed, 400)
    base = quiet_train(texts, vocab_size=400, special_tokens=["<|endoftext|>"], max_token_length=6 + seed)
    longer = quiet_train(texts, vocab_size=700, special_tokens=["<|endoftext|>"], max_token_length=6 + seed)
    assert files_but_manifest(quiet_extend(base, texts, vocab_size=700, max_token_length=6 + seed)) == \
        files_but_manifest(longer)


# -- the API's checks -------------------------------------------------------------------------------------------------

def test_extend_refuses_bad_sizes_and_sentencepiece(tmp_path: Path) -> None:
    base = BPEModel.bytes_only()
    with pytest.raises(TypeError, match="exactly one"):
        hf_bpe.extend(base, ["ab"], vocab_size=300, new_tokens=2)
    with pytest.raises(TypeError, match="exactly one"):
        hf_bpe.extend(base, ["ab"])
    with pytest.raises(ValueError, match="smaller than the base"):
        hf_bpe.extend(base, ["ab"], vocab_size=100)
    with pytest.raises(ValueError, match="new_tokens must be >= 0"):
        hf_bpe.extend(base, ["ab"], new_tokens=-1)
    with pytest.raises(ValueError, match="extend_sentencepiece"):
        hf_bpe.extend(tmp_path / "tokenizer.model", ["ab"], new_tokens=1)
    with pytest.raises(TypeError, match="BPEModel or the path"):
        hf_bpe.extend(42, ["ab"], new_tokens=1)
    with pytest.raises(FileNotFoundError):
        hf_bpe.extend(tmp_path / "absent", ["ab"], new_tokens=1)


def test_extend_from_counts_equals_extend_and_checks_the_pattern() -> None:
    base = quiet_train(["low lower lowest"] * 2, vocab_size=260)
    texts = ["newer wider lower"] * 3
    counts = WordCounts.from_corpus(texts, show_progress=False)
    direct = extend_model(base, texts, new_tokens=5, show_progress=False)
    assert files_but_manifest(extend_from_counts(base, counts, new_tokens=5, show_progress=False)) == \
        files_but_manifest(direct)
    with pytest.raises(ValueError, match="pattern"):
        extend_from_counts(base, WordCounts.from_corpus(texts, pattern="gpt4", show_progress=False), new_tokens=1)


# -- manifest, verify and the CLI ------------------------------------------------------------------------------------

def test_manifest_records_the_base_and_verify_reextends(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("東京 東京都 京都\n東京都庁 京都府\n" * 20, encoding="utf-8")
    base = quiet_train(["the cat sat on the mat"] * 3, vocab_size=265).save(tmp_path / "base")
    model = hf_bpe.extend(base, [corpus], new_tokens=8, show_progress=False)
    out = model.save(tmp_path / "ext")
    options = json.loads((out / MANIFEST_NAME).read_text())["options"]
    assert options["base"]["path"] == str(base.resolve()) and "vocab.json" in options["base"]["files"]
    assert hf_bpe.verify(out, corpus=[corpus]).ok
    # A changed base, then a moved one: verify says so.
    (base / "tokenizer_config.json").write_text((base / "tokenizer_config.json").read_text() + " ", encoding="utf-8")
    report = hf_bpe.verify(out, corpus=[corpus])
    assert not report.ok and any("changed since the extension" in p for p in report.problems)
    shutil.move(base, tmp_path / "moved")
    report = hf_bpe.verify(out, corpus=[corpus])
    assert not report.ok and any("no longer exists" in p for p in report.problems)


def test_verify_of_a_model_extended_from_an_object_says_why_it_cannot(tmp_path: Path) -> None:
    base = quiet_train(["the cat sat"] * 2, vocab_size=260)
    out = extend_model(base, ["the cat sat"], new_tokens=2, show_progress=False).save(tmp_path / "ext")
    report = hf_bpe.verify(out, corpus=["the cat sat"])
    assert not report.ok and any("given as a BPEModel" in p for p in report.problems)


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_extend_verify_counts_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("東京 東京都 京都\n東京都庁 京都府\n" * 20, encoding="utf-8")
    base = quiet_train(["the cat sat on the mat"] * 3, vocab_size=265).save(tmp_path / "base")
    code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 6, "--out", tmp_path / "ext", "--quiet",
                       "--held-out", 0)
    assert code == 0, err
    assert BPEModel.load(tmp_path / "ext").vocab_size == 271
    assert run(capsys, "verify", tmp_path / "ext", "--corpus", corpus)[0] == 0
    # --counts gives the same files (the manifest apart: the counts' fingerprint is a multiset one).
    assert run(capsys, "count", corpus, "--out", tmp_path / "c.parquet", "--quiet")[0] == 0
    code, _, err = run(capsys, "extend", base, "--counts", tmp_path / "c.parquet", "--vocab-size", 271,
                       "--out", tmp_path / "ext2", "--quiet")
    assert code == 0, err
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        assert (tmp_path / "ext" / name).read_bytes() == (tmp_path / "ext2" / name).read_bytes()
    # Errors: one line, exit 2.
    for argv, message in (
        ([base, corpus, "--new-tokens", 6, "--out", tmp_path / "ext"], "--force"),
        ([base, "--new-tokens", 6, "--out", tmp_path / "e3"], "give the corpus"),
        ([tmp_path / "absent", corpus, "--new-tokens", 6, "--out", tmp_path / "e4"], "does not exist"),
        ([base, corpus, "--new-tokens", -1, "--out", tmp_path / "e5"], "new_tokens must be >= 0"),
    ):
        code, _, err = run(capsys, "extend", *argv, "--quiet")
        assert code == 2 and err.startswith("hf-bpe: error:") and message in err and "Traceback" not in err, err
    code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 1, "--vocab-size", 300, "--out", tmp_path / "e6")
    assert code == 2 and "not allowed with" in err


def test_cli_extend_tokenizer_class_is_named_and_the_wrong_kind_refused_before_training(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --tokenizer-class as train's: the class tokenizer_config.json names; the other kind's class (HFSentencePiece-
    # Tokenizer for a byte-level base, HFBPETokenizer for a .model) is one error line before the extension runs.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("東京 東京都 京都\n東京都庁 京都府\n" * 20, encoding="utf-8")
    base = quiet_train(["the cat sat on the mat"] * 3, vocab_size=265).save(tmp_path / "base")
    for name in ("HFBPETokenizer", "PreTrainedTokenizerFast"):
        out = tmp_path / f"ext-{name}"
        code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 6, "--out", out, "--quiet",
                           "--tokenizer-class", name)
        assert code == 0, err
        config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        assert config["tokenizer_class"] == name
    code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 6, "--out", tmp_path / "bad", "--quiet",
                       "--tokenizer-class", "HFSentencePieceTokenizer")
    assert code == 2 and err.count("\n") == 1 and "this base is byte-level" in err, err
    assert not (tmp_path / "bad").exists()
    model = tmp_path / "tokenizer.model"
    model.write_bytes(b"")  # never read: the class is refused first
    code, _, err = run(capsys, "extend", model, corpus, "--new-tokens", 1, "--out", tmp_path / "bad2", "--quiet",
                       "--tokenizer-class", "HFBPETokenizer")
    assert code == 2 and "this base is a SentencePiece model" in err, err


def test_cli_extend_holds_out_reports_and_verify_cuts_the_same_way(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    corpus, check = tmp_path / "corpus.txt", tmp_path / "check.txt"
    corpus.write_text("".join(f"東京 東京都 京都 {i}\n東京都庁 京都府 {i % 7}\n" for i in range(300)), encoding="utf-8")
    check.write_text("the cat sat on the mat\n" * 5, encoding="utf-8")
    base = quiet_train(["the cat sat on the mat"] * 3, vocab_size=265).save(tmp_path / "base")
    code, out, err = run(capsys, "extend", base, corpus, "--new-tokens", 20, "--out", tmp_path / "ext", "--quiet",
                         "--held-out", "0.1", "--check", check)
    assert code == 0, err
    # The report: printed (stdout) and in the folder; held out = the documents HeldOutSplit picks, not trained on.
    report = json.loads((tmp_path / "ext" / "extension_report.json").read_text(encoding="utf-8"))
    split = hf_bpe.HeldOutSplit.of_corpus([corpus], fraction=0.1)
    trained_on = list(split)
    assert report["held_out"]["texts"] == len(split.held_out) > 0 and report["new_tokens"] == 20
    assert report["check"]["texts"] == 5 and "held-out text:" in out and "check text:" in out
    direct = hf_bpe.extend(base, trained_on, new_tokens=20, show_progress=False)
    assert direct.merges == BPEModel.load(tmp_path / "ext").merges
    # verify cuts the corpus as the manifest records, then re-extends byte for byte.
    assert run(capsys, "verify", tmp_path / "ext", "--corpus", corpus)[0] == 0
    # Without a held-out part the report says so; --held-out out of range is refused.
    code, out, err = run(capsys, "extend", base, corpus, "--new-tokens", 5, "--out", tmp_path / "e0", "--quiet",
                         "--held-out", 0)
    assert code == 0 and "held-out text: no text" in out, err
    for value in ("1", "-0.1"):
        code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 5, "--out", tmp_path / "e1", "--held-out",
                           value)
        assert code == 2 and "--held-out must be in [0, 1)" in err and not (tmp_path / "e1").exists()


def test_cli_extend_sentencepiece_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "tokenizer.model"
    model.write_bytes(b"")
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc\n", encoding="utf-8")
    code, _, err = run(capsys, "extend", model, corpus, "--new-tokens", 1, "--out", tmp_path / "o", "--quiet")
    if hasattr(hf_bpe, "extend_sentencepiece"):
        assert code == 2 and err.startswith("hf-bpe: error:")  # an empty file is no SentencePiece model
    else:
        assert code == 2 and "extend_sentencepiece" in err


# -- real vocabularies -----------------------------------------------------------------------------------------------

LLAMA3_SPECIALS = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001} | {
    f"<|reserved_special_token_{i}|>": 128002 + i for i in range(254)}


def real_base(shared_data: Path, name: str, tmp_path: Path) -> tuple[BPEModel, Path]:
    """The base as a model and as a path hf_bpe.extend can record (Llama 3 as a folder with its config)."""
    vocabs = shared_data / "vocabs"
    if name == "gpt2.tiktoken":
        path = shared_data / "tiktoken" / "gpt2.tiktoken"
    elif name == "llama3":
        path = tmp_path / "llama3"
        path.mkdir()
        for file in ("encoder.json", "vocab.bpe"):
            shutil.copy(vocabs / "llama3" / file, path / file)
        decoder = {str(i): {"content": t, "special": True} for t, i in LLAMA3_SPECIALS.items()}
        (path / "tokenizer_config.json").write_text(json.dumps(
            {"pattern": "llama3", "ignore_merges": True, "added_tokens_decoder": decoder,
             "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}), encoding="utf-8")
    elif name == "qwen2":
        path = tmp_path / "qwen2"
        shutil.copytree(vocabs / "qwen2", path, ignore=shutil.ignore_patterns("*.txt.reference", "SOURCE.txt"))
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
        config["pattern"] = "qwen2"
        (path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    else:
        path = vocabs / name
    return load_base(path)[0], path


@functools.cache
def _shuffled_lines(folder: Path) -> tuple[str, ...]:
    # The whole corpus read, split and shuffled once per process, not once per test (~2 s of CPU each for zh).
    lines = []
    for file in sorted(folder.rglob("*")):
        if file.is_file() and file.suffix in (".txt", ".tsv"):
            lines += [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    random.Random(0).shuffle(lines)
    return tuple(lines)


def corpus_slice(shared_data: Path, kind: str, size: int) -> tuple[list[str], list[str]]:
    """Training lines (about ``size`` bytes) and held-out lines of the Chinese or the multilingual corpus."""
    lines = _shuffled_lines(shared_data / "corpora" / kind)
    train, held, total = [], [], 0
    for line in lines:
        if total < size:
            train.append(line)
            total += len(line.encode("utf-8"))
        elif len(held) < 300:
            held.append(line)
    return train, held


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "roberta", "qwen2", "llama3", "gpt2.tiktoken"])
@pytest.mark.parametrize("kind", ["zh", "multi"])
def test_real_vocabularies_keep_the_contract(shared_data: Path, tmp_path: Path, name: str, kind: str) -> None:
    base, path = real_base(shared_data, name, tmp_path)
    train, held = corpus_slice(shared_data, kind, 1_000_000)
    if kind == "zh":  # (a) on the real base: by 0 tokens, the base's files
        assert files_but_manifest(hf_bpe.extend(path, train[:50], new_tokens=0, show_progress=False)) == \
            files_but_manifest(base)
    extended = hf_bpe.extend(path, train, new_tokens=1000, show_progress=False)
    assert_contract(base, extended)
    assert extended.vocab_size == base.vocab_size + 1000
    if name == "qwen2":
        assert base.vocab_size == 151646  # after <|im_end|>
    if name == "llama3":
        assert base.vocab_size == 128256 and extended.ignore_merges  # after the reserved specials
    english = first_lines(shared_data / "corpora" / "en" / "english_combined.txt", 300)
    assert assert_untouched_text_same(base, extended, english + held) > 0
    # Fewer tokens on held-out text of the new kind.
    assert sum(map(len, extended.encode_ordinary_batch(held))) < sum(map(len, base.encode_ordinary_batch(held)))


@pytest.mark.shared_data
@pytest.mark.slow
def test_compiled_equals_reference_on_gpt2_and_chinese(shared_data: Path, tmp_path: Path) -> None:
    base, _ = real_base(shared_data, "gpt2", tmp_path)
    train, _ = corpus_slice(shared_data, "zh", 100_000)
    counts = WordCounts.from_corpus(train, show_progress=False)
    words = [base.encode_word(w) for w in counts]
    options = {"keys": seed_keys(base), "vocab_size": base.vocab_size + 300}
    expected = _reference_continue.continue_merges(words, list(counts.values()), **options)
    assert _core.continue_merges(words, list(counts.values()), **options) == expected


@pytest.mark.shared_data
@pytest.mark.crossval
@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "qwen2", "llama3"])
def test_extended_folder_loads_with_the_same_ids_everywhere(shared_data: Path, tmp_path: Path, name: str) -> None:
    transformers = pytest.importorskip("transformers")
    _, path = real_base(shared_data, name, tmp_path)
    train, held = corpus_slice(shared_data, "zh", 300_000)
    extended = hf_bpe.extend(path, train, new_tokens=500, show_progress=False)
    folder = extended.save(tmp_path / "out", tokenizer_class="PreTrainedTokenizerFast")
    english = first_lines(shared_data / "corpora" / "en" / "english_combined.txt", 100)
    texts = held[:100] + english
    expected = [extended.encode_ordinary(t) for t in texts]
    loaders = [transformers.AutoTokenizer.from_pretrained(folder),
               transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json")),
               hf_bpe.HFBPETokenizer.from_pretrained(folder)]
    if name == "gpt2":
        loaders.append(transformers.GPT2TokenizerFast.from_pretrained(folder))
    for tokenizer in loaders:
        got = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        assert got == expected, type(tokenizer).__name__


@pytest.mark.shared_data
def test_extend_by_zero_on_gpt2s_own_folder_gives_its_tokens_in_tokenizers_layout(shared_data: Path,
                                                                                  tmp_path: Path) -> None:
    """OpenAI's GPT-2 files are not in the layout tokenizers (and hf_bpe) write: by 0 tokens, merges.txt comes back
    byte for byte, vocab.json and tokenizer.json's model with the same entries, in tokenizers' compact layout."""
    original = shared_data / "vocabs" / "gpt2"
    folder = hf_bpe.extend(original, ["hello world"], new_tokens=0, show_progress=False).save(tmp_path / "g0")
    assert (folder / "merges.txt").read_bytes() == (original / "merges.txt").read_bytes()
    assert (folder / "vocab.json").read_bytes() != (original / "vocab.json").read_bytes()  # layout only:
    assert json.loads((folder / "vocab.json").read_text(encoding="utf-8")) == \
        json.loads((original / "vocab.json").read_text(encoding="utf-8"))
    ours, theirs = (json.loads((f / "tokenizer.json").read_text(encoding="utf-8"))["model"] for f in (folder, original))
    assert ours["vocab"] == theirs["vocab"]
    assert [" ".join(pair) for pair in ours["merges"]] == theirs["merges"]  # tokenizers < 0.20 wrote "a b" strings


# -- special-token roles kept (issue 33.7) ----------------------------------------------------------------------------

_ROLE_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _loaded_roles(tokenizer) -> dict[str, str]:
    return {role: str(getattr(tokenizer, role)) for role in _ROLE_NAMES if getattr(tokenizer, role) is not None}


def _role_base(shared_data: Path, tmp_path: Path, name: str) -> Path:
    """A base folder of each form hf-bpe extend reads, each with roles as transformers loads it."""
    if name == "gpt2-tokenizer.json":  # tokenizers' layout: tokenizer.json and a config naming roles
        path = tmp_path / name
        path.mkdir()
        shutil.copy(shared_data / "vocabs" / "gpt2" / "tokenizer.json", path / "tokenizer.json")
        (path / "tokenizer_config.json").write_text(json.dumps(
            {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
             "pad_token": "<|endoftext|>"}), encoding="utf-8")
        return path
    if name == "hf_bpe":
        return hf_bpe.train(["the cat sat on the mat"] * 20, vocab_size=270, special_tokens=["<s>", "</s>", "<pad>"],
                            bos_token="<s>", eos_token="</s>", pad_token="<pad>", show_progress=False
                            ).save(tmp_path / name)
    return real_base(shared_data, name, tmp_path)[1]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["gpt2", "roberta", pytest.param("qwen2", marks=pytest.mark.slow),
                                  pytest.param("llama3", marks=pytest.mark.slow), "gpt2-tokenizer.json", "hf_bpe"])
def test_cli_extend_keeps_every_role_the_base_has_as_loaded(shared_data: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str], name: str) -> None:
    # Issue 33.7: hf-bpe extend of GPT-2's folder wrote bos/eos/unk: null, so every loader of the extended folder
    # had eos_token None. The roles of the base as loaded (GPT2TokenizerFast's defaults included) are kept.
    transformers = pytest.importorskip("transformers")
    base = _role_base(shared_data, tmp_path, name)
    if name in ("gpt2", "roberta"):  # GPT-2 files without a config: what GPT2TokenizerFast makes of them
        expected = _loaded_roles(transformers.GPT2TokenizerFast.from_pretrained(base))
        assert expected == dict.fromkeys(("bos_token", "eos_token", "unk_token"), "<|endoftext|>")
    else:
        expected = dict(BPEModel.load(base).roles)
        assert expected
        if name != "llama3":  # (its encoder.json + vocab.bpe are not files transformers reads)
            assert expected == _loaded_roles(hf_bpe.HFBPETokenizer.from_pretrained(base))
            assert expected == _loaded_roles(transformers.AutoTokenizer.from_pretrained(base))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("東京 東京都 京都\n東京都庁 京都府\n" * 20, encoding="utf-8")
    pattern = {"qwen2": ["--pattern", "qwen2"]}.get(name, [])
    code, _, err = run(capsys, "extend", base, corpus, "--new-tokens", 3, "--out", tmp_path / "out", "--quiet",
                       "--held-out", 0, *pattern)
    assert code == 0, err
    out = tmp_path / "out"
    config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert {role: config[role] for role in _ROLE_NAMES if config.get(role)} == expected
    assert dict(BPEModel.load(out).roles) == expected
    loaders = [transformers.AutoTokenizer.from_pretrained(out), hf_bpe.HFBPETokenizer.from_pretrained(out)]
    if name in ("gpt2", "roberta"):
        loaders.append(transformers.GPT2TokenizerFast.from_pretrained(out))
    for tokenizer in loaders:
        assert _loaded_roles(tokenizer) == expected, type(tokenizer).__name__


def test_extend_keeps_the_roles_of_a_model_and_a_tiktoken_file_has_none(tmp_path: Path) -> None:
    base = hf_bpe.train(["the cat sat"] * 5, vocab_size=262, special_tokens=["<|end|>"], eos_token="<|end|>",
                        show_progress=False)
    assert dict(hf_bpe.extend(base, ["the cat sat"], new_tokens=1, show_progress=False).roles) == \
        {"eos_token": "<|end|>"}
    # A .tiktoken file (and its special_tokens.json) names no roles: an extension of one has none to keep.
    from hf_bpe.tools.convert import convert

    path = convert(base.save(tmp_path / "b"), to="tiktoken", out=tmp_path / "t")
    assert dict(hf_bpe.extend(path, ["the cat sat"], new_tokens=1, show_progress=False, pattern="gpt2").roles) == {}


def test_cli_extend_keeps_the_roles_of_a_sentencepiece_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The other base format hf-bpe extend takes (a .model goes to extend_sentencepiece): the roles of its meta
    # pieces, as its folder names them, are the extension's.
    corpus, more = tmp_path / "c.txt", tmp_path / "n.txt"
    corpus.write_text("the cat sat on the mat\n" * 50, encoding="utf-8")
    more.write_text("東京 東京都\n" * 50, encoding="utf-8")
    assert run(capsys, "train", corpus, "--algorithm", "sentencepiece", "--vocab-size", 60, "--out",
               tmp_path / "base", "--quiet", "--spm", "hard_vocab_limit=false")[0] == 0
    assert run(capsys, "extend", tmp_path / "base" / "tokenizer.model", more, "--new-tokens", 3, "--out",
               tmp_path / "out", "--quiet", "--held-out", 0)[0] == 0
    configs = [json.loads((tmp_path / name / "tokenizer_config.json").read_text(encoding="utf-8"))
               for name in ("base", "out")]
    roles = [{role: config.get(role) for role in _ROLE_NAMES} for config in configs]
    assert roles[0] == roles[1] and roles[1]["eos_token"] == "</s>" and roles[1]["unk_token"] == "<unk>"
