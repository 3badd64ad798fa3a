"""HFBPETokenizer's Encoding objects (offsets, words, sequences, overflow with stride) equal GPT2TokenizerFast's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import GPT2TokenizerFast, PreTrainedTokenizerFast

import hf_bpe
from helpers import fast_fields, transformers_major
from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer

pytestmark = pytest.mark.crossval

_CORPORA = ["en/english_combined.txt", "zh/zh_songci_simplified.txt", "multi/udhr2_all_lang_tab_line.tsv",
            "multi/ja_wagahaiwa_nekodearu.txt"]


@pytest.fixture(scope="module")
def gpt2(shared_data):
    folder = shared_data / "vocabs" / "gpt2"
    return HFBPETokenizer.from_pretrained(folder), GPT2TokenizerFast.from_pretrained(folder)


def _lines(shared_data, name, count):
    text = (shared_data / "corpora" / name).read_text(encoding="utf-8")
    return [line[:500] for line in text.split("\n") if line][:count]


def assert_same_encodings(ours_output, fast_output, rows=None):
    """Every field and every lookup transformers offers, row by row (the first ``rows`` rows for the lookups)."""
    assert dict(ours_output) == fast_fields(ours_output, fast_output)
    assert len(ours_output.encodings) == len(fast_output.encodings)
    pairs = list(zip(ours_output.encodings, fast_output.encodings))[:rows]
    for row, (ours, theirs) in enumerate(pairs):
        assert ours.ids == theirs.ids
        assert ours.tokens == theirs.tokens, row
        assert ours.offsets == theirs.offsets, row
        assert ours.word_ids == theirs.word_ids, row
        assert ours.sequence_ids == theirs.sequence_ids, row
        assert ours.type_ids == theirs.type_ids, row
        assert ours.special_tokens_mask == theirs.special_tokens_mask, row
        assert ours_output.word_ids(row) == fast_output.word_ids(row)
        last = max((end for _, end in ours.offsets), default=0)
        for sequence in range(ours.n_sequences):
            assert [ours.char_to_token(i, sequence) for i in range(last + 1)] == [
                theirs.char_to_token(i, sequence) for i in range(last + 1)], row
            assert [ours.char_to_word(i, sequence) for i in range(last + 1)] == [
                theirs.char_to_word(i, sequence) for i in range(last + 1)], row
            words = {w for w in ours.word_ids if w is not None}
            for word in range(max(words, default=-1) + 2):
                assert ours.word_to_tokens(word, sequence) == theirs.word_to_tokens(word, sequence), (row, word)
                assert ours.word_to_chars(word, sequence) == theirs.word_to_chars(word, sequence), (row, word)
        for token in range(len(ours.ids) + 1):
            assert ours.token_to_chars(token) == theirs.token_to_chars(token), (row, token)
            assert ours.token_to_word(token) == theirs.token_to_word(token), (row, token)
            assert ours.token_to_sequence(token) == theirs.token_to_sequence(token), (row, token)


@pytest.mark.shared_data
@pytest.mark.parametrize("corpus", _CORPORA)
def test_encoding_offsets_and_lookups_equal_the_fast_tokenizer_on_corpora(gpt2, shared_data, corpus):
    ours, fast = gpt2
    lines = _lines(shared_data, corpus, 120)
    options = {"return_offsets_mapping": True, "return_special_tokens_mask": True, "return_token_type_ids": True}
    for line in lines[:30]:
        assert_same_encodings(ours(line, **options), fast(line, **options))
    assert_same_encodings(ours(lines, **options), fast(lines, **options))
    assert_same_encodings(ours(lines[:-1], lines[1:], **options), fast(lines[:-1], lines[1:], **options))
    # Without asking for offsets, word_ids() and char_to_token() work all the same (computed when needed).
    plain_ours, plain_fast = ours(lines[:50]), fast(lines[:50])
    assert [plain_ours.word_ids(i) for i in range(50)] == [plain_fast.word_ids(i) for i in range(50)]
    assert plain_ours.char_to_token(3, 5) == plain_fast.char_to_token(3, 5)


@pytest.mark.shared_data
@pytest.mark.parametrize("options", [
    {"truncation": True, "max_length": 128, "return_overflowing_tokens": True, "return_length": True},
    {"truncation": True, "max_length": 16, "stride": 4, "return_overflowing_tokens": True},
    {"truncation": True, "max_length": 16, "stride": 4, "return_overflowing_tokens": True, "padding": True,
     "return_tensors": "np"},
    {"truncation": "only_second", "max_length": 40, "stride": 3, "return_overflowing_tokens": True, "pair": True},
    {"truncation": "longest_first", "max_length": 20, "stride": 2, "return_overflowing_tokens": True, "pair": True},
    {"truncation": True, "max_length": 12, "stride": 2, "return_overflowing_tokens": True, "pair": True,
     "add_bos_token": True, "add_eos_token": True, "return_token_type_ids": True},
    {"truncation": True, "max_length": 12, "stride": 2, "return_overflowing_tokens": True, "padding": "max_length",
     "padding_side": "left", "return_offsets_mapping": True},
    {"truncation": True, "max_length": 16, "stride": 2, "return_overflowing_tokens": True, "padding": "longest",
     "return_offsets_mapping": True, "pad_to_multiple_of": 8},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_encoding_overflowing_windows_equal_the_fast_tokenizer(gpt2, shared_data, options):
    # Issue 11: the course's chunking recipe gave 400 chunks for 400 documents where the fast tokenizer gives
    # 1,126; a short item raised AssertionError; return_tensors dropped the windows.
    options = dict(options)
    pair = options.pop("pair", False)
    flags = {k: options.pop(k) for k in ("add_bos_token", "add_eos_token") if k in options}
    if flags and transformers_major() < 5:
        pytest.skip("transformers 4: GPT2TokenizerFast ignores add_bos_token/add_eos_token")
    folder = shared_data / "vocabs" / "gpt2"
    ours = HFBPETokenizer.from_pretrained(folder, **flags)
    fast = GPT2TokenizerFast.from_pretrained(folder, **flags)
    if options.get("padding"):
        ours.pad_token = ours.eos_token
        fast.pad_token = fast.eos_token
    lines = _lines(shared_data, "en/english_combined.txt", 16000)
    documents = [" ".join(lines[i::400]) for i in range(400)]
    documents[3] = "short"
    if options.get("max_length") != 128:  # the course's recipe runs on all 400 documents, the others on a few
        documents = [document[:400] for document in documents[:24]]
    # only_second needs a first sequence shorter than max_length, as in the fast tokenizer.
    args = ([line[:30] for line in lines[:24]], documents) if pair else (documents,)
    ours_output, fast_output = ours(*args, **options), fast(*args, **options)
    if options.get("return_tensors"):
        for key in fast_output:
            assert (ours_output[key] == fast_output[key]).all(), key
        return
    assert_same_encodings(ours_output, fast_output, rows=40)
    if options.get("max_length") == 128:
        assert len(ours_output["input_ids"]) == len(fast_output["input_ids"]) > 1000


@pytest.mark.shared_data
def test_encoding_too_short_to_truncate_raises_as_the_fast_tokenizer(gpt2):
    ours, fast = gpt2
    long, short = "word " * 50, "a b"
    with pytest.raises(Exception, match="[Ss]equence to truncate too short|too short"):
        fast(short, long, truncation="only_first", max_length=9)
    with pytest.raises(ValueError, match="truncation='only_first': the sequence to truncate has 2 tokens"):
        ours(short, long, truncation="only_first", max_length=9)


@pytest.mark.shared_data
@pytest.mark.parametrize("call", [
    dict(text=["a b c d e f", "a"], text_pair=["x y z", "w"], truncation="only_second", max_length=4),
    dict(text=["a b c d e f", "a"], text_pair=["x y z", "w"], truncation="only_first", max_length=4,
         return_token_type_ids=True, return_special_tokens_mask=True),
    dict(text=["a b c d e f", "a"], text_pair=["x y z", "w"], truncation="only_first", max_length=7,
         return_token_type_ids=True, return_special_tokens_mask=True),
    dict(text=["  leading"], text_pair=["  leading"], max_length=1, stride=2, truncation=True),
    dict(text=[" "], text_pair=[" "], max_length=0, truncation=True),
], ids=str)
def test_encoding_truncated_pairs_behave_as_the_fast_tokenizer(gpt2, call):
    ours, fast = gpt2
    try:
        expected = fast(**call)
    except Exception:  # noqa: BLE001 - tokenizers raises its own exception types
        with pytest.raises(ValueError):
            ours(**call)
        return
    assert_same_encodings(ours(**call), expected)


@pytest.mark.parametrize("setup", [{"pattern": "gpt4"}, {"add_prefix_space": True}, {"pattern": r"\w+"},
                                   {"pattern": "o200k", "special_tokens": ["<s>", "</s>"]}], ids=str)
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(st.text(st.sampled_from(list("ab é中😀 \t\n'12,<s>/")), max_size=20), min_size=1, max_size=4))
def test_encoding_any_text_and_pattern_equal_the_fast_tokenizer(tmp_path_factory, setup, texts):
    folder = tmp_path_factory.mktemp("tok")
    corpus = ["hello world, l'été 2024 中文 😀 <s> ab ab"] * 3
    hf_bpe.train(corpus, vocab_size=290, show_progress=False, **setup).save(folder, force=True)
    ours, fast = HFBPETokenizer.from_pretrained(folder), PreTrainedTokenizerFast.from_pretrained(folder)
    options = {"return_offsets_mapping": True}
    for text in texts:
        assert_same_encodings(ours(text, **options), fast(text, **options))
    assert_same_encodings(ours(texts, texts[::-1], **options), fast(texts, texts[::-1], **options))
