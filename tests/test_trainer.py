"""The trainer equals tokenizers' BpeTrainer merge for merge, file for file; and it is deterministic."""

from __future__ import annotations

import ast
import os
import platform
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.tools.peers import train_tokenizers
from hf_bpe.training.bpe.trainer import train
from hf_bpe.training.counts import count_words

# Pieces that stress the pre-tokenizer and the merge loop: ties, emoji (ZWJ, flags, skin tones), CJK, combining
# marks, non-ASCII digits, whitespace runs, contractions, special-token look-alikes.
_PIECES = [
    "the", "The", "THE", "hello", "world", "lower", "lowest", "newer", "wider", "don't", "we'll", "I'M", "you're",
    "they've", "it'd", "'s", "😀", "👩‍👩‍👧", "🇫🇷", "👍🏽", "中文", "漢字", "東京都", "한국어", "é", "e\u0301", "n\u0303",
    "ñ", "123", "4567", "2024", "٣٤٥", "１２", "  ", "   ", "\t", "\t\t", "\r\n", " \n", "x", "!!", "...", "—", "ß",
    "ǅ", "Ωmega", "ﬁ", "<|endoftext|>", "<s>", "\u00a0", "\u3000", "\u0085", "aaaa", "abab",
]


def mixed_corpus(seed: int, lines: int = 200) -> list[str]:
    """Return reproducible lines of mixed scripts and whitespace."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        words = [rng.choice(_PIECES) for _ in range(rng.randint(0, 12))]
        seps = [rng.choice([" ", "", " ", "  ", "\n", "\t"]) for _ in words]
        out.append("".join(w + s for w, s in zip(words, seps)) + rng.choice(["", "\n"]))
    return out


def tokenizers_train(texts, *, files=None, **options):
    """Train tokenizers' BpeTrainer with the configuration hf_bpe reproduces (hf_bpe.tools.peers)."""
    return train_tokenizers(None if files is not None else texts, files=files, **options)


def assert_same_files(ours: hf_bpe.BPEModel, theirs, tmp_path: Path) -> None:
    """vocab.json and merges.txt must be byte-identical to what tokenizers writes."""
    ours.save(tmp_path / "ours")
    (tmp_path / "theirs").mkdir()
    theirs.model.save(os.fspath(tmp_path / "theirs"))
    for name in ("merges.txt", "vocab.json"):
        a = (tmp_path / "ours" / name).read_bytes()
        b = (tmp_path / "theirs" / name).read_bytes()
        if a != b:
            la, lb = a.decode().splitlines(), b.decode().splitlines()
            first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            raise AssertionError(
                f"{name} differs at line {first + 1}: ours {la[first:first + 3]!r} vs tokenizers "
                f"{lb[first:first + 3]!r} ({len(la)} vs {len(lb)} lines)"
            )


@pytest.mark.crossval
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("vocab_size", [257, 300, 420, 2000])
def test_trainer_equals_tokenizers_on_mixed_corpora(tmp_path, seed, vocab_size):
    texts = mixed_corpus(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small corpora run out of pairs at 2000
        ours = train(texts, vocab_size=vocab_size, show_progress=False)
    theirs = tokenizers_train(texts, vocab_size=vocab_size)
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.crossval
@pytest.mark.parametrize(
    "options",
    [
        {"min_frequency": 2},
        {"min_frequency": 5},
        {"special_tokens": ["<|endoftext|>", "<pad>", "<s>"]},
        {"special_tokens": ["<s>", "</s>", "<s>"], "min_frequency": 3},
        {"add_prefix_space": True},
        {"max_token_length": 4},
        {"pattern": "gpt4"},
        {"pattern": "o200k"},
        {"pattern": "gpt4", "special_tokens": ["<|im_start|>"], "min_frequency": 2},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_trainer_equals_tokenizers_with_options(tmp_path, options):
    texts = mixed_corpus(7, lines=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = train(texts, vocab_size=700, show_progress=False, **options)
    theirs = tokenizers_train(texts, vocab_size=700, **options)
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.crossval
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    texts=st.lists(st.text(alphabet=st.sampled_from("ab ab\n'sé中😀1"), max_size=30), max_size=25),
    vocab_size=st.integers(256, 300),
    min_frequency=st.integers(0, 3),
)
def test_trainer_equals_tokenizers_on_random_tie_heavy_corpora(tmp_path_factory, texts, vocab_size, min_frequency):
    if not any(texts):
        return
    tmp_path = tmp_path_factory.mktemp("h")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = train(texts, vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False)
    theirs = tokenizers_train(texts, vocab_size=vocab_size, min_frequency=min_frequency)
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.crossval
def test_trainer_files_equal_tokenizers_train_files(tmp_path):
    # Lines keep their "\n" (and "\r\n"); U+0085 is not a line break for tokenizers' reader.
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_text("".join(mixed_corpus(1)) + "no newline at end\u0085x", encoding="utf-8", newline="")
    second.write_text("\r\n".join(mixed_corpus(2)), encoding="utf-8", newline="")
    ours = train([first, second], vocab_size=600, show_progress=False)
    theirs = tokenizers_train(None, vocab_size=600, files=[first, second])
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.crossval
def test_trainer_dataset_sources_equal_list_source(tmp_path):
    import datasets

    texts = mixed_corpus(3)
    dataset = datasets.Dataset.from_dict({"text": texts, "other": list(range(len(texts)))})
    expected = train(texts, vocab_size=500, show_progress=False)
    assert train(dataset, vocab_size=500, show_progress=False) == expected
    streaming = dataset.to_iterable_dataset()
    assert train(streaming, vocab_size=500, show_progress=False) == expected
    assert train(iter(texts), vocab_size=500, show_progress=False) == expected


def test_trainer_counts_are_independent_of_order_and_workers():
    texts = mixed_corpus(5, lines=400)
    pretokenizer = hf_bpe.Pretokenizer("gpt2")
    one, docs, chars = count_words(texts, pretokenizer)
    shuffled = list(texts)
    random.Random(0).shuffle(shuffled)
    assert count_words(shuffled, pretokenizer)[0] == one
    assert count_words(texts, pretokenizer, workers=2)[0] == one
    assert (docs, chars) == (len(texts), sum(map(len, texts)))


def test_trainer_input_order_does_not_change_the_model():
    texts = mixed_corpus(9, lines=300)
    reordered = list(reversed(texts))
    assert train(texts, vocab_size=600, show_progress=False) == train(reordered, vocab_size=600, show_progress=False)


def test_trainer_vocab_size_is_exact_and_warns_when_corpus_runs_out():
    model = train(mixed_corpus(4), vocab_size=400, special_tokens=["<s>"], show_progress=False)
    assert model.vocab_size == 400
    with pytest.warns(UserWarning, match="ran out of mergeable pairs"):
        small = train(["ab ab"], vocab_size=1000, show_progress=False)
    assert small.vocab_size < 1000


def test_trainer_round_trips_text_absent_from_the_corpus():
    model = train(["only ascii here"] * 3, vocab_size=270, show_progress=False)
    text = "中文 😀 e\u0301 \x00\x7f\ud7ff"
    assert model.decode(model.encode(text)) == text


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_trainer_model_round_trips_arbitrary_unicode(text):
    model = _small_model()
    assert model.decode(model.encode_ordinary(text), errors="strict") == text


_SMALL: list[hf_bpe.BPEModel] = []


def _small_model() -> hf_bpe.BPEModel:
    if not _SMALL:
        _SMALL.append(train(mixed_corpus(11, lines=500), vocab_size=800, show_progress=False))
    return _SMALL[0]


@pytest.mark.parametrize(
    ("corpus", "options", "error", "match"),
    [
        ("just one string", {}, TypeError, "single str"),
        (["a"], {"vocab_size": 100}, ValueError, "at least 256"),
        (["a"], {"vocab_size": 257, "special_tokens": ["<s>", "</s>"]}, ValueError, "at least 258"),
        (["a"], {"vocab_size": "300"}, TypeError, "vocab_size must be an int"),
        (["a"], {"min_frequency": -1}, ValueError, "min_frequency"),
        (["a"], {"special_tokens": "<s>"}, TypeError, r"\['<s>'\]"),
        ([], {}, ValueError, "corpus is empty"),
        (["", ""], {}, ValueError, "corpus is empty"),
        (["ok", 3], {}, TypeError, "item 1 is int"),
        (["a"], {"pattern": "gpt5"}, ValueError, "gpt5"),
        ({"train": ["a"]}, {}, TypeError, "pick one split"),
    ],
)
def test_trainer_rejects_bad_input_clearly(corpus, options, error, match):
    with pytest.raises(error, match=match):
        train(corpus, show_progress=False, **options)


def test_trainer_rejects_missing_text_column_and_bad_files(tmp_path):
    import datasets

    with pytest.raises(ValueError, match=r"no column 'text'.*\['content'\]"):
        train(datasets.Dataset.from_dict({"content": ["a b"]}), show_progress=False)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        train([tmp_path / "missing.txt"], show_progress=False)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"latin1.txt' line 2 is not UTF-8"):
        train(bad, show_progress=False)


# -- real corpora (../shared/data) ------------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_trainer_equals_tokenizers_on_english_32k(shared_data, tmp_path):
    path = shared_data / "corpora" / "en" / "english_combined.txt"
    ours = train(path, vocab_size=32000, show_progress=False)
    theirs = tokenizers_train(None, vocab_size=32000, files=[path])
    assert ours.vocab_size == 32000
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.crossval
@pytest.mark.shared_data
def test_trainer_equals_tokenizers_on_chinese_16k(shared_data, tmp_path):
    files = sorted((shared_data / "corpora" / "zh").glob("*.txt"))
    assert files
    ours = train(files, vocab_size=16000, show_progress=False)
    theirs = tokenizers_train(None, vocab_size=16000, files=files)
    assert_same_files(ours, theirs, tmp_path)


@pytest.mark.crossval
@pytest.mark.parametrize("pattern", [r"\w+", r"\p{L}+|\p{N}+", r"[\w']+", r"[a-z]+"])
def test_trainer_gap_patterns_equal_tokenizers_and_lose_no_text(tmp_path, pattern):
    # A pattern that does not cover the text: the gaps are pieces too (tokenizers' Split "isolated"), so training
    # equals tokenizers and encoding loses nothing; the saved folder encodes the same in the fast tokenizer.
    from transformers import PreTrainedTokenizerFast

    texts = mixed_corpus(5, 300) + ["Hello, world! 123\n", "x² ½ \u200d\u200c'tis\n"]
    ours = hf_bpe.train(texts, vocab_size=420, pattern=pattern, show_progress=False)
    assert_same_files(ours, tokenizers_train(texts, vocab_size=420, pattern=pattern), tmp_path)
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "ours" / "tokenizer.json"))
    for text in texts + ["Hello, world! 123", "👩\u200d👩\u200d👧 x²\tnew text ¡!"]:
        ids = ours.encode(text, disallowed_special=())
        assert ours.decode(ids) == text
        assert ids == fast.encode(text, add_special_tokens=False), text


# Pieces of regexes that leave gaps in text, joined at random into alternations.
_GAP_ATOMS = [r"\w+", r"\p{L}+", r"\p{N}", r"[a-z]+", r"[A-Z][a-z]*", r"\d{1,2}", r"'s", r" ?\p{L}+", r"\S", r"[^\s\p{L}]+",
              r"\p{Han}", r"e+", r"\s+(?!\S)", r"[\u00e9\u0301]"]


@pytest.mark.crossval
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    atoms=st.lists(st.sampled_from(_GAP_ATOMS), min_size=1, max_size=3, unique=True),
    texts=st.lists(st.text(alphabet=st.sampled_from("ab AB\n'sé\u0301中😀12,.\t"), max_size=30), min_size=1, max_size=20),
)
def test_trainer_random_gap_patterns_equal_tokenizers_and_round_trip(tmp_path_factory, atoms, texts):
    # Whatever the pattern leaves between its matches is a piece of its own, in training (merge for merge with
    # tokenizers' Split "isolated") and in encoding (ids of the fast tokenizer on the saved folder, and no loss).
    from transformers import PreTrainedTokenizerFast

    if not "".join(texts):
        return
    pattern = "|".join(atoms)
    tmp_path = tmp_path_factory.mktemp("gap")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = hf_bpe.train(texts, vocab_size=300, pattern=pattern, show_progress=False)
    assert_same_files(ours, tokenizers_train(texts, vocab_size=300, pattern=pattern), tmp_path)
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "ours" / "tokenizer.json"))
    for text in [*texts, "".join(texts), "Hello, World! 42 l'été 中文😀"]:
        ids = ours.encode_ordinary(text)
        assert ours.decode(ids) == text
        assert ids == fast.encode(text, add_special_tokens=False), (pattern, text)


@pytest.mark.crossval
@pytest.mark.parametrize("specials", [["!"], ["he", "ll"], ["<s>", "e", "</s>"]], ids=str)
def test_trainer_special_token_spelling_a_byte_or_merge_equals_tokenizers(tmp_path, specials):
    # tokenizers lets a special token spell a byte ("!") or a merge result ("he"): the special and the regular
    # token share one id, the byte keeps encoding plain text, and every loader agrees with the fast tokenizer.
    from transformers import PreTrainedTokenizerFast

    texts = mixed_corpus(3) + ["hello shell! he'll tell!\n"]
    ours = hf_bpe.train(texts, vocab_size=330, special_tokens=specials, show_progress=False)
    theirs = tokenizers_train(texts, vocab_size=330, special_tokens=specials)
    assert_same_files(ours, theirs, tmp_path)
    folder = tmp_path / "ours"
    loaded = hf_bpe.BPEModel.load(folder)
    hf = hf_bpe.HFBPETokenizer.from_pretrained(folder)
    fast = PreTrainedTokenizerFast.from_pretrained(folder)
    for text in ["hello there! shell", "!!e<s>he", *texts[:20]]:
        expected = theirs.encode(text).ids
        assert loaded.encode(text, allowed_special="all") == expected
        assert hf(text)["input_ids"] == fast(text)["input_ids"] == expected
        assert loaded.decode(expected) == text
        assert hf.decode(expected, skip_special_tokens=True) == fast.decode(expected, skip_special_tokens=True)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), vocab_size=st.integers(260, 600), specials=st.sampled_from([(), ("<s>", "!")]))
def test_trained_model_encodes_as_the_model_built_from_its_vocab_and_merges(seed, vocab_size, specials):
    # A trained model builds its word encoder at the first encode (BPEModel(_trained=True)); a model given the same
    # vocab and merges builds it at once: the two encode and pickle alike.
    import pickle

    texts = mixed_corpus(seed, lines=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small corpus may run out of pairs
        model = train(texts, vocab_size=vocab_size, special_tokens=list(specials), show_progress=False)
    rebuilt = hf_bpe.BPEModel(dict(model.vocab), model.merges, special_tokens=dict(model.special_tokens))
    texts = [*texts, "<s>a!b"]
    expected = rebuilt.encode_batch(texts, allowed_special="all")
    assert pickle.loads(pickle.dumps(model)).encode_batch(texts, allowed_special="all") == expected
    assert model.encode_batch(texts, allowed_special="all") == expected
    assert model == rebuilt


_LEAN = ("import sys; from pathlib import Path; import hf_bpe; "
         "m = hf_bpe.train([Path(sys.argv[1])], vocab_size=300, show_progress=False); m.save(sys.argv[2]); "
         "print(sorted(n for n in ('regex', 'hashlib', '_hashlib') if n in sys.modules))")


def _two_small_runs(tmp_path: Path, script: str) -> list[str]:
    """Run ``script CORPUS OUT`` in two fresh interpreters on a small corpus, sharing a private disk cache (the first
    run builds the scanner's tables from regex and stores them, the second reads them); return their outputs."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest\n" * 50 + "newer wider\n" * 20, encoding="utf-8")
    env = {**os.environ, "HF_BPE_CACHE_DIR": str(tmp_path / "cache")}
    return [subprocess.run([sys.executable, "-c", script, str(corpus), str(tmp_path / f"out{i}")], env=env,
                           capture_output=True, text=True, check=True).stdout for i in range(2)]


def test_trainer_train_and_save_load_neither_regex_nor_openssl(tmp_path):
    # Issue 23: a small training run's memory and start-up were a third imports; `regex` (the named patterns use the
    # compiled scanner, whose tables come from the disk cache) and hashlib's OpenSSL (csrc/sha256.hpp hashes) are
    # not loaded by training and saving with a named pattern.
    runs = _two_small_runs(tmp_path, _LEAN)
    from hf_bpe.core._tally import sha_extensions

    # Without SHA extensions the corpus fingerprint hashes with hashlib's OpenSSL (faster than portable rounds).
    assert runs[1] == ("[]\n" if sha_extensions() else "['_hashlib', 'hashlib']\n"), runs
    assert (tmp_path / "out0" / "merges.txt").read_bytes() == (tmp_path / "out1" / "merges.txt").read_bytes()


# What a training run from files does not need before saving: json and the file formats (GPT-2's, with the compiled
# _spelling), the extending spec, the classic recipes, signal (process pools), sysconfig (the default corpus),
# importlib.abc (the AutoTokenizer hook), heapq (the reference loops), tempfile (writing the disk cache), the
# encoder of a vocabulary that lacks byte tokens.
_LAZY = ("json", "hf_bpe.formats.gpt2", "hf_bpe.formats.tokenizer_json", "hf_bpe.core._spelling",
         "hf_bpe.core._reference_continue", "hf_bpe.model.classic", "hf_bpe.core.interrupts", "signal", "sysconfig",
         "importlib.abc", "heapq", "tempfile", "hf_bpe.model.partial_bytes")
_SMALL_RUN = ("import sys; from pathlib import Path; before = set(sys.modules); import hf_bpe; "
              "m = hf_bpe.train([Path(sys.argv[1])], vocab_size=300, show_progress=False); "
              "print(sorted(set(sys.modules) - before))")


def test_trainer_small_run_leaves_saving_and_other_paths_unimported(tmp_path):
    # Issue 23: at 1 MB the whole process's start-up decides who is faster; a module loaded by `import hf_bpe` and
    # train() but used only by save(), load(), extending or recipes costs every run its import (the modules of
    # _LAZY were ~14 ms and 16 modules). Only what this run added is checked: the interpreter's own start-up (site)
    # may load some of them. The second run (tables read from the disk cache, as in every later run) is checked.
    loaded = set(ast.literal_eval(_two_small_runs(tmp_path, _SMALL_RUN)[1]))
    assert "hf_bpe.training.bpe.trainer" in loaded
    assert sorted(loaded.intersection(_LAZY)) == []


# A child trains (counting a file on two threads, then the merge loop), then probes glibc's mmap threshold: after a
# 16 MiB block is mapped and freed, glibc raises its threshold to that size (its dynamic policy) and serves the next
# 16 MiB block from its heap, unless something pinned the threshold (mallopt), which keeps it mapped. A chunk's size
# word has bit 2 set when it is mapped. The second child pins first, as the trainer once did: the probe sees it.
_MALLOC_PROBE = """
import ctypes, sys
from pathlib import Path
import hf_bpe
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[2] == "pin":
    assert libc.mallopt(-3, 128 * 1024) == 1  # M_MMAP_THRESHOLD
hf_bpe.train(Path(sys.argv[1]), vocab_size=400, workers=2, show_progress=False)
def mapped():
    block = libc.malloc(16 << 20)
    flag = ctypes.c_size_t.from_address(block - 8).value & 2
    libc.free(block)
    return bool(flag)
mapped()
print(mapped())
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="probes glibc's malloc")
def test_training_leaves_the_host_process_malloc_threshold_alone(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(line + "\n" for line in mixed_corpus(7, lines=2000)), encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    mapped = {}
    for mode in ("train", "pin"):
        done = subprocess.run([sys.executable, "-c", _MALLOC_PROBE, str(corpus), mode], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        mapped[mode] = done.stdout.strip()
    # Trained alone: the freed block raised the threshold (nothing pinned it). Pinned: the block is mapped again.
    assert mapped == {"train": "False", "pin": "True"}
