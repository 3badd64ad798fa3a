"""``extend_sentencepiece``: spm_train's BPE merge loop continued on a new corpus from a SentencePiece BPE base
(Llama 2, hf_bpe-trained), every base piece kept (issue 25, SentencePiece part)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.formats.sentencepiece_model import NORMAL, SentencePieceModel
from hf_bpe.training.sentencepiece.bpe import _Trainer
from hf_bpe.training.sentencepiece.extend import _extend, extend_sentencepiece, segment_reference

_WORDS = st.lists(st.text(alphabet="abcdé中文12 ", min_size=1, max_size=12), min_size=1, max_size=25)
_RARE = st.lists(st.text(alphabet="xyzαβ", min_size=1, max_size=4), max_size=2)  # left out at coverage 0.98
_OPTIONS = st.sampled_from([{}, {"split_digits": True}, {"max_sentencepiece_length": 3},
                            {"allow_whitespace_only_pieces": True, "remove_extra_whitespaces": False},
                            {"split_by_unicode_script": False, "split_by_number": False}])


def _processor(model: SentencePieceModel) -> spm.SentencePieceProcessor:
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model.to_bytes())
    return sp


def _reference(base, corpus, trace=None, **kwargs) -> SentencePieceModel:
    return _extend(base, corpus, vocab_size=kwargs.pop("vocab_size", None), new_tokens=kwargs.pop("new_tokens", None),
                   text_column="text", progress=None, options=kwargs, reference=True, trace=trace)


def _merged(model: SentencePieceModel) -> list[str]:
    """The merged pieces of a model spm_train's layout wrote (NORMAL pieces of more than one character)."""
    return [p.piece for p in model.pieces if p.type == NORMAL and len(p.piece) > 1]


@functools.cache
def _llama2(shared: Path) -> SentencePieceModel:
    return SentencePieceModel.load(shared / "sentencepiece" / "llama2_tokenizer.model")


def _zh_lines(shared: Path) -> tuple[list[str], list[str]]:
    """A training slice of 红楼梦 (about 1 MB) and held-out lines after it."""
    lines = (shared / "corpora" / "zh" / "zh_hongloumeng.txt").read_bytes()[:1_300_000].decode("utf-8", "ignore")
    lines = lines.split("\n")[:-1]
    return lines[: len(lines) * 4 // 5], lines[len(lines) * 4 // 5:]


@functools.cache
def _llama2_zh(shared: Path) -> SentencePieceModel:
    train, _ = _zh_lines(shared)
    return extend_sentencepiece(shared / "sentencepiece" / "llama2_tokenizer.model", train, new_tokens=6000,
                                max_sentence_length=16384)


@pytest.mark.shared_data
def test_extend_sentencepiece_by_zero_gives_back_the_base_byte_for_byte(shared_data, tmp_path):
    path = shared_data / "sentencepiece" / "llama2_tokenizer.model"
    assert extend_sentencepiece(path, ["any text"], new_tokens=0).to_bytes() == path.read_bytes()
    assert extend_sentencepiece(path, ["any text"], vocab_size=32000).to_bytes() == path.read_bytes()
    base = hf_bpe.train_sentencepiece(["low lower lowest", "new newer"] * 3, vocab_size=20)
    hf_bpe.save_sentencepiece(base, tmp_path / "base")
    again = extend_sentencepiece(tmp_path / "base" / "tokenizer.model", ["x"], new_tokens=0)
    hf_bpe.save_sentencepiece(again, tmp_path / "again")
    assert (tmp_path / "again" / "tokenizer.model").read_bytes() == (tmp_path / "base" / "tokenizer.model").read_bytes()


@pytest.mark.shared_data
@pytest.mark.crossval
@pytest.mark.slow  # ~15 s: saving and loading a 38,000-piece tokenizer.json dominates
def test_extend_sentencepiece_llama2_on_chinese_keeps_every_piece_and_loads_everywhere(shared_data, tmp_path):
    base, extended = _llama2(shared_data), _llama2_zh(shared_data)
    # 1. The base's pieces unchanged (id, string, score, type), its specs kept; new pieces after, scores below.
    assert extended.pieces[:32000] == base.pieces and len(extended.pieces) == 38000
    assert extended.trainer == {**base.trainer, "vocab_size": 38000} and extended.normalizer == base.normalizer
    new = extended.pieces[32000:]
    assert [p.score for p in new] == [float(-31741 - j) for j in range(6000)]
    assert all(p.type == NORMAL for p in new) and len({p.piece for p in extended.pieces}) == 38000
    # 2. Characters Llama 2 wrote as bytes became pieces (after the merged ones), merges of Chinese came first.
    chars = [p.piece for p in new if len(p.piece) == 1]
    assert chars and new[-len(chars):] == tuple(p for p in new if len(p.piece) == 1)
    assert "宝玉" in [p.piece for p in new[:50]]
    assert [_processor(base).id_to_piece(i) for i in _processor(base).encode("听")] == [
        "▁", "<0xE5>", "<0x90>", "<0xAC>"] and "听" in chars  # bytes in Llama 2, a piece now
    # 3. sentencepiece, HFSentencePieceTokenizer, AutoTokenizer and PreTrainedTokenizerFast: the same ids.
    _, held_out = _zh_lines(shared_data)
    _assert_loaders_agree(extended, tmp_path, held_out[:300] + _udhr(shared_data)[1][:400])


@pytest.mark.shared_data
@pytest.mark.crossval
@pytest.mark.slow  # ~10 s, as above
def test_extend_sentencepiece_llama2_on_multilingual_text_loads_everywhere(shared_data, tmp_path):
    train, held_out = _udhr(shared_data)
    extended = extend_sentencepiece(shared_data / "sentencepiece" / "llama2_tokenizer.model", train, new_tokens=2000)
    assert extended.pieces[:32000] == _llama2(shared_data).pieces
    before = sum(map(len, _processor(_llama2(shared_data)).encode(held_out)))
    assert sum(map(len, _processor(extended).encode(held_out))) < before * 0.8
    _assert_loaders_agree(extended, tmp_path, held_out)


def _udhr(shared: Path) -> tuple[list[str], list[str]]:
    """UDHR lines in 388 languages: every other line to train on (the first 6,000), the others held out."""
    rows = (shared / "corpora" / "multi" / "udhr2_all_lang_tab_line.tsv").read_text("utf-8").split("\n")
    lines = [row.split("\t", 1)[-1] for row in rows if row]
    return lines[::2][:6000], lines[1::2][:1500]


def _assert_loaders_agree(model: SentencePieceModel, where: Path, lines: list[str]) -> None:
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = hf_bpe.save_sentencepiece(model, where / "extended")
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    lines = lines + ["宝玉听了，忙笑道：“好妹妹。” Hello world", "  a  b  ", "<s>中</s>"]
    expected = sp.encode(lines)
    assert any(i >= 32000 for ids in expected for i in ids)
    tok = hf_bpe.HFSentencePieceTokenizer.from_pretrained(folder)
    assert tok(lines, add_special_tokens=False)["input_ids"] == expected
    # The folder names PreTrainedTokenizerFast: AutoTokenizer gives the fast tokenizer of tokenizer.json.
    for fast in (AutoTokenizer.from_pretrained(folder), PreTrainedTokenizerFast.from_pretrained(folder)):
        assert fast(lines, add_special_tokens=False)["input_ids"] == expected
    assert [sp.decode(ids) for ids in expected[:300]] == lines[:300]


@pytest.mark.shared_data
def test_extend_sentencepiece_text_the_new_pieces_do_not_touch_keeps_its_ids(shared_data):
    extended = _processor(_llama2_zh(shared_data))
    base = _processor(_llama2(shared_data))
    english = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:300_000]
    lines = english.decode("utf-8", "ignore").split("\n")[:-1] + _zh_lines(shared_data)[1][:300]
    untouched = 0
    for line, old, new in zip(lines, base.encode(lines), extended.encode(lines)):
        if all(i < 32000 for i in new):
            assert new == old, line
            untouched += 1
    assert untouched > len(lines) // 2


@pytest.mark.shared_data
def test_extend_sentencepiece_segments_words_as_sentencepiece_encodes_them(shared_data):
    # The reference segmenter (bpe_model.cc in Python) against sentencepiece, on Llama 2 and real multilingual words.
    base = _llama2(shared_data)
    sp = _processor(base)
    scores = {p.piece: p.score for p in base.pieces if p.type == NORMAL}
    text = (shared_data / "corpora" / "multi" / "udhr2_all_lang_tab_line.tsv").read_text("utf-8")[:400_000]
    words = sorted({w for line in text.split("\n") for w in sp.normalize(line).split("\u2581") if w})
    compared = 0
    for word in words:
        ids = sp.encode(word)  # the dummy prefix gives the word its "▁"
        if not any(sp.is_byte(i) or sp.is_unknown(i) for i in ids):
            assert segment_reference("\u2581" + word, scores) == [sp.id_to_piece(i) for i in ids], word
            compared += 1
    assert compared > 5000


@settings(max_examples=80, deadline=None, derandomize=True)
@given(base_words=_WORDS, new_words=st.tuples(_WORDS, _RARE).map(lambda t: t[0] + t[1]), size=st.integers(8, 40),
       added=st.integers(1, 30), trained=_OPTIONS, coverage=st.sampled_from([1.0, 0.98]))
def test_extend_sentencepiece_compiled_equals_reference(base_words, new_words, size, added, trained, coverage):
    """Both paths (sentencepiece's segmentation and the compiled seeded loop; the Python segmenter and loop) give
    the same model; characters left out by the coverage never merge; untouched text keeps its ids."""
    try:
        base = hf_bpe.train_sentencepiece(base_words, vocab_size=size, hard_vocab_limit=False, **trained)
    except ValueError:
        return  # vocab_size below the required characters
    options = {"hard_vocab_limit": False, "character_coverage": coverage}
    try:
        compiled = extend_sentencepiece(base, new_words, new_tokens=added, **options)
    except ValueError as exc:
        assert "characters the base has no piece for" in str(exc) or "no text" in str(exc)
        return
    assert _reference(base, new_words, new_tokens=added, **options) == compiled
    assert compiled.pieces[: len(base.pieces)] == base.pieces
    sp, old = _processor(compiled), _processor(base)
    for text in new_words + base_words:
        new_ids = sp.encode(text)
        if all(i < len(base.pieces) for i in new_ids):
            assert new_ids == old.encode(text)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(words=_WORDS, size=st.integers(10, 30), more=st.integers(1, 20), trained=_OPTIONS)
def test_extend_sentencepiece_against_training_from_scratch(words, size, more, trained):
    """The exact statements. (1) spm_train's loop continued (seeded) from its own training state at V makes the
    pieces training at V' makes after the base's, up to the first piece of count 0 (spm_train then adds pairs that
    occurred once and were merged away everywhere, which a continuation never saw). (2) The extension continues
    from the base's *encoding* instead: where that equals the training state, its pieces are (1)'s."""
    try:
        base = hf_bpe.train_sentencepiece(words, vocab_size=size, **trained)
    except ValueError:
        return
    trace: list = []
    extended = _reference(base, words, trace=trace, new_tokens=more, hard_vocab_limit=False)
    [(counted, encoded, opts)] = trace
    # The training state at V: the from-scratch loop (the same words, in the same order) run to the base's merges.
    trainer = _Trainer(counted, {}, opts)
    assert trainer.run(len(_merged(base))) == _merged(base)
    scratch = trainer.run(more)  # training on to V' (the required characters come after the merges in both)
    positive = sum(1 for n in trainer.chosen_counts[len(_merged(base)):] if n > 0)
    state = [[s.chars for s in row if s is not None] for row in _state(counted, opts, len(_merged(base)))]
    strings = {p.piece for p in base.pieces}
    mergeable = {p.piece for p in base.pieces if p.type == NORMAL}
    seeded = _Trainer(counted, {}, opts, seed=(state, mergeable, strings))
    cont = seeded.run(more)
    assert sum(1 for n in seeded.chosen_counts if n > 0) == positive
    assert cont[:positive] == scratch[:positive]
    new = [p.piece for p in extended.pieces[len(base.pieces):]]
    if state == encoded:
        assert new[:positive] == scratch[:positive]
    # Through the public API: the compiled extension equals the reference one.
    assert extend_sentencepiece(base, words, new_tokens=more, hard_vocab_limit=False) == extended


def _state(counted, opts, merges):
    trainer = _Trainer(counted, {}, opts)
    trainer.run(merges)
    return trainer.symbols


def test_extend_sentencepiece_takes_the_options_a_base_file_records(tmp_path):
    lines = ["tel 12345 and 678 or 12345", "a    b   c", "tel tel 678"] * 3
    base = hf_bpe.train_sentencepiece(lines, vocab_size=30, split_digits=True, allow_whitespace_only_pieces=True,
                                      remove_extra_whitespaces=False, max_sentencepiece_length=4)
    hf_bpe.save_sentencepiece(base, tmp_path / "base")
    more = ["12345 12345 678 telephone    telephone"] * 4
    from_file = extend_sentencepiece(tmp_path / "base" / "tokenizer.model", more, new_tokens=10, hard_vocab_limit=False)
    assert from_file == extend_sentencepiece(base, more, new_tokens=10, hard_vocab_limit=False)
    new = [p.piece for p in from_file.pieces[30:]]
    assert new and all(len(p) <= 4 for p in new) and not any(sum(c.isdigit() for c in p) > 1 for p in new)
    longer = extend_sentencepiece(base, more, new_tokens=10, hard_vocab_limit=False, max_sentencepiece_length=8)
    assert any(len(p.piece) > 4 for p in longer.pieces[30:])


@pytest.mark.shared_data
def test_extend_sentencepiece_against_training_from_scratch_on_english(shared_data):
    lines = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:400_000].decode("utf-8", "ignore")
    lines = lines.split("\n")[:-1]
    base = hf_bpe.train_sentencepiece(lines, vocab_size=1000)
    target = hf_bpe.train_sentencepiece(lines, vocab_size=1500)
    extended = extend_sentencepiece(base, lines, vocab_size=1500)
    assert extended.pieces[:1000] == base.pieces
    new = [p.piece for p in extended.pieces[1000:]]
    # Every extended piece beyond the base's is one the longer training made, in the same order, up to where the
    # base's encoding and its training state part (see the module docstring); here they agree for all of them.
    assert new == _merged(target)[len(_merged(base)):]


def test_extend_sentencepiece_refuses_bad_input_clearly(tmp_path, shared_data):
    base = hf_bpe.train_sentencepiece(["low lower lowest"] * 3, vocab_size=12)
    with pytest.raises(ValueError, match="exactly one of vocab_size"):
        extend_sentencepiece(base, ["x"])
    with pytest.raises(ValueError, match="exactly one of vocab_size"):
        extend_sentencepiece(base, ["x"], vocab_size=20, new_tokens=3)
    with pytest.raises(ValueError, match="below the base's size 12"):
        extend_sentencepiece(base, ["x"], vocab_size=11)
    with pytest.raises(TypeError, match="new_tokens must be an int"):
        extend_sentencepiece(base, ["x"], new_tokens=2.0)
    with pytest.raises(TypeError, match="SentencePieceModel"):
        extend_sentencepiece(42, ["x"], new_tokens=2)
    with pytest.raises(FileNotFoundError, match="nope.model"):
        extend_sentencepiece(tmp_path / "nope.model", ["x"], new_tokens=2)
    with pytest.raises(ValueError, match="byte_fallback=True would change how the base encodes"):
        extend_sentencepiece(base, ["x"], new_tokens=2, byte_fallback=True)
    with pytest.raises(ValueError, match="2 characters the base has no piece for"):
        extend_sentencepiece(base, ["xy"], new_tokens=1)
    unigram = shared_data / "sentencepiece" / "sentencepiece_test_model.model"
    with pytest.raises(ValueError, match="SentencePiece unigram model; only BPE models can be extended"):
        extend_sentencepiece(unigram, ["x"], new_tokens=2)


def _untouched_by(base: SentencePieceModel, extended: SentencePieceModel, text: str) -> bool:
    """The contract's condition on a text, from the base alone: no character of it is a new piece (the base spells
    it in bytes), and no two neighbouring pieces of its base encoding join into a new piece."""
    new = {p.piece for p in extended.pieces[len(base.pieces):]}
    sp = _processor(base)
    symbols: list[str] = []
    pending = b""
    for index in sp.encode(text):
        if sp.is_byte(index):  # a character without a piece, as its UTF-8 bytes: one symbol once complete
            pending += bytes([int(sp.id_to_piece(index)[3:5], 16)])
            try:
                symbols.append(pending.decode("utf-8"))
                pending = b""
            except UnicodeDecodeError:
                continue
        else:
            symbols.append(sp.id_to_piece(index))
    return not any(s in new for s in symbols) and not any(a + b in new for a, b in zip(symbols, symbols[1:]))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(base_words=_WORDS, new_words=st.lists(st.text(alphabet="abcdé中文12 \tçx", min_size=1, max_size=12),
                                             min_size=1, max_size=25),
       probes=st.lists(st.text(alphabet="abcdé中文12 \tçxy", max_size=16), max_size=10), added=st.integers(1, 30))
def test_extend_sentencepiece_text_encodes_as_before_exactly_when_no_new_piece_applies(base_words, new_words, probes,
                                                                                     added):
    # Issue 33.11: extending Llama 2 changed English lines with tabs (a tab, <0x09> before, became a new piece);
    # "untouched text encodes as before" stated exactly (docs/guides/extending.md): where every base piece scores
    # above every new one (every model train_sentencepiece writes), a text encodes to the same ids if and only if
    # no character of it is a new piece and no two neighbouring pieces of its base encoding join into a new piece.
    try:
        base = hf_bpe.train_sentencepiece(base_words, vocab_size=300, byte_fallback=True, hard_vocab_limit=False,
                                          character_coverage=1.0)
        extended = extend_sentencepiece(base, new_words, new_tokens=added, hard_vocab_limit=False,
                                        character_coverage=1.0)
    except ValueError:
        return  # too few pieces for the characters, or nothing to learn
    low = min(p.score for p in base.pieces if p.type == NORMAL)
    assert all(p.score < low for p in extended.pieces[len(base.pieces):])  # the premise
    sp, old = _processor(extended), _processor(base)
    for text in base_words + new_words + probes:
        assert (sp.encode(text) == old.encode(text)) == _untouched_by(base, extended, text), text
