"""hf_bpe.model.unigram: SentencePiece's unigram encoder, id for id and score for score against ``sentencepiece``.

Viterbi and n-best are compared exactly (ids, pieces, float32 n-best scores) on hand-made models full of ties
(hypothesis), on models ``sentencepiece`` trains with varied options, and on the shared test models over real text.

Sampling is compared in distribution: for short texts every segmentation of the lattice is enumerated by brute
force, its exact probability is ``exp(alpha * score) / Z``, and the counts of N seeded draws (ours, and
``sentencepiece``'s own sampler with a fixed seed) must pass a chi-square goodness-of-fit test at p = 1e-9. The
seeds are fixed, so each test either always passes or always fails: no flakiness, and a sampler drawing from a
different distribution (e.g. ``alpha`` ignored, a path weighted twice) fails it by a wide margin.
"""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.formats.sentencepiece_model import (CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, Piece,
                                                SentencePieceModel, _fields)
from hf_bpe.model.unigram import UnigramModel
from helpers import chi2_isf

pytestmark = pytest.mark.crossval

IDENTITY = {"name": "identity", "precompiled_charsmap": b"", "add_dummy_prefix": False,
            "remove_extra_whitespaces": False, "escape_whitespaces": False}
UNIGRAM = {**SentencePieceModel((Piece("<unk>", 0.0, UNKNOWN),)).trainer, "model_type": 1, "byte_fallback": False}


def _model(pieces: list[Piece], **normalizer: object) -> SentencePieceModel:
    return SentencePieceModel(tuple([Piece("<unk>", 0.0, UNKNOWN), Piece("<s>", 0.0, CONTROL), *pieces]),
                              trainer=dict(UNIGRAM), normalizer={**IDENTITY, **normalizer})


def _processor(model: SentencePieceModel) -> spm.SentencePieceProcessor:
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model.to_bytes())
    return sp


def _sp_nbest(sp: spm.SentencePieceProcessor, text: str, n: int) -> list[tuple[list[int], float]]:
    """sentencepiece's n-best (ids, float32 score), read from its serialized NBestSentencePieceText."""
    out = []
    for _, _, nbest in _fields(sp.nbest_encode(text, nbest_size=n, out_type="serialized_proto")):
        ids, score = [], 0.0
        for number, _, value in _fields(nbest):
            if number == 2:  # SentencePieceText.pieces: id is field 2
                ids.append(next(v for f, _, v in _fields(value) if f == 2))
            elif number == 3:
                score = struct.unpack("<f", value)[0]
        out.append((ids, score))
    return out


# -- hand-made models: ties everywhere ----------------------------------------------------------------------------

_ALPHABET = "ab▁cé"
_piece_text = st.text(alphabet=_ALPHABET, min_size=1, max_size=3)
_models = st.lists(st.tuples(_piece_text, st.sampled_from([-0.1, -1.0, -1.5, -2.0, -3.0]),
                             st.sampled_from([NORMAL] * 4 + [USER_DEFINED, UNUSED])),
                   min_size=1, max_size=12, unique_by=lambda t: t[0])


@settings(max_examples=150)
@given(_models, st.lists(st.text(alphabet=_ALPHABET + "x😀", min_size=1, max_size=10), min_size=1, max_size=8))
def test_viterbi_and_nbest_equal_sentencepiece_on_tied_models(pieces, texts):
    pieces = [Piece(text, score, kind) for text, score, kind in pieces] + [Piece("zz", -7.0, NORMAL)]
    model = _model(pieces)
    sp, ours = _processor(model), UnigramModel.from_sentencepiece(model)
    for text in texts:
        assert ours.encode(text) == sp.encode(text), text
        assert ours.pieces_of(ours.viterbi(ours.normalize(text))) == sp.encode(text, out_type=str)
        assert ours.viterbi(text) == ours.viterbi_reference(text)  # the compiled core and its spec
        for n in (2, 5):
            assert ours.nbest(text, nbest_size=n) == _sp_nbest(sp, text, n), (text, n)


def test_nbest_through_agenda_shrinking():
    """A long run of one character: paths tie everywhere, the A* agenda passes 10,000 entries and is cut to 512
    (sentencepiece logs "Too big agenda size"); the order among equal priorities is libstdc++'s heap order."""
    model = _model([Piece("a", -1.0, NORMAL), Piece("aa", -2.0, NORMAL), Piece("aaa", -3.0, NORMAL),
                    Piece("b", -1.5, NORMAL), Piece("ab", -2.5, NORMAL)])
    text = "a" * 1500
    assert UnigramModel.from_sentencepiece(model).nbest(text, nbest_size=100) == _sp_nbest(_processor(model), text, 100)


@pytest.mark.parametrize("symbol", ["y", "ab", "▁", "éé", "abcdef"])
def test_user_defined_score_is_the_measured_rule(symbol):
    """sentencepiece 0.2.3 scores a user-defined piece 0.1 * length - 0.1 (bytes in Viterbi, characters in the
    lattice), not length * max_score - 0.1 as its source reads: the piece 'symbol c' wins against symbol + 'c'
    exactly when its score beats that sum."""
    for mode, length in (("viterbi", len(symbol.encode())), ("nbest", len(symbol))):
        bonus = struct.unpack("<f", struct.pack("<f", 0.1 * length - 0.1))[0]
        for delta in (-1e-4, 1e-4):
            pieces = [Piece(symbol + "c", -3.0 + bonus + delta, NORMAL), Piece("c", -3.0, NORMAL),
                      Piece(symbol, -0.1, USER_DEFINED), Piece("q", 5.0, NORMAL)]
            model = _model(pieces)
            sp, ours = _processor(model), UnigramModel.from_sentencepiece(model)
            text = symbol + "c"
            got = sp.encode(text) if mode == "viterbi" else _sp_nbest(sp, text, 2)[0][0]
            assert got == ([2] if delta > 0 else [4, 3]), (mode, delta)
            mine = ours.encode(text) if mode == "viterbi" else ours.nbest(text, nbest_size=2)[0][0]
            assert mine == got


def test_unknown_runs_merge_and_byte_fallback():
    pieces = [Piece("a", -1.0, NORMAL), Piece("▁", -2.0, NORMAL)]
    model = _model(pieces)
    assert UnigramModel.from_sentencepiece(model).encode("aé😀xa") == _processor(model).encode("aé😀xa") == [2, 0, 2]
    byte_pieces = [Piece(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    model = SentencePieceModel(model.pieces + tuple(byte_pieces), trainer={**UNIGRAM, "byte_fallback": True},
                               normalizer=model.normalizer)
    ours, sp = UnigramModel.from_sentencepiece(model), _processor(model)
    assert ours.encode("aé😀xa") == sp.encode("aé😀xa")
    assert ours.pieces_of(ours.viterbi("aéa")) == sp.encode("aéa", out_type=str) == ["a", "<0xC3>", "<0xA9>", "a"]


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one UNKNOWN"):
        UnigramModel([Piece("a", -1.0, NORMAL)])
    model = UnigramModel.from_sentencepiece(_model([Piece("a", -1.0, NORMAL)]))
    with pytest.raises(TypeError, match="text must be a str"):
        model.encode(b"a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most 512"):
        model.encode("a", sample=True, nbest_size=513)
    with pytest.raises(ValueError, match="at most 512"):
        model.nbest("a", nbest_size=513)
    with pytest.raises(TypeError, match="nbest_size must be an int"):
        model.nbest("a", nbest_size=2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="encodes unigram"):
        UnigramModel.from_sentencepiece(SentencePieceModel(_model([]).pieces, trainer={"model_type": 2}))


# -- models sentencepiece trains ----------------------------------------------------------------------------------

def _corpus() -> list[str]:
    rnd = random.Random(7)
    syllables = ["ka", "to", "ri", "ne", "sa", "mo", "lu", "pe", "ché", "ñu", "東京", "語", "über", "ß"]
    words = ["".join(rnd.choice(syllables) for _ in range(rnd.randint(1, 4))) for _ in range(300)]
    lines = []
    for _ in range(1500):
        line = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 12)))
        if rnd.random() < 0.2:
            line += f" {rnd.randint(0, 99999)} <sep> ＡＢ"
        lines.append(line)
    return lines


_PROBES = ["", "   ", "katori  nesa\tmolu ", "東京語 ché über 2024", "unseen 😀 Ω and ＡＢＣ ｶﾀｶﾅ", "<sep><sep> <s> x",
           "ñuñuñu 12345 ß"]


@pytest.mark.parametrize("options", [
    {},
    {"byte_fallback": True},
    {"user_defined_symbols": ["<sep>", "ka"], "control_symbols": ["<ctl>"]},
    {"split_digits": True, "normalization_rule_name": "nfkc"},
    {"normalization_rule_name": "identity", "add_dummy_prefix": False},
    {"remove_extra_whitespaces": False, "byte_fallback": True, "character_coverage": 0.98},
    {"normalization_rule_name": "nmt_nfkc_cf", "unk_id": 3, "bos_id": 0, "eos_id": 1, "pad_id": 2},
])
def test_equal_sentencepiece_on_trained_models(tmp_path: Path, options):
    lines = _corpus()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "m"),
                                   model_type="unigram", vocab_size=300, hard_vocab_limit=False, minloglevel=3,
                                   **options)
    path = tmp_path / "m.model"
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ours = UnigramModel.from_sentencepiece(SentencePieceModel.load(path))
    for text in _PROBES + lines[:300]:
        assert ours.encode(text) == sp.encode(text), text
        normalized = ours.normalize(text)
        assert ours.viterbi(normalized) == ours.viterbi_reference(normalized)
    for text in _PROBES[2:] + lines[:20]:
        assert ours.nbest(text, nbest_size=8) == _sp_nbest(sp, text, 8), text


@pytest.mark.shared_data
@pytest.mark.parametrize("name, corpus, limit", [
    ("sentencepiece_test_model.model", "multi/udhr2_all_lang_tab_line.tsv", 4000),
    ("sentencepiece_test_ja_model.model", "multi/ja_wagahaiwa_nekodearu.txt", 3000),
])
def test_equal_sentencepiece_on_the_test_models(shared_data, name, corpus, limit):
    path = shared_data / "sentencepiece" / name
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ours = UnigramModel.from_sentencepiece(SentencePieceModel.load(path))
    lines = (shared_data / "corpora" / corpus).read_text(encoding="utf-8").splitlines()[:limit]
    for line in lines:
        assert ours.encode(line) == sp.encode(line), line
    for line in lines[::10]:
        assert ours.viterbi(ours.normalize(line)) == ours.viterbi_reference(ours.normalize(line))
    for line in lines[:150]:
        assert ours.nbest(line[:80], nbest_size=6) == _sp_nbest(sp, line[:80], 6), line


# -- sampling: the distribution sentencepiece defines ---------------------------------------------------------------

def _all_paths(ours: UnigramModel, text: str) -> dict[tuple[int, ...], float]:
    """Every lattice path of ``text`` (brute force, independent of the module's lattice) -> its score."""
    pieces = ours.pieces
    out: dict[tuple[int, ...], float] = {}

    def walk(start: int, ids: tuple[int, ...], score: float) -> None:
        if start == len(text):
            out[ids] = score
            return
        single = False
        for end in range(start + 1, len(text) + 1):
            piece = text[start:end]
            index = next((i for i, p in enumerate(pieces) if p.piece == piece and p.type in (NORMAL, USER_DEFINED)),
                         None)
            if index is not None:
                value = 0.1 * (end - start) - 0.1 if pieces[index].type == USER_DEFINED else pieces[index].score
                walk(end, ids + (index,), score + value)
                single = single or end == start + 1
        if not single:
            walk(start + 1, ids + (ours.unk_id,), score + ours.unk_score)

    walk(0, (), 0.0)
    return out


def _chi_square_ok(counts: dict, probabilities: dict, draws: int) -> None:
    assert set(counts) <= set(probabilities), set(counts) - set(probabilities)
    statistic = sum((counts.get(k, 0) - draws * p) ** 2 / (draws * p) for k, p in probabilities.items())
    bound = chi2_isf(1e-9, len(probabilities) - 1)
    assert statistic < bound, (statistic, bound)


_SAMPLED = [Piece("a", -1.0, NORMAL), Piece("b", -1.2, NORMAL), Piece("ab", -1.5, NORMAL), Piece("ba", -2.5, NORMAL),
            Piece("aba", -2.0, NORMAL), Piece("bab", -3.5, USER_DEFINED), Piece("abab", -4.5, NORMAL)]


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_sampling_draws_from_the_lattice_distribution(alpha):
    """nbest_size < 0: P(path) = exp(alpha * score) / Z over every path; ours and sentencepiece's own sampler."""
    model = _model(_SAMPLED)
    ours, sp = UnigramModel.from_sentencepiece(model), _processor(model)
    text, draws = "ababxab", 6000
    paths = {ids: alpha * score for ids, score in _all_paths(ours, text).items()}
    top = max(paths.values())
    z = sum(math.exp(s - top) for s in paths.values())
    exact = {tuple(ours.ids_of(zip(" " * len(ids), ids))): 0.0 for ids in paths}
    for ids, s in paths.items():
        exact[tuple(ours.ids_of(zip(" " * len(ids), ids)))] += math.exp(s - top) / z
    rng = random.Random(20240611)
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(draws):
        key = tuple(ours.ids_of(ours.sample_normalized(text, alpha=alpha, nbest_size=-1, rng=rng)))
        counts[key] = counts.get(key, 0) + 1
    _chi_square_ok(counts, exact, draws)
    spm.set_random_generator_seed(31337)
    theirs: dict[tuple[int, ...], int] = {}
    for _ in range(draws):
        key = tuple(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=-1))
        theirs[key] = theirs.get(key, 0) + 1
    _chi_square_ok(theirs, exact, draws)


def test_sampling_among_the_nbest():
    """nbest_size > 1: one of the n best with probability exp(alpha * score) / Z over them."""
    model = _model(_SAMPLED)
    ours, sp = UnigramModel.from_sentencepiece(model), _processor(model)
    text, alpha, draws = "abab", 0.5, 4000
    nbest = ours.nbest(text, nbest_size=4)
    assert nbest == _sp_nbest(sp, text, 4)
    z = sum(math.exp(alpha * s) for _, s in nbest)
    exact = {tuple(ids): math.exp(alpha * s) / z for ids, s in nbest}
    counts: dict[tuple[int, ...], int] = {}
    for seed in range(draws):
        key = tuple(ours.encode(text, sample=True, alpha=alpha, nbest_size=4, seed=seed))
        counts[key] = counts.get(key, 0) + 1
    _chi_square_ok(counts, exact, draws)


def test_sampling_is_deterministic_per_seed_and_viterbi_at_nbest_one():
    model = UnigramModel.from_sentencepiece(_model(_SAMPLED))
    text = "abababbaab"
    draws = [model.encode(text, sample=True, alpha=0.1, seed=s) for s in range(30)]
    assert draws == [model.encode(text, sample=True, alpha=0.1, seed=s) for s in range(30)]
    assert len({tuple(d) for d in draws}) > 1
    for n in (0, 1):
        assert model.encode(text, sample=True, nbest_size=n, seed=3) == model.encode(text)
    assert model.encode("", sample=True, seed=1) == [] and model.nbest("", nbest_size=3) == [([], 0.0)]


@pytest.fixture(scope="module")
def byte_fallback_pair(tmp_path_factory: pytest.TempPathFactory):
    where = tmp_path_factory.mktemp("unigram_any_text")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_corpus()), model_prefix=str(where / "m"),
                                   model_type="unigram", vocab_size=300, hard_vocab_limit=False, byte_fallback=True,
                                   remove_extra_whitespaces=False, minloglevel=3)
    path = where / "m.model"
    return spm.SentencePieceProcessor(model_file=str(path)), UnigramModel.from_sentencepiece(SentencePieceModel.load(path))


@settings(max_examples=300, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")) | st.sampled_from(_PROBES))
def test_equal_sentencepiece_on_any_text(byte_fallback_pair, text):
    sp, ours = byte_fallback_pair
    assert ours.encode(text) == sp.encode(text)
    normalized = ours.normalize(text)
    assert ours.viterbi(normalized) == ours.viterbi_reference(normalized)


# -- decode: SentencePieceProcessor.decode, text for text --------------------------------------------------------


@pytest.fixture(scope="module")
def decode_models(tmp_path_factory: pytest.TempPathFactory):
    """Models sentencepiece trains, one per normalizer/fallback setting that changes decoding, with its processor."""
    where = tmp_path_factory.mktemp("unigram_decode")
    out = []
    for index, options in enumerate([
            {"byte_fallback": True},
            {"byte_fallback": True, "add_dummy_prefix": False},
            {"remove_extra_whitespaces": False},
            {"add_dummy_prefix": False, "remove_extra_whitespaces": False, "user_defined_symbols": ["<sep>", "▁x"]},
            {"unk_surface": "<?>", "control_symbols": ["<cls>"]}]):
        spm.SentencePieceTrainer.train(sentence_iterator=iter(_corpus()), model_prefix=str(where / f"m{index}"),
                                       model_type="unigram", vocab_size=300, hard_vocab_limit=False, minloglevel=3,
                                       **options)
        path = where / f"m{index}.model"
        out.append((spm.SentencePieceProcessor(model_file=str(path)), UnigramModel.load(path)))
    return out


@settings(max_examples=300, derandomize=True, deadline=None)
@given(which=st.integers(0, 4), ids=st.lists(st.integers(0, 10**6), max_size=24),
       text=st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30))
def test_decode_equals_sentencepiece_on_any_ids(decode_models, which, ids, text):
    # Any ids of the model (controls, <unk>, byte pieces in any order: invalid UTF-8, pieces with and without a
    # leading ▁ first), and the ids of any text: sentencepiece's own decode, text for text.
    sp, ours = decode_models[which]
    ids = [i % len(ours.pieces) for i in ids]
    assert ours.decode(ids) == sp.decode(ids)
    encoded = sp.encode(text)
    assert ours.decode(encoded) == sp.decode(encoded)


def test_decode_equals_sentencepiece_on_real_text_and_loads_folders(shared_data: Path, tmp_path: Path) -> None:
    import hf_bpe

    lines = (shared_data / "corpora" / "en" / "english_combined.txt").read_text(encoding="utf-8").splitlines()
    model = hf_bpe.train_unigram(lines[:3000], vocab_size=1000, show_progress=False)
    folder = hf_bpe.save_sentencepiece(model, tmp_path / "uni")
    ours = UnigramModel.load(folder)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    for line in lines[3000:3400]:
        ids = sp.encode(line)
        assert ours.encode(line) == ids and ours.decode(ids) == sp.decode(ids)
    for name in ("sentencepiece_test_model.model", "sentencepiece_test_ja_model.model"):
        path = shared_data / "sentencepiece" / name
        if SentencePieceModel.load(path).model_type != "unigram":
            continue
        theirs, ours = spm.SentencePieceProcessor(model_file=str(path)), UnigramModel.load(path)
        for ids in ([], list(range(min(400, len(ours.pieces)))), [0, 1, 2] * 5):
            assert ours.decode(ids) == theirs.decode(ids)


def test_decode_refuses_bad_ids_and_missing_files(tmp_path: Path) -> None:
    model = UnigramModel([Piece("<unk>", 0.0, UNKNOWN), Piece("▁a", -1.0, NORMAL)])
    assert model.decode([1, 0, 1]) == "a ⁇  a"
    with pytest.raises(ValueError, match=r"id 2 is out of range; this model's ids are 0..1"):
        model.decode([2])
    with pytest.raises(TypeError, match="ids must be ints, got str"):
        model.decode(["1"])
    with pytest.raises(FileNotFoundError, match="is not a file"):
        UnigramModel.load(tmp_path)  # a folder without tokenizer.model


def test_decode_refuses_a_model_with_a_denormalizer_spec(decode_models, tmp_path: Path) -> None:
    # ModelProto field 5 (sentencepiece applies it after decoding): refused rather than ignored.
    sp, ours = decode_models[0]
    data = sp.serialized_model_proto() + b"\x2a\x0a\x0a\x08identity"  # denormalizer_spec { name: "identity" }
    path = tmp_path / "denormalized.model"
    path.write_bytes(data)
    loaded = UnigramModel.load(path)
    assert loaded.encode("hello") == ours.encode("hello")
    with pytest.raises(ValueError, match="denormalizer spec"):
        loaded.decode([1, 2])
