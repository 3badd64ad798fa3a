"""The wordpiece recipe equals tokenizers' WordPieceTrainer (BERT setup), and transformers' BertTokenizer loads it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import hf_bpe
from hf_bpe.errors import InputError
from hf_bpe.model.classic import ClassicModel
from hf_bpe.training.classic.wordpiece import BERT_SPECIAL_TOKENS, bert_word_counts, train_wordpiece

pytestmark = pytest.mark.crossval


def tokenizers_vocab(texts: list[str], vocab_size: int, tmp_path: Path, *, lowercase: bool = False) -> list[str]:
    """Train tokenizers' WordPieceTrainer in BERT's setup; return its vocab.txt lines."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(BERT_SPECIAL_TOKENS),
                                        show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (path,) = tokenizer.model.save(str(tmp_path))
    return Path(path).read_text(encoding="utf-8").splitlines()


def same_as_run(texts: list[str], reference: list[str], vocab_size: int, *, lowercase: bool = False) -> list[str]:
    """Our vocabulary, with the ##c tokens numbered as that tokenizers run numbered them (its HashMap order)."""
    order = [t for t in reference if t.startswith("##") and len(t) == 3]
    tokens, _ = train_wordpiece(bert_word_counts(texts, lowercase=lowercase), vocab_size=vocab_size,
                                continuing_order=order)
    return tokens


def tokenizers_word_counts(texts: list[str], *, lowercase: bool) -> dict[str, int]:
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    pretokenizer = pre_tokenizers.BertPreTokenizer()
    counts: dict[str, int] = {}
    for text in texts:
        for word, _ in pretokenizer.pre_tokenize_str(normalizer.normalize_str(text)):
            counts[word] = counts.get(word, 0) + 1
    return counts


@pytest.mark.shared_data
@pytest.mark.parametrize("lowercase", [False, True])
def test_wordpiece_word_counts_equal_bert_pipeline(shared_data: Path, lowercase: bool) -> None:
    # The UDHR in 388 languages (scripts, marks, punctuation, CJK), a Chinese novel's start, and control characters.
    corpora = shared_data / "corpora"
    texts = (corpora / "multi" / "udhr2_all_lang_tab_line.tsv").read_text(encoding="utf-8").split("\n")
    texts += (corpora / "zh" / "zh_hongloumeng.txt").read_text(encoding="utf-8")[:200_000].split("\n")
    texts += ["a\x00b\ufffdc\u200bd\te\u3000f\x85g\u037eh İstanbul Ångström naïve ½ ß \U0001F600!"]
    assert bert_word_counts(texts, lowercase=lowercase) == tokenizers_word_counts(texts, lowercase=lowercase)


@pytest.mark.parametrize("seed", range(12))
def test_wordpiece_equals_tokenizers_on_generated_ties(seed: int, tmp_path: Path) -> None:
    # Few letters and short words: most merges are ties, decided by the smallest ids.
    rng = random.Random(seed)
    letters = "abcdé" if seed % 2 else "abcd"
    texts = [" ".join("".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
                      for _ in range(rng.randint(1, 8))) + rng.choice(["", ".", ", ok!"]) for _ in range(30)]
    size = rng.randint(20, 80)
    reference = tokenizers_vocab(texts, size, tmp_path)
    assert same_as_run(texts, reference, size) == reference


@pytest.mark.shared_data
def test_wordpiece_vocab_txt_equals_tokenizers_and_bert_ids(shared_data: Path, tmp_path: Path) -> None:
    lines = (shared_data / "seeds" / "subword_nmt" / "corpus.en").read_text(encoding="utf-8").splitlines()
    for lowercase in (False, True):
        texts = [line.title() for line in lines]  # cased text, so that lowercase matters
        reference = tokenizers_vocab(texts, 1500, tmp_path / str(lowercase), lowercase=lowercase)
        assert same_as_run(texts, reference, 1500, lowercase=lowercase) == reference
        # The recipe's own (deterministic) vocab.txt loads in transformers and encodes every line the same.
        model = hf_bpe.train_classic(texts, recipe="wordpiece", vocab_size=1500, lowercase=lowercase, show_progress=False)
        out = model.save(tmp_path / f"m{lowercase}")
        assert ClassicModel.load(out) == model
        from transformers import BertTokenizer

        bert = BertTokenizer(vocab=str(out / "vocab.txt"), do_lower_case=lowercase)
        for text in texts + ["Unseen: Ωmega ☃ words!"]:
            assert bert(text, add_special_tokens=False)["input_ids"] == model.encode(text)


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.shared_data
def test_wordpiece_english_combined_byte_identical(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "corpora" / "en" / "english_combined.txt"
    texts = path.read_text(encoding="utf-8").split("\n")
    reference = tokenizers_vocab(texts, 30000, tmp_path)
    assert same_as_run(texts, reference, 30000) == reference


def test_wordpiece_needs_unk(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"needs '\[UNK\]' among the special tokens"):
        hf_bpe.train_classic(["a b"], recipe="wordpiece", vocab_size=30, special_tokens=["[PAD]"], show_progress=False)
    with pytest.raises(InputError, match="needs a size"):
        hf_bpe.train_classic(["a b"], recipe="wordpiece", show_progress=False)
