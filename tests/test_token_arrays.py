"""Token arrays (issue 23 point 3): flat ids + offsets from compiled code, equal to the list outputs, zero-copy."""

from __future__ import annotations

import gc
import pickle
import sys
from itertools import chain

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.core import _scanner
from hf_bpe.core._core import TokenBuffer, WordEncoder
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.model.bpe import BPEModel

NAMES = sorted(PATTERNS)
# Where the patterns branch, of every PEP 393 kind: ASCII, Latin-1, BMP (CJK), astral, whitespace runs, \r\n,
# apostrophes (contractions), digits, long words (past 8/16-byte boundaries).
FRAGMENTS = ("hello", " world", "  ", "   ", "\t", "\r\n", "\n\n", "'s", "'RE", "'ll", " it's", "12345", "7",
             "naïve", " café", "\u00a0", "中文", "字符", " 😀", "🇫🇷", "\U0001d400", "e\u0301", "Ελληνικά", "!!",
             "http://x.y/z", "x" * 33, " " * 17, "\u0663\u0664", "")
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)
_TRAINING = ["hello world it's 12345 naïve café 中文 字符 😀 Ελληνικά\r\n", "x" * 40 + " hello  world", "'s 'll 7"] * 50
_MODELS: dict[tuple[str, bool], BPEModel] = {}


def _model(name: str, prefix: bool = False) -> BPEModel:
    if (name, prefix) not in _MODELS:
        _MODELS[name, prefix] = hf_bpe.train(_TRAINING, vocab_size=310, pattern=name, add_prefix_space=prefix,
                                             show_progress=False)
    return _MODELS[name, prefix]


def _check(model: BPEModel, texts: list[str], threads: int, eos_id: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Assert that the arrays (numpy and Arrow) hold what the list path gives; return the numpy pair."""
    lists = model.encode_ordinary_batch(texts, num_threads=threads)
    if eos_id is not None:
        lists = [[*row, eos_id] for row in lists]
    ids, offsets = model.encode_ordinary_batch_arrays(texts, num_threads=threads, eos_id=eos_id)
    assert ids.dtype == np.int32 and offsets.dtype == np.int64
    assert ids.tolist() == list(chain(*lists))
    assert np.diff(offsets).tolist() == [len(row) for row in lists]
    assert offsets[0] == 0 and offsets[-1] == len(ids) and len(offsets) == len(texts) + 1
    arrow = model.encode_ordinary_batch_arrow(texts, num_threads=threads, eos_id=eos_id)
    assert arrow.type == pa.list_(pa.int32()) and arrow.to_pylist() == lists
    arrow.validate(full=True)
    return ids, offsets


@settings(deadline=None, derandomize=True, max_examples=40)
@given(st.lists(fragment_text, max_size=30), st.sampled_from(NAMES), st.booleans(), st.sampled_from([None, 0, 7]),
       st.integers(1, 40))
def test_token_arrays_equal_the_lists_on_one_and_two_threads(texts: list[str], name: str, prefix: bool,
                                                             eos_id: int | None, repeat: int) -> None:
    model = _model(name, prefix)
    one = _check(model, texts, 1, eos_id)
    # Past the 64K characters below which a batch runs on one thread: the chunks are gathered in order.
    batch = texts * repeat * 60
    many = _check(model, batch, 2, eos_id)
    assert np.array_equal(many[0], np.tile(one[0], repeat * 60))
    assert np.array_equal(_check(model, batch, 1, eos_id)[0], many[0])


@pytest.mark.parametrize("name", NAMES)
def test_token_arrays_of_an_empty_batch_and_of_empty_texts(name: str) -> None:
    model = _model(name)
    for threads in (1, 2):
        ids, offsets = _check(model, [], threads, None)
        assert ids.tolist() == [] and offsets.tolist() == [0]
        ids, offsets = _check(model, ["", "", ""], threads, None)
        assert ids.tolist() == [] and offsets.tolist() == [0, 0, 0, 0]
        ids, offsets = _check(model, ["", "a", ""] * 30000, threads, 5)
        assert offsets[:4].tolist() == [0, 1, 3, 4]


def test_token_arrays_hold_ids_beyond_uint16() -> None:
    vocab = {bytes([b]): b for b in range(256)}
    vocab[b"ab"], vocab[b" ab"] = 100_000, 70_000
    model = BPEModel(vocab, [(b"a", b"b"), (b" ", b"ab")], special_tokens={"<eos>": 2**31 - 2})
    texts = ["ab ab", "", "xab"] * 25000
    ids, offsets = _check(model, texts, 2, 2**31 - 2)
    assert ids[:4].tolist() == [100_000, 70_000, 2**31 - 2, 2**31 - 2]
    _check(model, texts, 1, None)


def test_token_arrays_treat_surrogates_as_the_list_path() -> None:
    model = _model("gpt2")
    texts = ["a" * 70000, "b\ud800", "\ud83d\ude00 ok", "fine"]  # a lone surrogate, a pair written as two
    for threads in (1, 2):
        ids, offsets = model.encode_ordinary_batch_arrays(texts, num_threads=threads)
        lists = model.encode_ordinary_batch(texts, num_threads=threads)
        assert ids.tolist() == list(chain(*lists)) and np.diff(offsets).tolist() == [len(row) for row in lists]
        assert lists[1] == model.encode_ordinary("b\ufffd")
        assert model.encode_ordinary_batch_arrow(texts, num_threads=threads).to_pylist() == lists
        with pytest.raises(UnicodeEncodeError):
            model.encode_ordinary_batch_arrays(texts, num_threads=threads, surrogates="strict")


def test_token_arrays_of_models_without_a_compiled_path_equal_the_lists() -> None:
    custom = hf_bpe.train(_TRAINING, vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+", show_progress=False)
    vocab = {bytes([b]): b for b in range(256) if b != 0x80}  # a byte missing: the per-text path
    missing = BPEModel(vocab, [], pattern="gpt2", missing_bytes="allow")
    for model in (custom, missing):
        _check(model, ["hello world", "", "naïve 中文 \u0400"] * 5, 2, 9)
        _check(model, [], 1, None)


def test_token_arrays_outlive_their_owner_and_are_not_copied() -> None:
    encoder = WordEncoder([(104, 105, 256)], list(range(256)))
    owner, offsets_owner = encoder.encode_texts_arrays(["hi there", "hi"], _scanner.pieces_function(),
                                                       _scanner.SCANNERS["gpt2"], 1, eos_id=300)
    assert isinstance(owner, TokenBuffer) and owner.itemsize == 4 and offsets_owner.itemsize == 8
    view = memoryview(owner)
    assert (view.format, view.itemsize, view.shape, view.readonly) == ("i", 4, (10,), False)
    assert memoryview(offsets_owner).format == "q"
    view.release()
    before = sys.getrefcount(owner)
    ids = np.frombuffer(owner, dtype=np.int32)
    assert sys.getrefcount(owner) == before + 1  # the array holds the owner, not a copy of its memory
    address = ids.__array_interface__["data"][0]
    assert np.frombuffer(owner, dtype=np.int32).__array_interface__["data"][0] == address
    del owner, offsets_owner
    gc.collect()
    junk = [np.full(1000, -1, dtype=np.int32) for _ in range(100)]  # would reuse freed memory
    assert ids.tolist() == [256, 32, 116, 104, 101, 114, 101, 300, 256, 300] and len(junk) == 100
    # The same through the model's API: the numpy arrays keep the compiled vectors alive.
    model_ids, model_offsets = _model("gpt2").encode_ordinary_batch_arrays(["hello world"] * 3)
    expected = _model("gpt2").encode_ordinary("hello world") * 3
    gc.collect()
    assert model_ids.tolist() == expected and model_offsets[-1] == len(expected)
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(TokenBuffer())


def test_token_arrays_refuse_bad_input_clearly() -> None:
    model = _model("gpt2")
    with pytest.raises(TypeError, match=r"texts\[2\] is int 5"):
        model.encode_ordinary_batch_arrays(["a", "b", 5])
    with pytest.raises(TypeError, match="wrap it in a list"):
        model.encode_ordinary_batch_arrow("abc")
    with pytest.raises(ValueError, match="num_threads must be a positive int or None, got 0"):
        model.encode_ordinary_batch_arrays(["a"], num_threads=0)
    for bad in (-1, True, 2**31 - 1, "1"):
        with pytest.raises(ValueError, match=f"eos_id must be None or a token id.*got {bad!r}"):
            model.encode_ordinary_batch_arrays(["a"], eos_id=bad)
    with pytest.raises(ValueError, match="surrogates"):
        model.encode_ordinary_batch_arrays(["a"], surrogates="ignore")
    assert model.encode_ordinary_batch_arrays(("a", "b"))[1].tolist() == [0, 1, 2]


def test_token_arrays_of_real_vocabularies_with_ids_beyond_uint16(shared_data) -> None:
    # Llama 3 (128K ids, ignore_merges) on real English and Chinese lines: arrays equal lists on 1 and 2 threads.
    folder = shared_data / "vocabs" / "llama3"
    model = BPEModel.from_files(folder / "encoder.json", folder / "vocab.bpe", pattern="llama3", ignore_merges=True,
                                special_tokens={"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001})
    lines = []
    for corpus in ("en", "zh"):
        for path in sorted((shared_data / "corpora" / corpus).glob("*.txt"))[:1]:
            with open(path, encoding="utf-8") as handle:
                lines += [handle.readline() for _ in range(3000)]
    for threads in (1, 2):
        ids, _ = _check(model, lines, threads, 128001)
        assert ids.max() > 65535
