"""train_classic without a recipe: the classic options combined freely; the recipes are particular settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hf_bpe import train_classic
from hf_bpe.errors import InputError
from hf_bpe.training.classic.recipes import train_recipe

COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]


@pytest.mark.shared_data
def test_scheme_options_reproduce_subword_nmt(shared_data: Path) -> None:
    corpus = shared_data / "seeds" / "subword_nmt" / "corpus.en"
    model = train_classic(corpus, num_merges=1000, end_of_word_suffix="</w>", tie_break="largest-pair",
                         min_frequency=2, show_progress=False)
    assert model.merge_pairs == train_recipe(corpus, "subword-nmt", num_merges=1000,
                                             show_progress=False).merge_pairs


def test_scheme_options_reproduce_hf_course() -> None:
    model = train_classic(COURSE, vocab_size=50, alphabet="bytes", pretokenize="gpt2",
                         special_tokens=["<|endoftext|>"], show_progress=False)
    course = train_recipe(COURSE, "hf-course", vocab_size=50, show_progress=False)
    assert model.merge_pairs == course.merge_pairs and model.tokens == course.tokens
    assert [model.tokens[i] for i in model.encode("This is not a token.")] == course.tokenize("This is not a token.")


@pytest.mark.crossval
def test_scheme_equals_tokenizers_bpe_trainer_with_chars(tmp_path: Path) -> None:
    # tokenizers' BpeTrainer over characters (no prefix/suffix: their ids would follow a random HashMap order).
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    texts = ["the cat sat on the mat", "the dog ate the cat's food", "a cat, a dog and a bird"] * 3
    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"],
                                                             show_progress=False))
    model = train_classic(texts, vocab_size=40, tie_break="smallest-ids", unk_token="[UNK]", show_progress=False)
    assert dict(zip(model.tokens, range(len(model.tokens)))) == tokenizer.get_vocab()
    for text in texts + ["the zebra"]:
        assert model.encode(text) == tokenizer.encode(text).ids


def test_scheme_continuing_prefix_and_limited_alphabet() -> None:
    model = train_classic(["hug hug pug pug hugs"], vocab_size=12, continuing_subword_prefix="##", limit_alphabet=4,
                         unk_token="[UNK]", tie_break="smallest-ids", show_progress=False)
    assert model.tokens[:5] == ("[UNK]", "g", "h", "p", "u")  # "s" (count 1) is left out
    assert [model.tokens[i] for i in model.encode("hugs")] == ["hug", "[UNK]"]


def test_scheme_bad_options() -> None:
    with pytest.raises(InputError, match="give unk_token='\\[UNK\\]' to stand for them"):
        train_classic(["abc abd"], num_merges=2, limit_alphabet=2, show_progress=False)
    with pytest.raises(InputError, match="alphabet must be 'chars' or 'bytes', got 'words'"):
        train_classic(["a"], num_merges=1, alphabet="words", show_progress=False)
    with pytest.raises(InputError, match="give exactly one of vocab_size and num_merges"):
        train_classic(["a"], show_progress=False)
    with pytest.raises(InputError, match="limit_alphabet and unk_token belong to alphabet='chars'"):
        train_classic(["a"], num_merges=1, alphabet="bytes", unk_token="[UNK]", show_progress=False)


@pytest.mark.crossval
@pytest.mark.shared_data
def test_scheme_bytes_equal_tokenizers_byte_level_without_initial_alphabet(shared_data: Path) -> None:
    # BpeTrainer with the ByteLevel pre-tokenizer and no initial alphabet: the byte characters seen, sorted.
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    texts = (shared_data / "seeds" / "subword_nmt" / "corpus.en").read_text(encoding="utf-8").splitlines()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1200, show_progress=False))
    model = train_classic(texts, vocab_size=1200, alphabet="bytes", pretokenize="gpt2", tie_break="smallest-ids",
                         show_progress=False)
    assert dict(zip(model.tokens, range(len(model.tokens)))) == tokenizer.get_vocab()
