"""IncrementalDecoder: streaming decode with a prefill, against `tokenizers`' DecodeStream on the same tokenizer.json."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.model.bpe import BPEModel

tokenizers = pytest.importorskip("tokenizers")
from tokenizers.decoders import DecodeStream  # noqa: E402

_SPECIALS = ["<|endoftext|>", "<pad>"]
# Emoji (4 bytes, modifiers, ZWJ), CJK (3 bytes), Thai combining marks, Latin-1: tokens that split characters.
_WORDS = ["你好", "世界", "中文字符", " 👍🏽", "👩\u200d👩\u200d👧", "😀😀", " café", " naïve", "อั", " ok", "\ufffd", "!"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A small trained model whose merges cut characters, and `tokenizers` loading the tokenizer.json it saves."""
    corpus = ["".join(_WORDS[i:] + _WORDS[:i]) for i in range(len(_WORDS))] * 5
    model = hf_bpe.train(corpus, vocab_size=320, special_tokens=_SPECIALS, show_progress=False)
    folder = model.save(tmp_path_factory.mktemp("stream") / "tok")
    split = [t for t in (model.id_to_bytes(i) for i in range(model.vocab_size)) if len(t) > 1]
    assert any(t[0] & 0xC0 == 0x80 for t in split) and any(t[-1] >= 0xC0 for t in split)  # really byte-split
    return model, tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def _byte_ids(model: BPEModel, data: bytes) -> list[int]:
    return [model.token_to_id(bytes([b])) for b in data]


_TEXT = st.lists(st.sampled_from(_WORDS + _SPECIALS) | st.text(max_size=3), max_size=12).map("".join)


@st.composite
def _streams(draw):
    """A prefill and the chunks that follow: ids of text (specials included) or of raw bytes (invalid UTF-8 too)."""
    kind = draw(st.sampled_from(["text", "bytes"]))
    if kind == "text":
        ids = draw(_TEXT.map(lambda t: ("text", t)))
    else:
        ids = ("bytes", draw(st.binary(max_size=24) | _TEXT.map(lambda t: t.encode("utf-8"))))
    cut = draw(st.integers(0, 40))
    sizes = draw(st.lists(st.integers(0, 4), max_size=40))
    return ids, cut, sizes, draw(st.booleans())


def _chunks(ids: list[int], sizes: list[int]) -> list[list[int]]:
    chunks, at = [], 0
    for size in sizes + [1] * len(ids):  # then one id at a time to the end
        if at >= len(ids):
            break
        chunks.append(ids[at:at + size])
        at += size
    return chunks


@settings(max_examples=400, deadline=None, derandomize=True)
@given(stream=_streams())
def test_incremental_step_equals_decode_stream_with_prefill(pair, stream):
    model, tokenizer = pair
    (kind, value), cut, sizes, skip = stream
    ids = model.encode(value, allowed_special="all") if kind == "text" else _byte_ids(model, value)
    prefill, rest = ids[:cut], ids[cut:]
    chunks = _chunks(rest, sizes)
    theirs_stream = DecodeStream(ids=prefill, skip_special_tokens=skip)
    ours = model.incremental_decoder(prefill=prefill, skip_special_tokens=skip)
    # The prefill's text already shown: its complete characters (what decode() gives for it, not flushed).
    shown = model.incremental_decoder(skip_special_tokens=skip).decode(prefill)
    kept = [i for i in ids if not (skip and i in model.special_tokens.values())]
    whole = model.decode(kept)
    assert whole == tokenizer.decode(ids, skip_special_tokens=skip)
    prefill_ends_replaced = tokenizer.decode(prefill, skip_special_tokens=skip).endswith("\ufffd")
    out, first = [], True
    for chunk in chunks:
        theirs, mine = theirs_stream.step(tokenizer, chunk), ours.step(chunk)
        if first and prefill_ends_replaced and theirs is not None:
            # Deliberate difference: DecodeStream repeats the prefill's text when that ends inside a character.
            assert mine is not None and theirs == shown + mine, (prefill, chunk)
        else:
            assert mine == theirs, (prefill, chunk)
        first = first and theirs is None
        out.append(mine or "")
    # Pieces joined, with the final flush (DecodeStream has none), are the whole sequence's text.
    assert shown + "".join(out) + ours.decode([], final=True) == whole


@settings(max_examples=200, deadline=None, derandomize=True)
@given(text=_TEXT, cut=st.integers(0, 30), sizes=st.lists(st.integers(0, 4), max_size=30),
       how=st.lists(st.booleans(), max_size=30))
def test_incremental_decode_and_step_mixed_join_to_the_whole_text(pair, text, cut, sizes, how):
    model, _ = pair
    # Odd cuts: one id per byte, so prefills and chunks end inside characters.
    ids = _byte_ids(model, text.encode("utf-8")) if cut % 2 else model.encode(text, allowed_special="all")
    prefill, rest = ids[:cut], ids[cut:]
    ours = model.incremental_decoder(prefill=prefill)
    plain = model.incremental_decoder()
    shown = plain.decode(prefill)
    pieces = []
    chunks = _chunks(rest, sizes)
    for chunk, use_step in zip(chunks, how + [True] * len(chunks)):
        pieces.append((ours.step(chunk) or "") if use_step else ours.decode(chunk))
    pieces.append(ours.decode([], final=True))
    assert shown + "".join(pieces) == model.decode(ids)
    # A prefill is the same as decoding it first and dropping the text.
    assert plain.decode(rest, final=True) == "".join(pieces)


def test_incremental_prefill_mid_character_differs_from_decode_stream_only_by_the_repeated_prefill(pair):
    model, tokenizer = pair
    a, e4, bd, a0 = _byte_ids(model, b"A\xe4\xbd\xa0")
    ours, theirs = model.incremental_decoder(prefill=[a, e4]), DecodeStream([a, e4])
    assert (ours.step(bd), theirs.step(tokenizer, bd)) == (None, None)
    assert (ours.step(a0), theirs.step(tokenizer, a0)) == ("你", "A你")  # DecodeStream repeats the shown "A"
    # Empty prefill and one ending at a character boundary: the same outputs.
    for prefill in ([], [a], [e4, bd, a0]):
        ours, theirs = model.incremental_decoder(prefill=prefill), DecodeStream(prefill)
        steps = [[e4], [bd], [a0, a], [], [e4]]
        assert [ours.step(s) for s in steps] == [theirs.step(tokenizer, s) for s in steps] == [
            None, None, "你A", None, None]
        assert ours.decode([], final=True) == "\ufffd"  # DecodeStream never returns its held-back text


def test_incremental_skip_special_tokens_and_text_ending_with_replacement(pair):
    model, tokenizer = pair
    eot = model.special_tokens["<|endoftext|>"]
    ids = model.encode("你<|endoftext|>\ufffd好", allowed_special="all")
    for skip in (False, True):
        ours, theirs = model.incremental_decoder(skip_special_tokens=skip), DecodeStream(skip_special_tokens=skip)
        assert [ours.step(i) for i in ids] == [theirs.step(tokenizer, i) for i in ids]
    assert model.incremental_decoder(prefill=[eot], skip_special_tokens=True).step([eot]) is None
    assert model.incremental_decoder(prefill=[eot]).step([eot]) == "<|endoftext|>"


def test_incremental_copy_continues_on_its_own(pair):
    model, tokenizer = pair
    ids = model.encode("你好 👍🏽 café", allowed_special="all")
    ours, theirs = model.incremental_decoder(), DecodeStream()
    for i in ids[:3]:
        assert ours.step(i) == theirs.step(tokenizer, i)
    for make in (copy.copy, copy.deepcopy):
        twin, twin_theirs = make(ours), copy.copy(theirs)
        assert [twin.step(i) for i in ids[3:]] == [twin_theirs.step(tokenizer, i) for i in ids[3:]]
    assert [ours.step(i) for i in ids[3:]] == [theirs.step(tokenizer, i) for i in ids[3:]]


@pytest.mark.shared_data
def test_incremental_gpt2_fallback_cases_of_tokenizers_suite(shared_data):
    # tokenizers' test_decode_stream_fallback ("อั" = [19567, 255, 19567, 109] in GPT-2), on the real GPT-2 files.
    folder = shared_data / "vocabs" / "gpt2"
    model = BPEModel.from_files(folder / "vocab.json", folder / "merges.txt", special_tokens=["<|endoftext|>"])
    tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert model.encode("อั") == [19567, 255, 19567, 109]
    for steps in ([[19567], [255], [19567], [109]], [[19567, 255, 19567, 109]], [[19567], [255, 19567, 109]],
                  [[19567], [255], [19567, 109]]):
        ours, theirs = model.incremental_decoder(), DecodeStream()
        assert [ours.step(s) for s in steps] == [theirs.step(tokenizer, s) for s in steps]
    assert model.incremental_decoder(prefill=[19567, 255]).step([19567, 109]) == "ั"
    # The prefill's text "อ\ufffd" ends inside a character: DecodeStream repeats "อ", hf_bpe does not.
    assert DecodeStream([19567, 255, 19567]).step(tokenizer, [109]) == "อั"
    assert model.incremental_decoder(prefill=[19567, 255, 19567]).step([109]) == "ั"


def test_incremental_rejects_bad_input_clearly(pair):
    model, _ = pair
    with pytest.raises(TypeError, match="skip_special_tokens must be a bool, got 'yes'"):
        model.incremental_decoder(skip_special_tokens="yes")
    with pytest.raises(TypeError, match="prefill must be token ids .* got str 'hello'"):
        model.incremental_decoder(prefill="hello")
    with pytest.raises(TypeError, match="ids must be token ids .* got bytes b'hi'"):
        model.incremental_decoder().step(b"hi")
    with pytest.raises(ValueError, match="token id 99999 is not in the vocabulary"):
        model.incremental_decoder().step(99999)
