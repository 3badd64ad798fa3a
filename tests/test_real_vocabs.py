"""Real vocabularies (GPT-2, Llama 3, Qwen2, RoBERTa) encode id-for-id like the models were trained with.

Everything here reads ../shared/data and skips with a reason when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.model.bpe import BPEModel

pytestmark = [pytest.mark.shared_data, pytest.mark.crossval]

_SEPARATOR = "\n__ggml_vocab_test__\n"


def _vectors(folder: Path, name: str) -> list[tuple[str, list[int]]]:
    """Read llama.cpp's test vectors: inputs split on the separator, one line of ' id id' per input."""
    inputs = (folder / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split(_SEPARATOR)
    outputs = (folder / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    assert inputs[-1] == "" and outputs[-1] == ""
    return [(text, [int(x) for x in line.split()]) for text, line in zip(inputs[:-1], outputs[:-1], strict=True)]


def _gpt2(data: Path) -> BPEModel:
    folder = data / "vocabs" / "gpt2"
    return BPEModel.from_files(folder / "vocab.json", folder / "merges.txt", special_tokens=["<|endoftext|>"])


def _llama3(data: Path) -> BPEModel:
    folder = data / "vocabs" / "llama3"
    return BPEModel.from_files(
        folder / "encoder.json", folder / "vocab.bpe", pattern="llama3", ignore_merges=True,
        special_tokens={"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001},
    )


def _qwen2(data: Path) -> BPEModel:
    folder = data / "vocabs" / "qwen2"
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    specials = {entry["content"]: int(i) for i, entry in config["added_tokens_decoder"].items()}
    return BPEModel.from_files(folder / "vocab.json", folder / "merges.txt", pattern="qwen2", special_tokens=specials)


def _roberta(data: Path) -> BPEModel:
    folder = data / "vocabs" / "roberta"
    return BPEModel.from_files(folder / "vocab.json", folder / "merges.txt",
                               special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])


_MODELS = {"gpt-2": _gpt2, "llama-bpe": _llama3, "qwen2": _qwen2, "deepseek-r1-qwen": _qwen2, "roberta-bpe": _roberta}
_CACHE: dict[str, BPEModel] = {}


def _model(data: Path, name: str) -> BPEModel:
    if name not in _CACHE:
        _CACHE[name] = _MODELS[name](data)
    return _CACHE[name]


@pytest.mark.parametrize("version", ["vectors_2025_02", "vectors_2025_mid"])
@pytest.mark.parametrize("name", list(_MODELS))
def test_real_vocabs_llamacpp_vectors_raw_api(shared_data, version, name):
    folder = shared_data / "llamacpp" / version
    if not (folder / f"ggml-vocab-{name}.gguf.inp").exists():
        pytest.skip(f"{version} has no vectors for {name}")
    model = _model(shared_data, name)
    vectors = _vectors(folder, name)
    failures = [(text, expected, got) for text, expected in vectors
                if (got := model.encode(text, disallowed_special=())) != expected]
    assert len(vectors) == 46
    assert not failures, f"{len(failures)}/46 differ, first: {failures[0]!r}"


@pytest.mark.parametrize("name", list(_MODELS))
def test_real_vocabs_llamacpp_vectors_hf_tokenizer(shared_data, tmp_path, name):
    from hf_bpe.integrations.hf_tokenizer import HFBPETokenizer

    model = _model(shared_data, name)
    model.save(tmp_path / name)
    tokenizer = HFBPETokenizer.from_pretrained(tmp_path / name)
    vectors = _vectors(shared_data / "llamacpp" / "vectors_2025_02", name)
    got = tokenizer([t for t, _ in vectors], add_special_tokens=False)["input_ids"]
    failures = [(t, e, g) for (t, e), g in zip(vectors, got) if e != g]
    assert not failures, f"{len(failures)}/46 differ, first: {failures[0]!r}"


def test_real_vocabs_gpt2_published_ids(shared_data):
    model = _gpt2(shared_data)
    assert model.encode("hello world") == [31373, 995]
    assert model.encode("Hello world") == [15496, 995]
    assert model.encode("This is some text") == [1212, 318, 617, 2420]
    assert model.encode("0" * 17) == [8269, 10535, 830]
    assert model.encode("<|endoftext|>", allowed_special="all") == [50256]
    assert model.vocab_size == 50257 and len(model.merges) == 50000
    assert all(model.vocab[a + b] == 256 + rank for rank, (a, b) in enumerate(model.merges))


def test_real_vocabs_llama3_published_ids(shared_data):
    model = _llama3(shared_data)
    assert model.encode("hello world") == [15339, 1917]
    assert model.encode("hello <|end_of_text|>", allowed_special="all") == [15339, 220, 128001]
    assert [model.encode("0" * n) for n in (1, 2, 3, 4)] == [[15], [410], [931], [931, 15]]
    assert model.encode("0" * 17) == [931, 931, 931, 931, 931, 410]
    assert model.encode("<|begin_of_text|>A B!", allowed_special="all") == [128000, 32, 426, 0]
    assert len(model.merges) == 280147
    # Several pairs make one token (90,639 tokens), each as long as its pair: merged by the min-scan, exactly.
    assert model._encoder._merges_by_scan()


def test_real_vocabs_qwen2_and_roberta_published_ids(shared_data):
    qwen = _qwen2(shared_data)
    assert qwen.encode("<|im_start|>hello<|im_end|>", allowed_special="all") == [151644, 14990, 151645]
    assert qwen.encode("Hello world") == [9707, 1879]
    assert qwen.encode("你好，世界") == [108386, 3837, 99489]
    roberta = _roberta(shared_data)
    assert roberta.encode("Hello world") == [31414, 232]
    assert roberta.special_tokens["<s>"] == 0


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["en/english_combined.txt", "zh", "multi"])
def test_real_vocabs_gpt2_equals_fast_tokenizer_and_tiktoken_on_every_line(shared_data, corpus):
    import tiktoken
    from transformers import GPT2TokenizerFast

    from hf_bpe.formats.tiktoken import load_tiktoken
    from hf_bpe.core.patterns import PATTERNS

    root = shared_data / "corpora" / corpus
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".txt", ".tsv"))
    lines = [line for f in files for line in f.read_text(encoding="utf-8").split("\n")]
    model = _gpt2(shared_data)
    fast = GPT2TokenizerFast.from_pretrained(shared_data / "vocabs" / "gpt2")
    ranks = load_tiktoken(shared_data / "tiktoken" / "gpt2.tiktoken")
    encoding = tiktoken.Encoding("gpt2", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks,
                                 special_tokens={"<|endoftext|>": 50256})
    ours = model.encode_ordinary_batch(lines)
    assert ours == encoding.encode_ordinary_batch(lines)
    theirs = fast(lines, add_special_tokens=False)["input_ids"]
    mismatches = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert not mismatches, f"{len(mismatches)} of {len(lines)} lines differ, first {lines[mismatches[0]]!r}"


@pytest.mark.slow
def test_real_vocabs_llama3_equals_tokenizers_on_chinese_lines(shared_data, tmp_path):
    # Llama 3 (ignore_merges) on Chinese: most pieces are Han runs over 15 bytes, answered by the word cache before
    # the whole words are asked (issue 23). Cold and warm, 1 and 2 threads, batch and per text, against tokenizers.
    from tokenizers import Tokenizer

    model = _model(shared_data, "llama-bpe")
    model.save(tmp_path / "llama3")
    tokenizer = Tokenizer.from_file(str(tmp_path / "llama3" / "tokenizer.json"))
    files = sorted((shared_data / "corpora" / "zh").glob("*.txt"))
    lines = [line for f in files for line in f.read_text(encoding="utf-8").split("\n")[:2500]]
    expected = [e.ids for e in tokenizer.encode_batch(lines, add_special_tokens=False)]
    fresh = BPEModel.load(tmp_path / "llama3")
    assert fresh._encoder._merges_by_scan()  # the min-scan, not the heap (test_core: scan_merge_of_spelled_...)
    for threads in (1, 2, 1):
        assert fresh.encode_ordinary_batch(lines, num_threads=threads) == expected
    assert [fresh.encode_ordinary(line) for line in lines[::5]] == expected[::5]


_ROUND_TRIP_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    ["\u1780\u17b6\u1793\u17cb\u178f\u17c2", "👩‍👩‍👧 🇫🇷", "нещо на Български", "  \t\n 0000000000000", "Cửa Việt"]
)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "roberta-bpe"])
def test_real_vocabs_round_trip_and_streaming_decode(shared_data, name):
    model = _model(shared_data, name)

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(text=_ROUND_TRIP_TEXT, cuts=st.lists(st.integers(0, 80), max_size=6))
    def check(text, cuts):
        ids = model.encode(text, disallowed_special=())
        assert model.decode(ids, errors="strict") == text
        bounds = sorted({min(c, len(ids)) for c in cuts})
        decoder = model.incremental_decoder()
        pieces = [decoder.decode(ids[a:b]) for a, b in zip([0, *bounds], [*bounds, len(ids)])]
        assert "".join(pieces) + decoder.decode([], final=True) == text

    check()
