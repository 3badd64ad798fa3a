"""Fuzz every parser and encoder of the compiled core with hypothesis: any input is either handled exactly as the
pure-Python spec handles it or refused with the same error, never a crash, an over-read or undefined behaviour.

Marked ``fuzz``; ``scripts/sanitize.py`` runs this file under AddressSanitizer + UBSan with
``HF_BPE_FUZZ_EXAMPLES`` examples per test (default here: 25, so that the suite stays quick). The equality tests
of each module (test_core, test_sentencepiece_normalize, ...) go deeper on realistic text; this file throws
arbitrary bytes and code points at the same entry points.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import struct
from collections import Counter

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.core import _core, _reference, _tally
from hf_bpe.core._sentencepiece import SentencePieceCorpus
from hf_bpe.core._sentencepiece import SentencePieceNormalizer as CompiledNormalizer
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.core.pretokenize import Pretokenizer
from hf_bpe.core.sentencepiece_normalize import SentencePieceNormalizer
from hf_bpe.formats.sentencepiece_model import NORMAL, UNKNOWN, USER_DEFINED, Piece
from hf_bpe.model.unigram import UnigramModel
from hf_bpe.training.sentencepiece.bpe import builtin_charsmap

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("HF_BPE_FUZZ_EXAMPLES", "25"))
fuzz = settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
# Bytes where the parsers branch: separators, every UTF-8 lead and continuation byte, invalid ones, ASCII runs.
_PARTS = [b"\n", b"\r\n", b"<|endoftext|>", b" ", b"a", b"Z9", b"hello world", b"'s", b"\xc3\xa9", b"\xe4\xb8\xad",
          b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\x80", b"\xff", b"\x00", b"  \t"]
raw_bytes = st.binary(max_size=200) | st.lists(st.sampled_from(_PARTS), max_size=40).map(b"".join)
any_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=80) | raw_bytes.map(
    lambda b: b.decode("utf-8", "replace"))
_TRAINING = ["hello world it's 12345 naïve café 中文 😀 Ελληνικά\r\n", "x" * 30 + " hello  world", "'s 7"] * 20


@pytest.fixture(scope="module")
def model():
    return hf_bpe.train(_TRAINING, vocab_size=320, special_tokens=["<|endoftext|>"], show_progress=False)


# -- byte-level BPE: scanner, tally, trainer, word encoder, file framing ----------------------------------------


@pytest.mark.parametrize("name", sorted(PATTERNS))
@fuzz
@given(text=any_text)
def test_fuzz_scanner_and_tally_equal_the_regex(name, text):
    pretokenizer = Pretokenizer(name)
    pieces = regex.findall(PATTERNS[name], text)
    assert pretokenizer.split(text) == pieces
    assert pretokenizer.split_bytes(text) == [p.encode("utf-8") for p in pieces]
    assert pretokenizer.count([text, text]) == dict(Counter(p.encode("utf-8") for p in pieces * 2))


@fuzz
@given(words=st.lists(raw_bytes.filter(bool), max_size=20, unique=True), seed=st.integers(0, 2**16),
       vocab=st.integers(256, 300))
def test_fuzz_train_merges_and_word_encoder_equal_the_reference(words, seed, vocab):
    counts = [(seed * (i + 7)) % 50 + 1 for i in range(len(words))]
    expected = _reference.train_merges(words, counts, vocab_size=vocab)
    assert _core.train_merges(words, counts, vocab_size=vocab) == expected
    merges, byte_ids = expected[1], list(range(256))
    compiled, spec = _core.WordEncoder(merges, byte_ids), _reference.WordEncoder(merges, byte_ids)
    for word in words + [b"".join(words[:3])]:
        assert compiled.encode_word(word) == spec.encode_word(word)


@fuzz
@given(raw=raw_bytes, separator=st.sampled_from([b"\n", b"<|endoftext|>", b"\r\n"]),
       skip_empty=st.booleans())
def test_fuzz_encode_documents_reads_any_bytes_as_the_lists_path_or_raises(model, raw, separator, skip_empty):
    pretokenizer, encoder = model._pretokenizer, model._encoder
    try:
        text = codecs.utf_8_decode(raw, "strict", True)[0]
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            pretokenizer.encode_documents(raw, separator, encoder, skip_empty=skip_empty)
        return
    documents = text.split(separator.decode())
    if documents[-1] == "":
        documents.pop()
    if skip_empty:
        documents = [d for d in documents if d]
    ids, offsets = pretokenizer.encode_documents(raw, separator, encoder, skip_empty=skip_empty)
    want_ids, want_offsets = model.encode_ordinary_batch_arrays(documents, num_threads=1)
    assert list(memoryview(ids)) == list(memoryview(want_ids))
    assert list(memoryview(offsets)) == list(memoryview(want_offsets))


@fuzz
@given(raw=raw_bytes, separator=st.sampled_from([b"\n", b"<|endoftext|>", b"aa"]))
def test_fuzz_window_ends_equal_their_spec(raw, separator):
    # last_document_end: after the last of the leftmost non-overlapping matches (bytes.split's), or -1.
    pieces = raw.split(separator)
    assert _core.last_document_end(raw, separator) == (len(raw) - len(pieces[-1]) if len(pieces) > 1 else -1)
    cuts = [p for p in range(1, len(raw)) if raw[p:p + 1] == b" " and chr(raw[p - 1]).isascii()
            and chr(raw[p - 1]).isalnum()]
    assert _core.last_safe_cut(raw) == (cuts[-1] if cuts else -1)


@fuzz
@given(raw=raw_bytes)
def test_fuzz_line_readers_equal_their_spec(raw):
    lines = raw.split(b"\n")
    whole = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    assert _tally.line_stats(raw) == (max((len(line) for line in lines), default=0), raw.count(b"\n"))
    total, count = _tally.sum_line_digests(raw)
    assert count == len(whole)
    assert int.from_bytes(total, "big") == sum(int.from_bytes(hashlib.sha256(x).digest(), "big")
                                               for x in whole) % 2**256
    try:
        texts = [codecs.utf_8_decode(x, "strict", True)[0] for x in whole]
    except UnicodeDecodeError:
        return
    assert _tally.frame_lines(raw) == _tally.frame_utf8(texts)


@fuzz
@given(ids=st.lists(st.integers(-2**31, 2**31 - 1), max_size=30), ends=st.lists(st.integers(0, 2**40), max_size=8),
       base=st.integers(0, 2**40), width=st.sampled_from([2, 4]))
def test_fuzz_token_file_chunk_equals_numpy(ids, ends, base, width):
    offsets = np.asarray([0, *ends], np.int64)
    packed, packed_ends, low, high = _core.token_file_chunk(np.asarray(ids, np.int32), offsets, base, width)
    assert packed == (np.asarray(ids, np.int64) & (2 ** (8 * width) - 1)).astype(f"<u{width}").tobytes()
    assert packed_ends == (offsets[1:] + base).astype("<i8").tobytes()
    assert (low, high) == ((min(ids), max(ids)) if ids else (0, -1))


@fuzz
@given(text=any_text)
def test_fuzz_bpe_encoders_round_trip_any_text(model, text):
    ids = model.encode_ordinary(text)
    assert model.decode_bytes(ids) == text.encode("utf-8")
    assert model.encode_ordinary_batch([text, text], num_threads=2) == [ids, ids]


@fuzz
@given(unit=any_text, length=st.sampled_from([16384, 70001]), extra=st.sampled_from(["\u00e9", "\u4e2d", "\U0001f600"]))
def test_fuzz_long_texts_transcoded_whole_round_trip(model, unit, length, extra):
    # A text of 16,384 code points or more that is not ASCII is transcoded to UTF-8 whole, 64K units a step
    # (csrc/scanner.hpp utf8_all), as a batch's text and as the parts of a long text.
    from hf_bpe.model import single_text

    text = ((unit + extra) * (length // (len(unit) + 1) + 1))[:length]
    ids = model.encode_ordinary_batch([text], num_threads=1)[0]
    assert model.decode_bytes(ids) == text.encode("utf-8")
    assert single_text.encode_ordinary(model, text, 2, "replace", part_chars=20000) == ids


# -- SentencePiece: normalizer, corpus, unigram Viterbi ---------------------------------------------------------


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc_cf", "identity"])
@fuzz
@given(text=any_text, flags=st.tuples(st.booleans(), st.booleans(), st.booleans()))
def test_fuzz_sentencepiece_normalizers_agree_on_any_text(rule, text, flags):
    spec = {"precompiled_charsmap": builtin_charsmap(rule), "add_dummy_prefix": flags[0],
            "remove_extra_whitespaces": flags[1], "escape_whitespaces": flags[2]}
    users = ["<sep>", "ab"]
    assert CompiledNormalizer(spec, users).normalize(text) == SentencePieceNormalizer(spec, users).normalize(text)


_REAL = builtin_charsmap("nmt_nfkc")


@fuzz
@given(charsmap=raw_bytes | st.builds(lambda cut, size: struct.pack("<I", size) + _REAL[4:4 + cut],
                                       st.integers(0, 4096), st.integers(0, 2048).map(lambda n: n * 4)),
       text=any_text)
def test_fuzz_any_charsmap_same_outcome_in_both_normalizers(charsmap, text):
    outcomes = []
    for make in (SentencePieceNormalizer, CompiledNormalizer):
        try:
            outcomes.append(make({"precompiled_charsmap": charsmap, "add_dummy_prefix": True,
                                  "remove_extra_whitespaces": True, "escape_whitespaces": True}).normalize(text))
        except ValueError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


@fuzz
@given(texts=st.lists(any_text, max_size=8), max_length=st.integers(1, 40), dummy=st.booleans())
def test_fuzz_sentencepiece_corpus_takes_any_text(texts, max_length, dummy):
    corpus = SentencePieceCorpus(charsmap=_REAL, remove_extra_whitespaces=True, add_dummy_prefix=dummy,
                                 allow_whitespace_only_pieces=False, meta_pieces=["<unk>", "<s>"],
                                 max_sentence_length=max_length)
    corpus.add(texts)
    kept = corpus.finish()
    counts = corpus.char_counts()
    assert 0 <= kept <= len(texts) and all(count > 0 for count in counts.values())


@fuzz
@given(pieces=st.lists(st.text(alphabet="ab▁中é", min_size=1, max_size=4), max_size=12, unique=True),
       text=st.text(alphabet="ab▁中éx", max_size=30), scores=st.lists(st.floats(-20, 0, width=32), min_size=12,
                                                                      max_size=12))
def test_fuzz_unigram_viterbi_equals_its_spec(pieces, text, scores):
    model = UnigramModel([Piece("<unk>", 0.0, UNKNOWN)] + [
        Piece(piece, scores[i], USER_DEFINED if i == 0 and len(piece) > 1 else NORMAL)
        for i, piece in enumerate(pieces)])
    assert model.viterbi(text) == model.viterbi_reference(text)
