"""BPEModel: encoding by merge rank, tiktoken's special-token contract, decoding, files and validation."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.formats.manifest import MANIFEST_NAME
from hf_bpe.model.bpe import SAVED_FILES, BPEModel
from hf_bpe.errors import DisallowedSpecialTokenError


def _model(**options) -> BPEModel:
    vocab = {bytes([b]): b for b in range(256)}
    merges = [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b" ", b"abc")]
    for i, (left, right) in enumerate(merges):
        vocab[left + right] = 256 + i
    specials = {"<|end|>": 260, "<|end|>x": 261, "<s>": 262}
    return BPEModel(vocab, merges, special_tokens=specials, **options)


def test_model_merges_by_rank_then_leftmost():
    model = _model()
    # "abc": (a,b) rank 0 beats (b,c) rank 2; then (ab,c) rank 1.
    assert model.encode_ordinary("abc") == [257]
    assert model.encode_ordinary("bcab") == [258, 256]
    assert model.encode_ordinary(" abc abcd") == [259, 259, 100]


def test_model_special_tokens_follow_tiktoken_contract():
    model = _model()
    with pytest.raises(DisallowedSpecialTokenError, match=r"'<\|end\|>'.*allowed_special"):
        model.encode("x<|end|>")
    assert model.encode("x<|end|>", disallowed_special=()) == model.encode_ordinary("x<|end|>")
    # Leftmost-longest, as tokenizers' added-vocabulary matcher.
    assert model.encode("<|end|>x<|end|>", allowed_special="all") == [261, 260]
    assert model.encode("<s>ab", allowed_special={"<s>"}) == [262, 256]
    with pytest.raises(ValueError, match="unknown special"):
        model.encode("a", allowed_special={"<nope>"})


def test_model_prefix_space_applies_to_each_piece_between_specials():
    model = _model(add_prefix_space=True)
    assert model.encode("abc<s>abc<s><s>", allowed_special="all") == [259, 262, 259, 262, 262]
    assert model.encode_ordinary("") == []
    assert model.encode_ordinary(" abc") == [259]


def test_model_ignore_merges_takes_whole_words_from_the_vocab():
    vocab = {bytes([b]): b for b in range(256)}
    vocab[b"ab"] = 256
    vocab[b"xyz"] = 257  # no merge builds it
    model = BPEModel(vocab, [(b"a", b"b")], ignore_merges=True)
    assert model.encode_ordinary("xyz ab") == [257, 32, 256]
    assert BPEModel(vocab, [(b"a", b"b")]).encode_ordinary("xyz") == [120, 121, 122]


def test_model_decode_bytes_and_errors():
    model = _model()
    assert model.decode_bytes([256, 260]) == b"ab<|end|>"
    assert model.decode([0xE4, 0xB8], errors="replace") == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        model.decode([0xE4, 0xB8], errors="strict")
    with pytest.raises(ValueError, match="token id 999"):
        model.decode([999])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_model_round_trips_any_text(text):
    model = _model(add_prefix_space=False)
    assert model.decode(model.encode(text, disallowed_special=()), errors="strict") == text


def test_model_pickles_and_compares():
    model = _model(pattern="gpt4", add_prefix_space=True)
    clone = pickle.loads(pickle.dumps(model))
    assert clone == model and clone.encode_ordinary("abc abc") == model.encode_ordinary("abc abc")
    assert clone != _model()


def test_model_save_load_round_trip(tmp_path):
    model = _model(pattern="gpt4", add_prefix_space=True)
    model.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == sorted(SAVED_FILES)
    assert MANIFEST_NAME in SAVED_FILES
    loaded = BPEModel.load(tmp_path / "m")
    assert loaded == model
    with pytest.raises(FileExistsError, match="force"):
        model.save(tmp_path / "m")
    model.save(tmp_path / "m", force=True)


@pytest.mark.parametrize(
    ("vocab", "merges", "specials", "error", "match"),
    [
        ("nope", [], {}, TypeError, "mapping"),
        ({b"a": 0}, [], {}, ValueError, "every byte that UTF-8 text can contain"),
        ("bytes", [(b"a", b"q")], {}, ValueError, "not in the vocab"),
        ("bytes", [("a", "b")], {}, TypeError, "pair of bytes"),
        ("bytes", [], {"<s>": 5}, ValueError, "already gives"),
        ("bytes", [], ["<s>"], TypeError, "number them"),
    ],
)
def test_model_rejects_inconsistent_vocabularies(vocab, merges, specials, error, match):
    if vocab == "bytes":
        vocab = {bytes([b]): b for b in range(256)}
    with pytest.raises(error, match=match):
        BPEModel(vocab, merges, special_tokens=specials)


def test_model_load_reports_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing' does not exist; expected a tokenizer folder"):
        BPEModel.load(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="holds no tokenizer: .* but it is empty"):
        BPEModel.load(tmp_path)
    BPEModel.bytes_only().save(tmp_path / "tok")
    (tmp_path / "tok" / "merges.txt").unlink()
    (tmp_path / "tok" / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="has vocab.json but not merges.txt; GPT-2 files come in pairs"):
        BPEModel.load(tmp_path / "tok")


def test_model_load_refuses_truncated_merges_and_non_object_configs(tmp_path):
    # Issue 13: a header-only merges.txt loaded with 0 merges beside 50k merged tokens; a config holding [] gave an
    # AttributeError.
    model = hf_bpe.train(["hello world, hello there"] * 5, vocab_size=270, special_tokens=["<|end|>"],
                         show_progress=False)
    model.save(tmp_path / "tok")
    (tmp_path / "tok" / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    (tmp_path / "tok" / "tokenizer.json").unlink()
    with pytest.raises(ValueError, match=r"merges.txt' has no merges, but the vocabulary has 13 tokens of several "
                                         r"bytes \(first: b'"):
        BPEModel.load(tmp_path / "tok")
    BPEModel.bytes_only(special_tokens={"<|end|>": 256}).save(tmp_path / "bytes")  # no merges needed: loads
    assert BPEModel.load(tmp_path / "bytes").special_tokens == {"<|end|>": 256}
    (tmp_path / "bytes" / "tokenizer_config.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"tokenizer_config.json' must hold a JSON object .*got list \[\]"):
        BPEModel.load(tmp_path / "bytes")


def test_model_load_reads_every_folder_form(tmp_path):
    # Issue 11: a tokenizer.json alone (what transformers 5 saves), GPT-2 files whose specials only tokenizer.json
    # declares (GPT-2's own folder), and both: the same model each time.
    model = hf_bpe.train(["hello world, hello there <|end|>"] * 5, vocab_size=270, special_tokens=["<|end|>"],
                         pattern="gpt4", show_progress=False)
    model.save(tmp_path / "full")
    forms = {"json-only": ["tokenizer.json"], "gpt2-only": ["vocab.json", "merges.txt"],
             "gpt2+json": ["vocab.json", "merges.txt", "tokenizer.json"]}
    for form, names in forms.items():
        (tmp_path / form).mkdir()
        for name in names:
            (tmp_path / form / name).write_bytes((tmp_path / "full" / name).read_bytes())
    text = "hello there<|end|> world"
    for form in ("json-only", "gpt2+json"):
        loaded = BPEModel.load(tmp_path / form)
        assert (loaded.pattern, loaded.special_tokens) == ("gpt4", {"<|end|>": 0}), form
        assert loaded.encode(text, allowed_special="all") == model.encode(text, allowed_special="all")
    # GPT-2 files alone say nothing of the pattern or the specials: <|end|> is an (unreachable) vocabulary entry.
    assert BPEModel.load(tmp_path / "gpt2-only").special_tokens == {}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.text(), cuts=st.lists(st.integers(0, 200), max_size=8), errors=st.sampled_from(["replace", "ignore"]))
def test_model_incremental_decoder_equals_full_decode_for_any_chunking(text, cuts, errors):
    model = _model()
    ids = model.encode_ordinary(text)
    # Also cut inside multi-byte characters: decode a byte-by-byte id stream of the same text.
    for stream in (ids, list(text.encode("utf-8"))):
        bounds = sorted({min(c, len(stream)) for c in cuts})
        chunks = [stream[a:b] for a, b in zip([0, *bounds], [*bounds, len(stream)])]
        decoder = model.incremental_decoder(errors=errors)
        pieces = [decoder.decode(chunk) for chunk in chunks] + [decoder.decode([], final=True)]
        assert "".join(pieces) == model.decode(stream, errors=errors)


def test_model_incremental_decoder_replaces_truncated_characters_at_the_end():
    decoder = _model().incremental_decoder()
    assert decoder.decode([0xE4, 0xBD]) == ""
    assert decoder.decode([], final=True) == "\ufffd"
    assert _model().token_bytes([256, 260]) == [b"ab", b"<|end|>"]


def test_model_sparse_ids_and_utf8_impossible_bytes():
    vocab = {bytes([b]): b for b in range(256) if b not in (0xC0, 0xC1, 0xFF)}
    model = BPEModel(vocab, [], special_tokens={"<huge>": 2**30})
    assert model.vocab_size == 2**30 + 1
    assert model.encode("é<huge>", allowed_special="all") == [0xC3, 0xA9, 2**30]
    assert model.decode([0xC3, 0xA9, 2**30]) == "é<huge>"
    with pytest.raises(ValueError, match="token id 1234"):
        model.decode([1234 * 1000])
    with pytest.raises(ValueError, match="every byte that UTF-8 text can contain"):
        BPEModel({bytes([b]): b for b in range(1, 256)}, [])  # 0x00 can occur in UTF-8 text


def test_model_from_files_special_if_present_skips_absent_names(tmp_path):
    _model().save(tmp_path / "m")
    model = BPEModel.from_files(tmp_path / "m" / "vocab.json", tmp_path / "m" / "merges.txt",
                                special_if_present={"<s>", "<added later>"})
    # Byte-level spellable entries are special only when named: "<s>" is, "<|end|>" is not.
    assert dict(model.special_tokens) == {"<s>": 262}
    assert model.vocab[b"<|end|>"] == 260
    with pytest.raises(ValueError, match="added later"):
        BPEModel.from_files(tmp_path / "m" / "vocab.json", tmp_path / "m" / "merges.txt",
                            special_tokens=["<added later>"])


def test_model_decode_refuses_negative_and_unknown_ids_clearly():
    model = BPEModel.bytes_only()
    for bad in ([-1], [104, -256], iter([40, 1000]), [1.5]):
        with pytest.raises(ValueError, match="is not in the vocabulary"):
            model.decode(bad)
    assert model.decode(iter([104, 105])) == "hi"


_MODELS = {  # trained (its encoder built lazily), loaded (built at once), prefix space, ignore_merges-like custom
    "trained": lambda: hf_bpe.train(_mixed_batch(300), vocab_size=350, show_progress=False),
    "loaded": lambda: pickle.loads(pickle.dumps(hf_bpe.train(_mixed_batch(300), vocab_size=350,
                                                             show_progress=False))),
    "prefix": lambda: hf_bpe.train(_mixed_batch(300), vocab_size=300, add_prefix_space=True, show_progress=False),
    "custom": lambda: hf_bpe.train(_mixed_batch(300), vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+",
                                   show_progress=False),
}


def _outcome(call):
    try:
        return call()
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        return type(exc)


@pytest.mark.parametrize("kind", sorted(_MODELS))
@settings(max_examples=60)
@given(text=st.one_of(st.text(max_size=40), st.just("a\ud800b"), st.builds(lambda n: "ab " * n,
                                                                            st.integers(90_000, 90_010))),
       threads=st.sampled_from([None, 1, 2, 0, "2"]), surrogates=st.sampled_from(["replace", "strict", "bad"]))
def test_model_encode_ordinary_compiled_in_the_instance_equals_the_method(kind, text, threads, surrogates):
    # `model.encode_ordinary` is a compiled callable stored in the instance (the per-text loop's Python frame
    # saved): for any text and option, good or bad, it gives the class method's ids or its exception type.
    model = _MODELS[kind]()
    expected = _outcome(lambda: BPEModel.encode_ordinary(model, text, num_threads=threads, surrogates=surrogates))
    assert _outcome(lambda: model.encode_ordinary(text, num_threads=threads, surrogates=surrogates)) == expected
    installed = type(model.__dict__.get("encode_ordinary")).__name__
    assert installed == ("NoneType" if kind == "custom" else "OrdinaryEncoder")  # a custom regex: no compiled path
    assert _outcome(lambda: model.encode_ordinary(text)) == _outcome(lambda: BPEModel.encode_ordinary(model, text))


def test_model_encode_ordinary_subclass_override_is_kept():
    class Shouting(BPEModel):
        def encode_ordinary(self, text, **options):
            return super().encode_ordinary(text.upper(), **options)

    model = Shouting.bytes_only()
    assert model.encode_ordinary("hi") == [72, 73] and model.encode_ordinary("hi") == [72, 73]
    assert "encode_ordinary" not in model.__dict__


# -- threaded batch encode -------------------------------------------------------------------------------------


def _mixed_batch(size: int) -> list[str]:
    """Texts of every PEP 393 kind (ASCII, Latin-1, BMP, astral), empty ones, runs of spaces, long words."""
    base = ["hello world", "", "naïve café", "中文 字符 😀 l'été", "  \t\n 0000000000", "x" * 300 + " y",
            "it's 12,345 dollars!!", "Ελληνικά  κείμενα", "\u00a0\u2028 line", "🇫🇷👩‍👩‍👧"]
    return [base[i % len(base)] + (" " * (i % 3)) + str(i) for i in range(size)]


def test_model_encode_ordinary_batch_equals_the_loop_for_any_thread_count():
    model = hf_bpe.train(_mixed_batch(400) * 3, vocab_size=400, show_progress=False)
    texts = _mixed_batch(20000)  # over 64K characters: the threads run
    expected = [model.encode_ordinary(text) for text in texts]
    for threads in (None, 1, 2, 3, 7):
        assert model.encode_ordinary_batch(texts, num_threads=threads) == expected, threads
    spaced = hf_bpe.train(_mixed_batch(400), vocab_size=300, add_prefix_space=True, show_progress=False)
    assert spaced.encode_ordinary_batch(texts, num_threads=2) == [spaced.encode_ordinary(t) for t in texts]
    custom = hf_bpe.train(_mixed_batch(400), vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+", show_progress=False)
    assert custom.encode_ordinary_batch(texts[:500], num_threads=2) == [custom.encode_ordinary(t) for t in texts[:500]]


def test_model_encode_ordinary_batch_rejects_bad_input_clearly():
    model = BPEModel.bytes_only()
    with pytest.raises(TypeError, match=r"texts\[2\] is int 5"):
        model.encode_ordinary_batch(["a", "b", 5], num_threads=2)
    with pytest.raises(UnicodeEncodeError):
        model.encode_ordinary_batch(["a" * 70000, "b\ud800"], num_threads=2, surrogates="strict")
    # By default a lone surrogate is U+FFFD, as tiktoken (test_tiktoken_compat.py), on the threaded path too.
    assert model.encode_ordinary_batch(["a" * 70000, "b\ud800"], num_threads=2)[1] == list("b\ufffd".encode())
    with pytest.raises(ValueError, match="num_threads must be a positive int or None, got 0"):
        model.encode_ordinary_batch(["a"], num_threads=0)
    with pytest.raises(TypeError, match="wrap it in a list"):
        model.encode_ordinary_batch("abc")
    assert model.encode_ordinary_batch(("a", "b")) == [[97], [98]]


def test_model_encode_ordinary_batch_from_python_threads_at_once():
    from concurrent.futures import ThreadPoolExecutor

    model = hf_bpe.train(_mixed_batch(400), vocab_size=350, show_progress=False)
    batches = [_mixed_batch(6000 + 100 * k) for k in range(8)]
    expected = [[model.encode_ordinary(t) for t in batch] for batch in batches]
    with ThreadPoolExecutor(4) as pool:  # calls overlap: each gets encoder copies of its own
        results = list(pool.map(lambda b: model.encode_ordinary_batch(b, num_threads=2), batches))
    assert results == expected


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.text(), max_size=30), st.integers(1, 3))
def test_model_encode_ordinary_batch_equals_the_loop_on_any_text(texts, threads):
    model = _BATCH_MODEL
    batch = texts * 200  # over 64K characters when the texts are not tiny: the threads run
    expected = [model.encode_ordinary(t) for t in texts] * 200
    assert model.encode_ordinary_batch(batch, num_threads=threads) == expected


_BATCH_MODEL = hf_bpe.train(_mixed_batch(300), vocab_size=330, show_progress=False)
