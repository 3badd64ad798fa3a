"""One text in one compiled call, and a long one cut for threads (hf_bpe.model.single_text, issue 23 point 2).

The cut parts are forced tiny (``part_chars``) so that short hypothesis texts are cut at every safe point; the
threaded ids must equal the one-thread ids and the pure-Python reference over ``regex.findall`` pieces.
"""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.core import _reference
from hf_bpe.core.fragment import CUTTABLE_PATTERNS
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.model import single_text
from hf_bpe.model.bpe import BPEModel

# Fragments with and without cut points: letter/digit + space runs (cuts), CJK without spaces, whitespace runs,
# \r\n, digits, apostrophes and contractions, marks, astral characters, punctuation.
_FRAGMENTS = st.sampled_from([
    "hello world", " the", "a  b", "x   ", "中文字符没有空格", "中文 字", "  \t\n", "\r\n", "\r\n\r\n  ", "12345 678",
    "it's", " I'M", "don't ", "naïve café", "e\u0301 ", "😀😀 🇫🇷", "!!", " ...", "\u00a0x", "\u3000", "٣ ½ ",
    "Ǆemal ", "ʰ", "a/b", "'s", "'", "x", " ", "9",
])
_TEXTS = st.lists(_FRAGMENTS, max_size=25).map("".join)
_CORPUS = ["hello world, it's 12345 dollars!", "中文字符没有空格 中文 字", "naïve café  \t\n x", "don't I'M 😀 🇫🇷"] * 20


@functools.lru_cache(maxsize=None)
def _model(pattern: str, add_prefix_space: bool = False) -> BPEModel:
    return hf_bpe.train(_CORPUS, vocab_size=310, pattern=pattern, add_prefix_space=add_prefix_space,
                        show_progress=False)


def _reference_ids(model: BPEModel, text: str) -> list[int]:
    merges, byte_ids, _, whole = model._encoder.__reduce__()[1]
    encoder = _reference.WordEncoder(merges, byte_ids, whole_words=whole)
    if model.add_prefix_space and text and not text.startswith(" "):
        text = " " + text
    return encoder.encode_words(piece.encode("utf-8") for piece in regex.findall(PATTERNS[model.pattern], text))


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=_TEXTS, part_chars=st.sampled_from([1, 2, 7]))
def test_long_text_threaded_equals_one_thread_equals_reference(pattern, add_prefix_space, text, part_chars):
    model = _model(pattern, add_prefix_space)
    expected = _reference_ids(model, text)
    assert model.encode_ordinary(text) == expected
    assert model.encode_ordinary(text, num_threads=1) == expected
    for threads in (1, 2, 3):
        assert single_text.encode_ordinary(model, text, threads, "replace", part_chars=part_chars) == expected


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
@settings(max_examples=40, deadline=None, derandomize=True)
@given(text=st.lists(_FRAGMENTS | st.sampled_from(["\ud83d", "\ude00", "\ud83d\ude00"]), max_size=12).map("".join))
def test_long_text_compiled_short_path_equals_the_full_path_and_the_reference(pattern, add_prefix_space, text):
    # BPEModel.encode_ordinary first tries one compiled call (ShortTextEncoder); it must give the ids of the full
    # Python path, decline (None) every text without a UTF-8 form, and the reference must agree.
    model = _model(pattern, add_prefix_space)
    for surrogates in ("replace", "strict"):
        short = model._encode_short(text, None, surrogates)
        try:
            full = single_text.encode_ordinary(model, text, None, surrogates)
        except UnicodeEncodeError:
            assert short is None and surrogates == "strict"
            continue
        if short is None:
            assert any("\ud800" <= c <= "\udfff" for c in text)
        else:
            assert short == full == _reference_ids(model, text)
        assert model.encode_ordinary(text, surrogates=surrogates) == full


def test_long_text_compiled_short_path_declines_what_the_full_path_must_check():
    model = _model("gpt2")

    class Text(str):
        pass

    for args in ((b"ab", None, "replace"), (Text("ab"), None, "replace"), ("ab", 1, "replace"),
                 ("ab", None, "bogus"), ("ab", None, None), ("a" * single_text.LONG_TEXT_CHARS, None, "replace")):
        assert model._encode_short(*args) is None
    assert model.encode_ordinary(Text("ab c")) == model.encode_ordinary("ab c") == _reference_ids(model, "ab c")
    assert model._encode_short("ab", None, "".join(["re", "place"])) == model.encode_ordinary("ab")  # not interned
    for encode in (model.encode_ordinary, model.encode_ordinary_array):  # the array call checks alike
        with pytest.raises(TypeError, match="text must be str, got bytes"):
            encode(b"ab")
        with pytest.raises(ValueError, match="num_threads must be a positive int or None, got 0"):
            encode("ab", num_threads=0)
        with pytest.raises(ValueError, match="surrogates"):
            encode("ab", surrogates="bogus")


def test_long_text_result_lists_are_left_to_reference_counting_and_keep_what_is_put_in_them():
    # A list of ints cannot be in a reference cycle: like encode_ordinary_batch's lists, the single-text results are
    # not tracked by the cyclic GC (its collections were ~30 % of a per-text loop). Whatever the caller puts in one
    # later stays alive through it (an untracked container only hides cycles through itself from the collector).
    import gc

    model = _model("gpt2")
    text = "hello world, it's " * 3
    for ids in (model.encode_ordinary(text), single_text.encode_ordinary(model, text, 2, "replace", part_chars=4)):
        assert ids == _reference_ids(model, text)
        assert not gc.is_tracked(ids)
        kept = [object()]
        ids.append(kept)
        del kept
        gc.collect()
        assert isinstance(ids[-1], list) and type(ids[-1][0]) is object


def test_long_text_is_cut_at_every_safe_point_and_nowhere_else():
    # What the compiled call is handed: the bounds are the safe cuts (part_chars=1 takes every one).
    from hf_bpe.core import pretokenize

    seen = []

    class Spy:
        def encode_text(self, text, pieces, pid, bounds=None, threads=1):
            seen.append((bounds, threads))
            return []

    pre = pretokenize.Pretokenizer("gpt2")
    pre.encode_text("ab cd  ef\r\n g中文 x", Spy(), threads=2, part_chars=1)
    pre.encode_text("中文中文", Spy(), threads=2, part_chars=1)
    pre.encode_text("ab cd", Spy(), threads=2)
    pre.encode_text("ab cd  ef", Spy(), threads=2, part_chars=1)
    pre.encode_text("ab\ud800 cd", Spy(), threads=2, part_chars=1)  # no UTF-8 form: its code points are cut
    # Code point offsets, whatever the text (its parts are transcoded in their threads). No cut: no thread to start.
    assert seen == [([0, 2, 5, 15, 17], 2), ([0, 4], 1), (None, 1), ([0, 2, 5, 9], 2), ([0, 6], 1)]


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
@settings(max_examples=30, deadline=None, derandomize=True)
@given(text=_TEXTS, part_chars=st.sampled_from([0, 1, 2, 7]))
def test_long_text_array_equals_the_list_ids(pattern, add_prefix_space, text, part_chars):
    # encode_ordinary_array: the list path's ids, made in compiled code, cut (part_chars) or whole, any threads.
    model = _model(pattern, add_prefix_space)
    expected = model.encode_ordinary(text)
    got = model.encode_ordinary_array(text)
    assert got.dtype == np.int32 and got.tolist() == expected
    for threads in (1, 2):
        got = single_text.encode_ordinary_array(model, text, threads, "replace", part_chars=part_chars)
        assert got.dtype == np.int32 and got.tolist() == expected


@pytest.mark.parametrize("pattern, tail", [("gpt2", ""), ("gpt4", " 中文")])
def test_long_text_surrogates_behave_as_before_in_lists_and_arrays(pattern, tail):
    model = _model(pattern)
    text = ("a b\ud83d c \ud83d\ude00 d" + tail) * 3
    repaired = text.replace("\ud83d\ude00", "😀").replace("\ud83d", "\ufffd")
    expected = model.encode_ordinary(repaired)
    for one, to_list in ((model.encode_ordinary, list), (model.encode_ordinary_array, np.ndarray.tolist)):
        full = functools.partial(single_text.encode_ordinary if one == model.encode_ordinary
                                 else single_text.encode_ordinary_array, model, text, 2)
        assert to_list(one(text)) == expected
        assert to_list(full("replace", part_chars=1)) == expected
        for call in (lambda: one(text, surrogates="strict"), lambda: full("strict", part_chars=1)):
            with pytest.raises(UnicodeEncodeError) as info:
                call()
            assert (info.value.object, info.value.start, info.value.end) == (text, 3, 4)


def test_long_text_over_the_threshold_uses_threads_by_default_and_in_small_batches():
    model = _model("gpt4")
    text = "".join(f"word{i} 中文字符, it's {i}\r\n  " for i in range(12000))  # > LONG_TEXT_CHARS
    assert len(text) >= single_text.LONG_TEXT_CHARS
    expected = model.encode_ordinary(text, num_threads=1)
    assert expected == _reference_ids(model, text)
    assert model.encode_ordinary(text) == expected
    assert model.encode_ordinary(text, num_threads=2) == expected
    assert model.encode_ordinary_batch(["x y", text, ""], num_threads=2) == [[model.encode_ordinary("x y")[0],
                                                                              *model.encode_ordinary(" y")],
                                                                             expected, []]


def test_long_text_outputs_reuse_one_kept_buffer_and_never_hand_out_a_live_one():
    # A long output's freed id buffer is kept for the next one (csrc/id_pool.hpp): every later call, arrays and
    # lists, one thread and two, single texts and batches, gives the first call's ids (a taken buffer still held
    # the ids of the output it was); an array still alive keeps its own ids; the kept buffer is one output's.
    from hf_bpe.core import _core

    model = _model("gpt4")
    text = "".join(f"word{i} 中文字符, it's {i}\r\n  " for i in range(12000))  # > LONG_TEXT_CHARS, > 64K ids
    expected = model.encode_ordinary(text, num_threads=1)
    assert expected == _reference_ids(model, text) and len(expected) >= 1 << 16
    alive = model.encode_ordinary_array(text, num_threads=1)
    held = alive.copy()
    for threads in (1, 2, 1):
        for _ in range(2):
            assert model.encode_ordinary_array(text, num_threads=threads).tolist() == expected
            assert model.encode_ordinary(text, num_threads=threads) == expected
            ids, offsets = model.encode_ordinary_batch_arrays([text, "x y", text], num_threads=threads)
            assert ids.tolist() == expected + model.encode_ordinary("x y") + expected
            del ids, offsets
            assert _core._kept_id_buffer() >= len(expected)
    assert np.array_equal(alive, held)
    del alive
    assert len(expected) <= _core._kept_id_buffer() <= 4 * len(expected)


def test_long_text_bad_arguments_are_refused_clearly():
    model = BPEModel.bytes_only()
    with pytest.raises(ValueError, match="num_threads must be a positive int or None, got 0"):
        model.encode_ordinary("a", num_threads=0)
    with pytest.raises(TypeError, match="text must be str, got bytes"):
        model.encode_ordinary(b"a")
    pieces = __import__("hf_bpe.core._scanner", fromlist=["x"]).pieces_function()
    with pytest.raises(ValueError, match="bounds must increase"):
        model._encoder.encode_text("ab cd", pieces, 0, [0, 2, 2, 5], 2)
    with pytest.raises(ValueError, match="bounds must run from 0 to len"):
        model._encoder.encode_text("ab cd", pieces, 0, [0, 2], 2)


def test_long_text_custom_regex_and_partial_vocab_keep_the_piece_path():
    custom = hf_bpe.train(_CORPUS, vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+", show_progress=False)
    text = "hello world 中文 x" * 5
    assert single_text.encode_ordinary(custom, text, 2, "replace", part_chars=1) == custom.encode_ordinary(text)
    array = single_text.encode_ordinary_array(custom, text, 2, "replace", part_chars=1)
    assert array.dtype == np.int32 and array.tolist() == custom.encode_ordinary(text)


@functools.lru_cache(maxsize=1)
def _real_models(data) -> tuple[BPEModel, BPEModel]:
    gpt2 = BPEModel.from_files(data / "vocabs" / "gpt2" / "vocab.json", data / "vocabs" / "gpt2" / "merges.txt")
    folder = data / "vocabs" / "llama3"
    llama3 = BPEModel.from_files(folder / "encoder.json", folder / "vocab.bpe", pattern="llama3", ignore_merges=True)
    return gpt2, llama3


@pytest.mark.parametrize("corpus", ["en/english_combined.txt", "zh"])
def test_long_text_real_vocabs_threaded_equals_tiktoken(shared_data, corpus):
    tiktoken = pytest.importorskip("tiktoken")
    from hf_bpe.formats.tiktoken import load_tiktoken

    root = shared_data / "corpora" / corpus
    path = root if root.is_file() else sorted(p for p in root.rglob("*.txt"))[0]
    text = path.read_text(encoding="utf-8")[:300_000]  # over LONG_TEXT_CHARS: cut by default too
    gpt2, llama3 = _real_models(shared_data)
    ranks = load_tiktoken(shared_data / "tiktoken" / "gpt2.tiktoken")
    expected = tiktoken.Encoding("gpt2", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks,
                                 special_tokens={}).encode_ordinary(text)
    assert gpt2.encode_ordinary(text, num_threads=1) == expected
    assert gpt2.encode_ordinary(text, num_threads=2) == expected
    assert single_text.encode_ordinary(gpt2, text, 2, "replace", part_chars=997) == expected
    one = llama3.encode_ordinary(text, num_threads=1)
    assert one == llama3._encoder.encode_words(llama3._pretokenizer.split_bytes(text))  # the piece-list path
    assert single_text.encode_ordinary(llama3, text, 2, "replace", part_chars=997) == one


@pytest.mark.parametrize("added_tokens", [False, True])
def test_long_text_hf_tokenizer_on_one_long_text_is_cut(monkeypatch, added_tokens):
    from hf_bpe.core.pretokenize import Pretokenizer
    from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer

    model = _model("gpt2")
    tok = HFBPETokenizer.from_model(model)
    if added_tokens:
        tok.add_tokens(["<extra>"])
    text = ("hello world, it's 中文 don't\r\n  x " * 5 + "<extra>") * 8  # parts between <extra>: > 64 chars
    plain = tok(text)["input_ids"]
    cuts = []
    encode_text = Pretokenizer.encode_text

    def spy(self, text, encoder, *, threads=1, part_chars=0):
        if len(text) >= 64:
            cuts.append((threads, part_chars > 0))
        return encode_text(self, text, encoder, threads=threads, part_chars=part_chars)

    monkeypatch.setattr(Pretokenizer, "encode_text", spy)
    monkeypatch.setattr(single_text, "LONG_TEXT_CHARS", 64)
    # A model built now (its compiled short-text path takes the length limit when it is built; a pickle rebuilds it).
    tok = HFBPETokenizer.from_model(pickle.loads(pickle.dumps(model)))
    if added_tokens:
        tok.add_tokens(["<extra>"])
    assert tok(text)["input_ids"] == plain
    assert tok([text, "x"])["input_ids"] == [plain, tok("x")["input_ids"]]
    threads = single_text.usable_cpus()  # one CPU: nothing to cut for
    assert len(cuts) >= 2 and set(cuts) == {(threads, True) if threads > 1 else (1, False)}


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@settings(max_examples=25, deadline=None, derandomize=True)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=4))
def test_long_text_small_batches_cut_their_long_texts(pattern, texts):
    model = _model(pattern, pattern == "gpt2")  # add_prefix_space on one of them
    expected = [_reference_ids(model, text) for text in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(single_text, "LONG_TEXT_CHARS", 8)  # most texts count as long: cut, and on 2 threads
        assert model.encode_ordinary_batch(texts, num_threads=2) == expected
        assert model.encode_ordinary_batch(texts, num_threads=1) == expected
        assert [model.encode_ordinary(text, num_threads=2) for text in texts] == expected
        for eos_id in (None, 0):  # the arrays too: long texts cut, their ids spliced in
            rows = expected if eos_id is None else [[*row, eos_id] for row in expected]
            ids, offsets = model.encode_ordinary_batch_arrays(texts, num_threads=2, eos_id=eos_id)
            assert ids.tolist() == [i for row in rows for i in row]
            assert np.diff(offsets).tolist() == [len(row) for row in rows]
            assert model.encode_ordinary_batch_arrow(texts, num_threads=2, eos_id=eos_id).to_pylist() == rows


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize("extra", ["é", "\u201c", "😀"])  # one-, two- and four-byte text (PEP 393 kinds)
@settings(max_examples=4, deadline=None, derandomize=True)
@given(fragments=st.lists(_FRAGMENTS, min_size=1, max_size=40), length=st.sampled_from([16383, 16384, 70000]))
def test_long_text_transcoded_whole_splits_and_encodes_as_by_code_point(pattern, extra, fragments, length):
    # A text of TRANSCODE_MIN (16384) code points or more that is not ASCII is transcoded to UTF-8 whole (64K units
    # at a time) and scanned as UTF-8, where shorter ones are scanned by code point: the same pieces as the regex,
    # the reference's ids, across the threshold and a 64K-unit step, for each kind of str.
    from hf_bpe.core import _scanner

    unit = "".join(fragments) + extra
    text = (unit * (length // len(unit) + 1))[:length]
    if extra not in text:
        text = text[:-1] + extra
    expected = [piece.encode("utf-8") for piece in regex.findall(PATTERNS[pattern], text)]
    assert _scanner.split_utf8(text, _scanner.SCANNERS[pattern]) == expected
    model = _model(pattern)
    expected_ids = _reference_ids(model, text)
    assert model.encode_ordinary_batch([text, "x"], num_threads=1)[0] == expected_ids
    # A long text's parts (cut at code points) are transcoded in their threads the same way.
    for threads in (1, 2):
        assert single_text.encode_ordinary(model, text, threads, "replace", part_chars=20000) == expected_ids
        got = single_text.encode_ordinary_array(model, text, threads, "replace", part_chars=20000)
        assert got.tolist() == expected_ids


def test_long_text_transcoded_whole_declines_a_lone_surrogate() -> None:
    # The whole-text transcoder's lone surrogate (in any 64K-unit step) is the UnicodeEncodeError the code point
    # scanner raises; surrogates="replace" encodes U+FFFD in its place.
    from hf_bpe.core import _scanner

    model = _model("gpt2")
    for at in (5, 70000, 139999):
        text = "naïve café " * 12728
        text = text[:at] + "\ud800" + text[at + 1:]
        with pytest.raises(UnicodeEncodeError):
            _scanner.split_utf8(text, _scanner.SCANNERS["gpt2"])
        with pytest.raises(UnicodeEncodeError):
            model.encode_ordinary(text, surrogates="strict")
        fixed = text.replace("\ud800", "\ufffd")
        assert model.encode_ordinary(text) == model.encode_ordinary(fixed) == _reference_ids(model, fixed)
