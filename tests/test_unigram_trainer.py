"""Unigram training equals ``spm_train --model_type=unigram`` (sentencepiece 0.2.3): pieces, score bits, types
(issue 24, point 1)."""

from __future__ import annotations

import io
import warnings
from typing import Any

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.formats.sentencepiece_model import SentencePieceModel
from hf_bpe.core.stl_heap import heap_pop, heap_push
from hf_bpe.training.unigram.reference import train_unigram_reference
from hf_bpe.training.unigram.trainer import train_unigram
from hf_bpe.training.unigram import seed as unigram_seed
from hf_bpe.training.unigram.seed import lcp_array, suffix_array
from helpers import corpus_sample, first_difference, piece_triples, spm_unigram, whole_corpus

pytestmark = pytest.mark.crossval



def _spm_train(*args: Any, model_type: str, **kwargs: Any) -> Any:
    """hf_bpe's SentencePiece trainer of ``model_type``: ``train_unigram`` or ``train_sentencepiece`` (BPE)."""
    trainer = hf_bpe.train_unigram if model_type == "unigram" else hf_bpe.train_sentencepiece
    return trainer(*args, model_type=model_type, **kwargs)

def _spm(lines: list[str], vocab_size: int, **options) -> SentencePieceModel:
    return spm_unigram(sentence_iterator=iter(lines), vocab_size=vocab_size, **options)


_triples = piece_triples


def _assert_same(lines: list[str], vocab_size: int, **options) -> SentencePieceModel:
    """hf_bpe's unigram trainer (the compiled loops, through the public API) equals spm_train, or both refuse the
    input."""
    try:
        theirs = _triples(_spm(lines, vocab_size, **options))
    except RuntimeError as exc:  # e.g. vocab_size above what the corpus gives, with hard_vocab_limit
        with pytest.raises(ValueError):
            hf_bpe.train_unigram(lines, vocab_size=vocab_size, **options)
        return pytest.skip(f"spm_train refuses it too: {str(exc)[:80]}")  # type: ignore[return-value]
    ours = hf_bpe.train_unigram(lines, vocab_size=vocab_size, **options)
    mine = _triples(ours)
    assert mine == theirs, first_difference(mine, theirs)
    assert ours.model_type == "unigram"
    return ours


@pytest.fixture(scope="module")
def english(shared_data) -> list[str]:
    return corpus_sample(shared_data, "en", 12_000)


@pytest.fixture(scope="module")
def chinese(shared_data) -> list[str]:
    return corpus_sample(shared_data, "zh", 10_000)


@pytest.fixture(scope="module")
def multilingual(shared_data) -> list[str]:
    return corpus_sample(shared_data, "multi", 1_000)


@pytest.mark.shared_data
@pytest.mark.parametrize("threads", [1, 2, 16])
@pytest.mark.parametrize(("corpus", "vocab_size"), [("english", 300), ("chinese", 700), ("multilingual", 500)])
def test_unigram_corpora_equal_spm_train_for_each_thread_count(request, corpus, vocab_size, threads):
    """The E-step and pruning sums follow spm_train's thread split: equal for 1, 2 and 16 threads."""
    _assert_same(request.getfixturevalue(corpus), vocab_size, num_threads=threads, hard_vocab_limit=False)


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.unigram_grid  # minutes each, ten under load: with the grid (--unigram-grid), not on every run
@pytest.mark.parametrize(("corpus", "vocab_size"), [("en", 8000), ("en", 32000), ("zh", 16000)])
def test_unigram_whole_corpora_equal_spm_train(shared_data, corpus, vocab_size):
    """The compiled trainer on whole corpora (English 23.5 MB, the four Chinese files 22.1 MB) read as
    ``spm_train --input`` reads them, with spm_train's defaults (16 threads); minutes each, so run with the
    whole-corpus grid (``--unigram-grid``)."""
    paths = whole_corpus(shared_data, corpus)
    theirs = spm_unigram(input=",".join(map(str, paths)), vocab_size=vocab_size)
    with warnings.catch_warnings():  # the skipped long lines are said (tested with BPE); spm_train skips them too
        warnings.simplefilter("ignore", UserWarning)
        ours = hf_bpe.train_unigram(paths, vocab_size=vocab_size)
    assert _triples(ours) == _triples(theirs)


_OPTIONS = [
    {"byte_fallback": True},
    {"split_digits": True, "max_sentencepiece_length": 6},
    {"max_sentencepiece_length": 3},
    {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False},
    {"normalization_rule_name": "identity"},
    {"split_by_whitespace": False},
    {"split_by_unicode_script": False, "split_by_number": False},
    {"control_symbols": ["<ctl>"], "user_defined_symbols": ["<sep>", "@@"]},
    {"character_coverage": 0.98},
    {"allow_whitespace_only_pieces": True},
    {"unk_id": 3, "bos_id": -1, "eos_id": 0, "pad_id": 1},
    {"required_chars": "xyzé"},
    {"seed_sentencepiece_size": 300, "hard_vocab_limit": False},
    {"seed_sentencepiece_size": 0},
    {"shrinking_factor": 0.6},
    {"num_sub_iterations": 1},
    {"num_sub_iterations": 3},
    {"vocab_size": 450, "hard_vocab_limit": True},
]


@pytest.mark.shared_data
@pytest.mark.parametrize("options", _OPTIONS, ids=[repr(o) for o in _OPTIONS])
def test_unigram_english_equals_spm_train_with_each_option(english, options):
    options = dict(options)
    vocab_size = options.pop("vocab_size", 600 if options.get("byte_fallback") else 350)
    _assert_same(english, vocab_size, num_threads=2, **options)


_SCRIPT_CASES = {
    "armenian_full_stop": ["\u0564\u0580\u0561\u0576\u0581\u0589", "\u056f\u0578\u0572\u0574\u056b\u0581\u0589"],
    "han_added_after_9": ["\u4e2d\u6587\u9fef\u4e2d\u6587", "\u6587\u9fef\u4e2d"] * 3,
    "latin_added_after_9": ["ab\ua7b9ab c\ua7b9", "\ua7b9ab"] * 3,
}


@pytest.mark.parametrize("lines", list(_SCRIPT_CASES.values()), ids=list(_SCRIPT_CASES))
def test_unigram_pieces_keep_to_sentencepieces_unicode_9_scripts(lines):
    """spm_train forbids pieces across scripts as Unicode 9.0 assigns them (its unicode_script_map.h), not as a newer
    Unicode does: U+0589 ARMENIAN FULL STOP is Common there, so U+0581 U+0589 is no piece (found by the whole-corpus
    grid in UDHR's Armenian lines; these two words are the minimal input), and characters added since 9.0 (U+9FEF,
    U+A7B9) are Common."""
    _assert_same(lines, 20, num_threads=1, hard_vocab_limit=False)


# Small alphabets (many ties), repeated words, CJK, digits, whitespace runs and characters the normalizer changes.
_ALPHABET = st.sampled_from(list("aab  b1２アカ中文éΩ-.") + ["  ", "\t", "99", "ab", "aaaa", "中文中", "ﬁ"])
_WORDS = st.sampled_from(["the", "then", "there", "a", "an", "and", "中文", "文字", "123", "▁x"])


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(_ALPHABET, max_size=12).map("".join), min_size=1, max_size=25),
       vocab_size=st.integers(10, 40), threads=st.sampled_from([1, 2, 16]),
       options=st.sampled_from([{}, {"split_by_whitespace": False}, {"character_coverage": 0.98},
                                {"max_sentencepiece_length": 2}, {"split_digits": True}, {"byte_fallback": True}]))
def test_unigram_generated_corpora_equal_spm_train(lines, vocab_size, threads, options):
    if options.get("byte_fallback"):
        vocab_size += 259
    try:
        theirs = _triples(_spm(lines, vocab_size, num_threads=threads, hard_vocab_limit=False, **options))
    except RuntimeError:
        with pytest.raises(ValueError):
            train_unigram_reference(lines, vocab_size=vocab_size, num_threads=threads, hard_vocab_limit=False,
                                    **options)
        return
    for train in (train_unigram_reference, train_unigram):  # the reference and the compiled loops
        ours = train(lines, vocab_size=vocab_size, num_threads=threads, hard_vocab_limit=False, **options)
        assert _triples(ours) == theirs, train.__name__


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.lists(_WORDS, min_size=1, max_size=8).map(" ".join), min_size=2, max_size=40),
       vocab_size=st.integers(12, 30), threads=st.sampled_from([1, 2, 16]))
def test_unigram_repeated_words_equal_spm_train(words, vocab_size, threads):
    """Repeated words: many equal counts, seeds that end sentences (counted twice by spm_train's NUL trimming)."""
    try:
        theirs = _triples(_spm(words, vocab_size, num_threads=threads, hard_vocab_limit=False))
    except RuntimeError:
        return
    for train in (train_unigram_reference, train_unigram):
        assert _triples(train(words, vocab_size=vocab_size, num_threads=threads, hard_vocab_limit=False)) == theirs


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.binary(max_size=60) | st.lists(st.sampled_from([b"a", b"b", b"\0"]), max_size=60).map(b"".join))
def test_suffix_and_lcp_arrays_equal_the_naive_ones(data):
    naive = sorted(range(len(data)), key=lambda i: data[i:])
    assert suffix_array(data) == naive
    lcp = lcp_array(data, naive)
    for i in range(1, len(data)):
        a, b = data[naive[i - 1]:], data[naive[i]:]
        assert lcp[i] == next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(data=st.binary(max_size=300) | st.lists(st.sampled_from([b"a", b"b", b"\0", b"ab", b"ba"]), max_size=150)
       .map(b"".join))
def test_compiled_suffix_array_equals_the_reference(data):
    """The seed step's induced sorting (SA-IS, recursing on repeated LMS substrings: the two-letter runs) gives the
    reference's suffix array, a shorter suffix before the longer ones it begins."""
    from hf_bpe.core._unigram import suffix_array as compiled_suffix_array

    assert compiled_suffix_array(data) == suffix_array(data)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(values=st.lists(st.integers(0, 4), max_size=40))
def test_heap_pops_the_highest_first(values):
    """libstdc++'s heap order is what ties follow; whatever the ties, pops come highest first, each item once."""
    heap: list[list] = []
    items = [[i, None, float(v), 0.0] for i, v in enumerate(values)]
    for item in items:
        heap_push(heap, item, 2)
    popped = [heap_pop(heap, 2) for _ in items]
    assert [p[2] for p in popped] == sorted(values, reverse=True)
    assert sorted(p[0] for p in popped) == list(range(len(values)))


def test_unigram_options_are_checked_as_spm_train_checks_them():
    for bad in ({"num_threads": 0}, {"shrinking_factor": 0.3}, {"num_sub_iterations": 11},
                {"seed_sentencepiece_size": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            hf_bpe.train_unigram(["a b"], vocab_size=8, **bad)
    with pytest.raises(TypeError, match="num_threads"):
        hf_bpe.train_unigram(["a b"], vocab_size=8, num_threads="2")
    with pytest.raises(ValueError, match="seed_sentencepieces_file"):
        hf_bpe.train_unigram(["a b"], vocab_size=8, seed_sentencepieces_file="x")
    with pytest.raises(ValueError, match="model_type"):
        hf_bpe.train_sentencepiece(["a b"], vocab_size=8, model_type="char")
    with pytest.raises(ValueError, match="model_type"):
        from hf_bpe.training.sentencepiece.bpe import train_sentencepiece_reference
        train_sentencepiece_reference(["a b"], vocab_size=8, model_type="unigram")


def test_cli_trains_unigram_equal_to_spm_train(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    lines = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs", "1234 5678"] * 3
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "24", "--out",
                 str(tmp_path / "out"), "--spm", "model_type=unigram", "--spm", "num_threads=1"]) == 0
    written = (tmp_path / "out" / "tokenizer.model").read_bytes()
    expected = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_writer=expected, model_type="unigram", vocab_size=24,
                                   num_threads=1, minloglevel=2)
    assert _triples(SentencePieceModel.from_bytes(written)) == _triples(
        SentencePieceModel.from_bytes(expected.getvalue()))
    processor = spm.SentencePieceProcessor(model_proto=written)  # sentencepiece loads it and encodes as its own
    reference = spm.SentencePieceProcessor(model_proto=expected.getvalue())
    assert processor.encode(lines, out_type=str) == reference.encode(lines, out_type=str)
    assert "unigram" in capsys.readouterr().err
    # The Hugging Face files beside it: HFSentencePieceTokenizer and (the class the folder names) the fast tokenizer
    # of tokenizer.json, the same ids.
    from transformers import PreTrainedTokenizerFast

    from hf_bpe import HFSentencePieceTokenizer

    auto = HFSentencePieceTokenizer.from_pretrained(tmp_path / "out")
    fast = PreTrainedTokenizerFast.from_pretrained(tmp_path / "out")
    for line in lines:
        assert auto(line, add_special_tokens=False)["input_ids"] == fast(line, add_special_tokens=False)["input_ids"] \
            == reference.encode(line)


@pytest.mark.shared_data
@pytest.mark.parametrize("threads", [1, 16])
def test_unigram_compiled_loops_equal_the_reference(english, threads):
    """The compiled loops (under the reference's driver) and the compiled driver (pieces, M-step and pruning in
    C++) give the pure-Python model, whatever the real threads."""
    from hf_bpe.training.unigram.reference import run_unigram
    from hf_bpe.training.unigram.trainer import CompiledLoops, run_compiled

    expected = _triples(train_unigram_reference(english, vocab_size=300, num_threads=threads))
    for workers in (1, 2, 3):
        class Loops(CompiledLoops):
            def __init__(self, texts, n, w=workers):
                super().__init__(texts, n, w)

        assert _triples(run_unigram(english, 300, {"num_threads": threads}, Loops)) == expected, workers
        assert _triples(run_compiled(english, 300, {"num_threads": threads}, workers)) == expected, workers


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(_ALPHABET, max_size=12).map("".join), min_size=1, max_size=25),
       chunk=st.integers(1, 80), keep=st.sampled_from([1, 3, 12, 1000]), options=st.sampled_from(
           [{}, {"split_by_whitespace": False}, {"max_sentencepiece_length": 2}, {"split_digits": True},
            {"max_sentencepiece_length": 1}, {"max_sentencepiece_length": 3, "split_by_whitespace": False},
            {"allow_whitespace_only_pieces": True}, {"split_by_unicode_script": False, "split_by_number": False}]))
def test_compiled_seed_step_equals_the_reference(lines, chunk, keep, options):
    """Small chunks and small tables: several chunks add into one table, which keeps its best entries; small
    max_sentencepiece_length: the compiled LCP values are capped; the characters counted in C++."""
    from hf_bpe.training.sentencepiece.bpe import SPM_DEFAULTS

    opts = {**SPM_DEFAULTS, **options, "seed_sentencepiece_size": keep}
    sentences = [[text.replace(" ", "\u2581"), 1 + len(text) % 2] for text in lines if text]
    assume(sentences)  # LoadSentences leaves at least one
    saved = unigram_seed.CHUNK_BYTES
    unigram_seed.CHUNK_BYTES = chunk
    try:
        expected = unigram_seed.seed_pieces(sentences, opts, vocab_size=10)
        assert unigram_seed.seed_pieces(sentences, opts, vocab_size=10,
                                        candidates=unigram_seed.compiled_candidates,
                                        count_chars=unigram_seed.compiled_count_characters) == expected
    finally:
        unigram_seed.CHUNK_BYTES = saved


@pytest.mark.shared_data
def test_num_threads_changes_the_model_as_in_spm_train(english):
    """spm_train's float sums depend on num_threads (here 160 of 300 pieces differ, in score bits or order, between
    1 and 16 threads): the thread-count tests above compare models that really differ."""
    one = hf_bpe.train_unigram(english, vocab_size=300, num_threads=1)
    sixteen = hf_bpe.train_unigram(english, vocab_size=300, num_threads=16)
    assert _triples(one) != _triples(sixteen)
    assert _triples(sixteen) == _triples(hf_bpe.train_unigram(english, vocab_size=300))


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.lists(_WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=12),
       repeat=st.integers(2, 4), length=st.integers(1, 4))
def test_compiled_seed_step_equals_the_reference_on_repeated_sentences(words, repeat, length):
    """Repeated sentences make suffixes that agree far beyond the deepest piece, ordered arbitrarily by the compiled
    walk: the LCP values after them must still be exact."""
    from hf_bpe.training.sentencepiece.bpe import SPM_DEFAULTS

    opts = {**SPM_DEFAULTS, "max_sentencepiece_length": length, "seed_sentencepiece_size": 1000}
    sentences = [["\u2581" + text.replace(" ", "\u2581"), 1] for text in words * repeat]
    expected = unigram_seed.seed_pieces(sentences, opts, vocab_size=10)
    assert unigram_seed.seed_pieces(sentences, opts, vocab_size=10,
                                    candidates=unigram_seed.compiled_candidates,
                                        count_chars=unigram_seed.compiled_count_characters) == expected


@pytest.mark.shared_data
def test_compiled_seed_step_equals_the_reference_on_real_text(shared_data):
    """A chunk of 64 KiB or more: the compiled LCP array and interval walk run in two parts on two threads (cut
    where the LCP is 0), their tables added; the seeds are still the reference's."""
    from hf_bpe.training.sentencepiece.bpe import SPM_DEFAULTS

    opts = {**SPM_DEFAULTS, "seed_sentencepiece_size": 5000}
    lines = corpus_sample(shared_data, "en", 40_000)
    sentences = [["\u2581" + line.replace(" ", "\u2581"), 1 + i % 3] for i, line in enumerate(lines) if line]
    assert sum(len(text.encode()) * count for text, count in sentences) > 1 << 16
    expected = unigram_seed.seed_pieces(sentences, opts, vocab_size=10)
    assert unigram_seed.seed_pieces(sentences, opts, vocab_size=10,
                                    candidates=unigram_seed.compiled_candidates,
                                        count_chars=unigram_seed.compiled_count_characters) == expected


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.tuples(st.text("abc\u2581", max_size=10), st.integers(1, 3)), min_size=1, max_size=12),
       first=st.sets(st.text("abc\u2581", min_size=1, max_size=3), min_size=1, max_size=12),
       second=st.sets(st.text("abc\u2581", min_size=1, max_size=3), min_size=1, max_size=12),
       scores=st.lists(st.floats(-20, -0.5, width=32), min_size=12, max_size=12), threads=st.sampled_from([1, 3]))
def test_compiled_loops_reuse_the_first_models_pieces_only_when_they_cover_the_next(texts, first, second, scores,
                                                                                    threads):
    """The compiled E-step and Viterbi counts record the pieces found under the first model and replay them for a
    later one whose pieces are all among them (a subset: the trainer's case), else walk the new trie: either way
    the reference's sums, round after round on one corpus."""
    from hf_bpe.training.unigram.reference import ReferenceLoops
    from hf_bpe.training.unigram.trainer import CompiledLoops

    texts = [[text, count] for text, count in texts]
    compiled = CompiledLoops(texts, threads, workers=2)
    reference = ReferenceLoops(texts, threads)
    one = sorted(first | second)
    # A superset (recorded anew), subsets, then one with a piece the record may lack.
    models = [sorted(first), one, sorted(second), one, sorted(first)[::-1], sorted({*one[:1], "acb\u2581"})]
    for pieces in models:
        scored = [(piece, scores[i % len(scores)]) for i, piece in enumerate(pieces)]
        for method in ("e_step", "viterbi_counts"):
            assert list(getattr(compiled, method)(compiled.model(scored))) == getattr(reference, method)(
                reference.model(scored))


def _assert_loads_equal(lines: list[str], vocab_size: int, options: dict) -> None:
    """The compiled store's sentences, required characters and words equal load_sentences' (the spec, with the
    pure-Python normalizer) and the reference's word count."""
    from hf_bpe.training.unigram.reference import ReferenceLoops, check_unigram_options
    from hf_bpe.training.unigram.trainer import CompiledLoops

    opts, meta, spec = check_unigram_options(vocab_size, options)
    sentences, required, words = ReferenceLoops.load(lines, opts, meta, spec, vocab_size)
    compiled, compiled_required, compiled_words = CompiledLoops.load(lines, opts, meta, spec, vocab_size)
    assert compiled == sentences
    assert list(compiled_required.items()) == list(required.items())
    if opts["split_by_whitespace"]:
        assert compiled_words() == words()


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(st.one_of(_ALPHABET, st.sampled_from(["\u2585", "\u2581", "<u>", "\x00", " x "])),
                               max_size=10).map("".join), min_size=1, max_size=20),
       options=st.sampled_from([{}, {"split_by_whitespace": False}, {"allow_whitespace_only_pieces": True},
                                {"character_coverage": 0.8}, {"character_coverage": 0.6, "split_by_whitespace": False},
                                {"user_defined_symbols": ["<u>", "ab"]}, {"remove_extra_whitespaces": False},
                                {"add_dummy_prefix": False}, {"normalization_rule_name": "identity"},
                                {"max_sentence_length": 12}]))
def test_compiled_loader_equals_load_sentences(lines, options):
    """The compiled loader (C++ normalization, counts, unknown characters and words) gives load_sentences'
    sentences in its order, its required characters with their counts, and the reference's words."""
    try:
        _assert_loads_equal(lines, 200, options)
    except ValueError as exc:  # an empty corpus: the compiled loader must refuse it with the same message
        from hf_bpe.training.sentencepiece.bpe import load_sentences
        from hf_bpe.training.unigram.reference import check_unigram_options

        with pytest.raises(ValueError, match="^" + __import__("re").escape(str(exc)) + "$"):
            load_sentences(lines, *check_unigram_options(200, options), 200)


@pytest.mark.shared_data
@pytest.mark.parametrize("options", [{}, {"character_coverage": 0.98, "split_by_whitespace": False}])
def test_compiled_loader_equals_load_sentences_on_real_text(english, chinese, options):
    """The same on real English and Chinese text (Chinese at a low coverage: many unknown characters)."""
    _assert_loads_equal(english[:3000] + chinese[:2000], 8000, options)


# Hostile corpora (found by fuzzing against spm_train): each refused where spm_train refuses, never a crash.

@pytest.mark.parametrize("options", [{}, {"required_chars": "xy"}])
def test_unigram_refuses_a_corpus_of_user_defined_symbols_only(tmp_path, capsys, options):
    """Text that is all user-defined symbols (no dummy prefix) leaves no seed characters: spm_train refuses
    (``!required_chars_.empty()``, or ``!seed_sentencepieces.empty()`` with required_chars); hf_bpe segfaulted in
    the compiled seed step and the reference died on ``math.log(0)``."""
    lines, kwargs = ["中", "中中\x00"], {"user_defined_symbols": ["中"], "add_dummy_prefix": False, **options}
    with pytest.raises(RuntimeError):
        _spm(lines, 10, hard_vocab_limit=False, **kwargs)
    for train in (train_unigram, train_unigram_reference):
        with pytest.raises(ValueError, match="user_defined_symbols"):
            train(lines, vocab_size=10, hard_vocab_limit=False, **kwargs)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "10", "--out",
                 str(tmp_path / "out"), "--spm", "model_type=unigram", "--spm", "user_defined_symbols=中",
                 "--spm", "add_dummy_prefix=false", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hf-bpe: error:") and "user_defined_symbols" in err


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_a_lone_surrogate_is_refused_naming_the_sentence(model_type):
    """A str with a lone surrogate has no UTF-8: sentencepiece refuses it (pybind11 cannot cast it), hf_bpe raised
    a bare UnicodeEncodeError from inside the store; now a ValueError naming the item, the character and the fix,
    from the compiled loader and the references alike."""
    from hf_bpe.training.sentencepiece.bpe import train_sentencepiece_reference

    lines = ["abc", "ab\ud800cd", "abc"]
    with pytest.raises(RuntimeError):
        _spm(lines, 10, hard_vocab_limit=False)
    reference = train_unigram_reference if model_type == "unigram" else train_sentencepiece_reference
    for train in (lambda *a, **k: _spm_train(*a, model_type=model_type, **k), reference):
        with pytest.raises(ValueError, match=r"corpus item 1 holds a lone surrogate '\\ud800' at character 2") as info:
            train(lines, vocab_size=10, hard_vocab_limit=False)
        assert not isinstance(info.value, UnicodeError) and "surrogatepass" in str(info.value)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("option", [{"user_defined_symbols": ["x", "a\x00b"]}, {"control_symbols": ["\x00"]},
                                    {"unk_piece": "<u\x00nk>"}])
def test_a_piece_option_with_a_nul_is_refused(model_type, option):
    """spm_train cuts a symbol at a NUL (user_defined_symbols=['a\\0b'] trains 'a'; ['\\0'] fails) or fails (a meta
    piece); hf_bpe kept the symbol whole, writing a model sentencepiece cannot load ("piece must not include null
    character"). Now refused, naming the option."""
    name, value = next(iter(option.items()))
    with pytest.raises(ValueError, match=f"{name} holds .*NUL"):
        _spm_train(["a\x00b hello"], vocab_size=20, model_type=model_type, hard_vocab_limit=False,
                                   **option)


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_vocab_size_is_an_int32_and_a_huge_one_is_not_walked(model_type):
    """spm_train cannot parse a vocab_size above 2**31 - 1; hf_bpe took it and walked every id up to it (hours at
    2**40). Below it, with hard_vocab_limit=False, the model ends with the pieces the corpus makes, at once."""
    with pytest.raises(ValueError, match="cannot parse"):  # sentencepiece says so with a ValueError
        _spm(["hello world"], 2**31)
    with pytest.raises(ValueError, match="vocab_size must be at most 2147483647"):
        _spm_train(["hello world"], vocab_size=2**31, model_type=model_type, hard_vocab_limit=False)
    model = _spm_train(["hello world"], vocab_size=2**31 - 1, model_type=model_type,
                                       hard_vocab_limit=False)
    small = _spm_train(["hello world"], vocab_size=60, model_type=model_type, hard_vocab_limit=False)
    assert _triples(model) == _triples(small)


@pytest.mark.parametrize("options", [{"pad_id": 20}, {"unk_id": 25, "bos_id": -1, "eos_id": 11}])
def test_a_meta_id_beyond_the_pieces_the_corpus_makes_is_refused(options):
    """With hard_vocab_limit=False the vocabulary ends with the corpus' pieces; a meta id beyond them: spm_train
    refuses (its Serialize checks each meta piece is at its id), hf_bpe wrote the piece at a smaller id (pad_id=20
    at id 11) in a model whose trainer spec says 20. At the end exactly (pad_id=11 here), both keep it."""
    lines = ["hello world"]
    with pytest.raises(RuntimeError):
        _spm(lines, 30, hard_vocab_limit=False, **options)
    for train in (train_unigram, train_unigram_reference):
        with pytest.raises(ValueError, match="lies beyond the .* pieces this corpus makes"):
            train(lines, vocab_size=30, hard_vocab_limit=False, **options)
    _assert_same(lines, 30, hard_vocab_limit=False, pad_id=11)


# Hostile characters: NUL and controls, \r, U+FFFD, private use, astral (emoji, CJK ext. B), combining marks, mixed
# scripts, the user-defined symbol inside the text; with options that empty sentences or change the seeds.
_HOSTILE = st.sampled_from(["a", "b", "ab", " ", "\t", "\r", "\x00", "\x01", "\ufffd", "\ue000", "\U0001F600",
                            "\U00020000", "e\u0301", "\u0301", "中", "ا", "б", "12", "▁", "\u3000", "<u>"])


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(_HOSTILE, max_size=10).map("".join), min_size=1, max_size=12),
       vocab_size=st.integers(4, 30), threads=st.sampled_from([1, 3, 16]),
       options=st.fixed_dictionaries({}, optional={
           "add_dummy_prefix": st.just(False), "remove_extra_whitespaces": st.just(False),
           "split_by_whitespace": st.just(False), "split_digits": st.just(True),
           "normalization_rule_name": st.sampled_from(["identity", "nmt_nfkc_cf"]),
           "user_defined_symbols": st.just(["<u>", "中"]), "seed_sentencepiece_size": st.sampled_from([0, 1, 5]),
           "max_sentencepiece_length": st.sampled_from([1, 3])}))
def test_unigram_hostile_corpora_equal_spm_train_or_are_refused(lines, vocab_size, threads, options):
    """hf_bpe (compiled and reference) equals spm_train on hostile text, or refuses with a ValueError where it
    refuses; never a crash (text all user-defined symbols segfaulted the compiled seed step)."""
    from hf_bpe.training.sentencepiece.trainer import sentences_of

    options = {**options, "num_threads": threads, "hard_vocab_limit": False}
    try:
        theirs = _triples(_spm(lines, vocab_size, **options))
    except RuntimeError:
        theirs = None
    for train in (train_unigram_reference, hf_bpe.train_unigram):
        if theirs is None:
            with pytest.raises(ValueError):
                train(list(sentences_of(lines)), vocab_size=vocab_size, **options)
        else:
            assert _triples(train(list(sentences_of(lines)), vocab_size=vocab_size, **options)) == theirs


def test_compiled_trainer_refuses_to_seed_without_pieces():
    """The compiled trainer called directly with no seed characters and no candidates raises instead of crashing
    in the E-step (the driver refuses such corpora before, naming them)."""
    from hf_bpe.core._unigram import UnigramTrainer

    opts = {"max_sentencepiece_length": 16, "split_by_whitespace": True, "split_by_number": True,
            "split_by_unicode_script": True, "split_digits": False, "allow_whitespace_only_pieces": False}
    with pytest.raises(ValueError, match="no seed pieces"):
        UnigramTrainer(1, 1).seed([], [], {}, opts, 10)


# -- the trainer_spec records the options used, as spm_train's does (issue 33.6) -----------------------------------

# One value other than spm_train's default for every option the trainers accept (a TrainerSpec or NormalizerSpec
# field, or spm_train's own flag), valid for both model types.
_NON_DEFAULT = {
    "character_coverage": 0.999, "max_sentencepiece_length": 8, "max_sentence_length": 2048,
    "split_by_unicode_script": False, "split_by_number": False, "split_by_whitespace": False, "split_digits": True,
    "treat_whitespace_as_suffix": True, "allow_whitespace_only_pieces": True, "byte_fallback": True,
    "add_dummy_prefix": False, "remove_extra_whitespaces": False, "normalization_rule_name": "nfkc",
    "control_symbols": ("<c>", "<d>"), "user_defined_symbols": ("<u>",), "required_chars": "xyz",
    "use_all_vocab": True, "hard_vocab_limit": False, "unk_id": 3, "bos_id": -1, "eos_id": 5, "pad_id": 4,
    "unk_piece": "<UNK>", "bos_piece": "<BOS>", "eos_piece": "<EOS>", "pad_piece": "<PAD>", "unk_surface": "??",
    "input_sentence_size": 100000,
    "shuffle_input_sentence": False, "num_threads": 2, "seed_sentencepiece_size": 20000, "shrinking_factor": 0.9,
    "num_sub_iterations": 3, "train_extremely_large_corpus": True, "mining_sentence_size": 5,
    "training_sentence_size": 6, "self_test_sample_size": 3, "vocabulary_output_piece_score": False,
    "accept_language": ("en", "fr"), "differential_privacy_noise_level": 0.5,
    "differential_privacy_clipping_threshold": 7, "random_seed": 7, "minloglevel": 1,
    "input_format": "text", "escape_whitespaces": True, "auto_character_coverage": False,
    "enable_differential_privacy": False, "model_type": "unigram",
    "sample_seed": 7,  # hf_bpe's own (not an spm_train option): no effect unless a shuffled sample is drawn
}


def test_non_default_table_names_every_accepted_option():
    from hf_bpe.training.sentencepiece.options import known_options

    assert set(_NON_DEFAULT) == set(known_options())


def _proto(data: bytes):
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(data)
    return model


@pytest.mark.shared_data
@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
@pytest.mark.parametrize("option", sorted(_NON_DEFAULT))
def test_trainer_spec_records_each_option_as_spm_train(shared_data, option, model_type):
    # Issue 33.6: trained with num_threads=2, shrinking_factor=0.9, seed_sentencepiece_size=20000, the .model said
    # 16, 0.75 and 1000000. Each spec field, as sentencepiece reads the two files, equals spm_train's.
    lines = corpus_sample(shared_data, "en", 30_000)
    options = {"model_type": model_type, option: _NON_DEFAULT[option]}
    if option == "model_type":
        options = {"model_type": model_type}
    try:
        ours = _spm_train(lines, vocab_size=400, **options)
    except ValueError as exc:  # not accepted at this value (the error says why): nothing to record
        assert option in ("treat_whitespace_as_suffix", "use_all_vocab", "input_sentence_size"), exc
        return
    written = io.BytesIO()
    options.pop("random_seed", None)  # spm_train's own flag, not a spec field (its Python API refuses it)
    options.pop("sample_seed", None)  # hf_bpe's own option, unknown to spm_train
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=written, vocab_size=400,
                                   **{"minloglevel": 2, **{k: list(v) if isinstance(v, tuple) else v
                                                           for k, v in options.items()}})
    theirs, mine = _proto(written.getvalue()), _proto(ours.to_bytes())
    for spec in ("trainer_spec", "normalizer_spec"):
        for field in getattr(theirs, spec).DESCRIPTOR.fields:
            if field.name in ("input", "model_prefix"):  # the files spm_train read and wrote
                continue
            got, want = getattr(getattr(mine, spec), field.name), getattr(getattr(theirs, spec), field.name)
            assert (list(got) if field.is_repeated else got) == (list(want) if field.is_repeated else want), (
                spec, field.name)
    assert [(p.piece, p.type) for p in mine.pieces] == [(p.piece, p.type) for p in theirs.pieces]
