"""The training API: one entry point per algorithm, one return type each; the old spellings warn and give the same
model (issue 34.8)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.errors import InputError
from hf_bpe.formats.sentencepiece_model import SentencePieceModel

TEXTS = ["low lower lowest newer newest wider widest"] * 4 + ["hug pug pun bun hugs"] * 3


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_train_api_each_entry_point_has_one_return_type(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the new calls never warn
        for source in (TEXTS, [corpus]):
            assert type(hf_bpe.train(source, vocab_size=270, show_progress=False)) is hf_bpe.BPEModel
            assert type(hf_bpe.train_classic(source, recipe="subword-nmt", num_merges=5,
                                             show_progress=False)) is hf_bpe.ClassicModel
            assert type(hf_bpe.train_classic(source, num_merges=5, end_of_word_suffix="</w>",
                                             show_progress=False)) is hf_bpe.ClassicModel
            assert hf_bpe.train_sentencepiece(source, vocab_size=20).model_type == "bpe"
            assert hf_bpe.train_unigram(source, vocab_size=20).model_type == "unigram"
        assert type(hf_bpe.train_unigram(TEXTS, vocab_size=20)) is SentencePieceModel


def test_train_api_deprecated_recipe_warns_and_gives_the_same_model(tmp_path: Path) -> None:
    new = hf_bpe.train_classic(TEXTS, recipe="wordpiece", vocab_size=60, lowercase=True, show_progress=False)
    with pytest.warns(DeprecationWarning, match=r"hf_bpe.train_classic\(corpus, recipe='wordpiece'"):
        old = hf_bpe.train(TEXTS, recipe="wordpiece", vocab_size=60, lowercase=True, show_progress=False)
    assert type(old) is hf_bpe.ClassicModel
    assert _files(old.save(tmp_path / "old")) == _files(new.save(tmp_path / "new"))


def test_train_api_deprecated_train_scheme_warns_and_gives_the_same_model(tmp_path: Path) -> None:
    options = {"num_merges": 8, "alphabet": "bytes", "pretokenize": "gpt2", "tie_break": "smallest-ids"}
    new = hf_bpe.train_classic(TEXTS, show_progress=False, **options)
    with pytest.warns(DeprecationWarning, match=r"call hf_bpe.train_classic\(corpus, ...\)"):
        old = hf_bpe.train_scheme(TEXTS, show_progress=False, **options)
    assert _files(old.save(tmp_path / "old")) == _files(new.save(tmp_path / "new"))


def test_train_api_deprecated_sentencepiece_unigram_warns_and_gives_the_same_model() -> None:
    new = hf_bpe.train_unigram(TEXTS, vocab_size=20, num_threads=2)
    with pytest.warns(DeprecationWarning, match=r"call hf_bpe.train_unigram\(corpus, ...\)"):
        old = hf_bpe.train_sentencepiece(TEXTS, vocab_size=20, model_type="unigram", num_threads=2)
    assert old.to_bytes() == new.to_bytes()


def test_train_api_refuses_what_an_entry_point_does_not_train() -> None:
    with pytest.raises(ValueError, match="got model_type='bpe'; for SentencePiece BPE call hf_bpe.train_sentencepiece"):
        hf_bpe.train_unigram(TEXTS, vocab_size=20, model_type="bpe")
    with pytest.raises(InputError, match="recipe 'subword-nmt' fixes its own options; drop alphabet='bytes'"):
        hf_bpe.train_classic(TEXTS, recipe="subword-nmt", num_merges=5, alphabet="bytes", show_progress=False)
    with pytest.raises(InputError, match="lowercase=True belongs to the 'wordpiece' recipe"):
        hf_bpe.train_classic(TEXTS, num_merges=5, lowercase=True, show_progress=False)
    with pytest.raises(InputError, match="drop pattern='gpt4'"):  # the deprecated spelling checks before warning
        hf_bpe.train(TEXTS, recipe="subword-nmt", num_merges=5, pattern="gpt4", show_progress=False)


def test_train_api_cli_calls_the_new_entry_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert main(["train", str(corpus), "--recipe", "subword-nmt", "--num-merges", "5", "--quiet",
                     "--out", str(tmp_path / "recipe")]) == 0
        assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--spm", "model_type=unigram",
                     "--spm", "num_threads=2", "--vocab-size", "20", "--out", str(tmp_path / "uni")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert hf_bpe.ClassicModel.load(tmp_path / "recipe").merges == hf_bpe.train_classic(
        [corpus], recipe="subword-nmt", num_merges=5, show_progress=False).merges
    assert (tmp_path / "uni" / "tokenizer.model").read_bytes() == hf_bpe.train_unigram(
        [corpus], vocab_size=20, num_threads=2).to_bytes()
    assert main(["train", str(corpus), "--recipe", "subword-nmt", "--num-merges", "5", "--pattern", "gpt4",
                 "--out", str(tmp_path / "bad")]) == 2
    assert "drop pattern='gpt4'" in capsys.readouterr().err
