"""The wordpiece-score recipe is the HF course's WordPiece chapter (6.6): its published results, its loop on real text,
vocab.txt in BertTokenizer / BertTokenizerFast, and where the course's code, BERT and real-wordpiece part from it."""

from __future__ import annotations

from pathlib import Path

import pytest

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.core._reference_classic import replace_pair
from hf_bpe.errors import InputError
from hf_bpe.model.classic import ClassicModel
from hf_bpe.training.classic.recipe_table import BERT_SPECIAL_TOKENS
from hf_bpe.training.classic.wordpiece_score import bert_pretokenized_counts, course_alphabet, train_wordpiece_score

COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]
# Published in chapters/en/chapter6/6.mdx of huggingface/course, verbatim.
COURSE_WORD_FREQS = {
    'This': 3, 'is': 2, 'the': 1, 'Hugging': 1, 'Face': 1, 'Course': 1, '.': 4, 'chapter': 1, 'about': 1,
    'tokenization': 1, 'section': 1, 'shows': 1, 'several': 1, 'tokenizer': 1, 'algorithms': 1, 'Hopefully': 1,
    ',': 1, 'you': 1, 'will': 1, 'be': 1, 'able': 1, 'to': 1, 'understand': 1, 'how': 1, 'they': 1, 'are': 1,
    'trained': 1, 'and': 1, 'generate': 1, 'tokens': 1}
COURSE_ALPHABET = [
    '##a', '##b', '##c', '##d', '##e', '##f', '##g', '##h', '##i', '##k', '##l', '##m', '##n', '##o', '##p', '##r',
    '##s', '##t', '##u', '##v', '##w', '##y', '##z', ',', '.', 'C', 'F', 'H', 'T', 'a', 'b', 'c', 'g', 'h', 'i', 's',
    't', 'u', 'w', 'y']
COURSE_SCORES = [(('T', '##h'), 0.125), (('##h', '##i'), 0.03409090909090909), (('##i', '##s'), 0.02727272727272727),
                 (('i', '##s'), 0.1), (('t', '##h'), 0.03571428571428571), (('##h', '##e'), 0.011904761904761904)]
COURSE_VOCAB = [
    '[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '##a', '##b', '##c', '##d', '##e', '##f', '##g', '##h', '##i', '##k',
    '##l', '##m', '##n', '##o', '##p', '##r', '##s', '##t', '##u', '##v', '##w', '##y', '##z', ',', '.', 'C', 'F', 'H',
    'T', 'a', 'b', 'c', 'g', 'h', 'i', 's', 't', 'u', 'w', 'y', 'ab', '##fu', 'Fa', 'Fac', '##ct', '##ful', '##full',
    '##fully', 'Th', 'ch', '##hm', 'cha', 'chap', 'chapt', '##thm', 'Hu', 'Hug', 'Hugg', 'sh', 'th', 'is', '##thms',
    '##za', '##zat', '##ut']
COURSE_TOKENIZED = ['Th', '##i', '##s', 'is', 'th', '##e', 'Hugg', '##i', '##n', '##g', 'Fac', '##e', 'c', '##o', '##u',
                    '##r', '##s', '##e', '[UNK]']
TOY = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


# -- the course's loop, written out (the oracle): recount everything, Python floats, first of equal scores -----------

def course_scores(splits: dict[str, list[str]], word_freqs: dict[str, int]) -> dict[tuple[str, str], float]:
    symbol_freqs: dict[str, int] = {}
    pair_freqs: dict[tuple[str, str], int] = {}
    for word, freq in word_freqs.items():
        split = splits[word]
        for symbol in split:
            symbol_freqs[symbol] = symbol_freqs.get(symbol, 0) + freq
        for pair in zip(split, split[1:]):
            pair_freqs[pair] = pair_freqs.get(pair, 0) + freq
    return {pair: n / (symbol_freqs[pair[0]] * symbol_freqs[pair[1]]) for pair, n in pair_freqs.items()}


def course_splits(word_freqs: dict[str, int]) -> dict[str, list[str]]:
    return {word: [c if i == 0 else "##" + c for i, c in enumerate(word)] for word in word_freqs}


def course_merge(splits: dict[str, list[str]], pair: tuple[str, str]) -> None:
    # The course's merge_pair: left to right, without overlap (the merged symbol never equals its left part).
    new = pair[0] + pair[1][2:] if pair[1].startswith("##") else pair[0] + pair[1]
    for word, split in splits.items():
        splits[word] = replace_pair(split, pair[0], pair[1], new)  # type: ignore[arg-type]


def course_loop(word_freqs: dict[str, int], vocab_size: int) -> tuple[list[str], list[tuple[str, str]]]:
    vocab = list(BERT_SPECIAL_TOKENS) + course_alphabet(word_freqs)
    splits = course_splits(word_freqs)
    merges = []
    while len(vocab) < vocab_size:
        scores = course_scores(splits, word_freqs)
        if not scores:  # the course's loop fails here (merge_pair(*"")); the recipe stops
            break
        best = max(scores, key=scores.__getitem__)  # the course's loop with a strict '<': the first of equal scores
        course_merge(splits, best)
        merges.append(best)
        vocab.append(best[0] + best[1][2:])
    return vocab, merges


def course_encode_word(word: str, vocab: list[str], *, limit: int = 1000) -> list[str] | None:
    """The course's encode_word, with a bound on its steps: None where it would never stop."""
    tokens: list[str] = []
    for _ in range(limit):
        if not word:
            return tokens
        i = len(word)
        while i > 0 and word[:i] not in vocab:
            i -= 1
        if i == 0:
            return ["[UNK]"]
        tokens.append(word[:i])
        word = word[i:]
        if word:
            word = "##" + word
    return None


# -- golden results ---------------------------------------------------------------------------------------------------

def test_wordpiece_score_course_golden(tmp_path: Path) -> None:
    assert bert_pretokenized_counts(COURSE) == COURSE_WORD_FREQS
    assert list(bert_pretokenized_counts(COURSE)) == list(COURSE_WORD_FREQS)  # first seen first
    assert course_alphabet(COURSE_WORD_FREQS) == COURSE_ALPHABET
    assert list(course_scores(course_splits(COURSE_WORD_FREQS), COURSE_WORD_FREQS).items())[:6] == COURSE_SCORES
    model = hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=70, show_progress=False)
    assert list(model.tokens) == COURSE_VOCAB
    assert model.merge_pairs[0] == ("a", "##b")
    assert model.tokenize("This is the Hugging Face course!") == COURSE_TOKENIZED
    assert model.tokenize("Hugging") == ["Hugg", "##i", "##n", "##g"] and model.tokenize("HOgging") == ["[UNK]"]
    assert course_loop(COURSE_WORD_FREQS, 70)[0] == COURSE_VOCAB  # the oracle is the course
    # vocab.txt is the vocabulary by id; the model reloads.
    folder = model.save(tmp_path / "wps")
    assert (folder / "vocab.txt").read_text(encoding="utf-8").splitlines() == COURSE_VOCAB
    assert ClassicModel.load(folder) == model


def test_wordpiece_score_course_toy_example() -> None:
    # The chapter's worked example: (##g, ##s) at 1/20, then (h, ##u) (every pair with ##u ties at 1/36 and the
    # first is merged), then (hu, ##gs) at 1/15; "hugs" is one token, "bugs" b ##u ##gs, "mug" and "bum" unknown.
    tokens, merges = train_wordpiece_score(TOY, vocab_size=len(BERT_SPECIAL_TOKENS) + 7 + 3)
    assert [(tokens[a], tokens[b], tokens[n]) for a, b, n in merges] == [
        ("##g", "##s", "##gs"), ("h", "##u", "hu"), ("hu", "##gs", "hugs")]
    model = ClassicModel("wordpiece-score", tokens, merges,
                         special_tokens={s: tokens.index(s) for s in BERT_SPECIAL_TOKENS})
    assert model.tokenize("hugs bugs mug bum") == ["hugs", "b", "##u", "##gs", "[UNK]", "[UNK]"]


def test_wordpiece_score_equals_the_course_loop_on_generated_words() -> None:
    # Few letters: many equal scores (first seen wins), tokens spelled by two merges, and "#" inside words.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(st.text("ab#c", min_size=1, max_size=6), st.integers(1, 9)), min_size=1, max_size=12),
           st.integers(0, 30))
    def check(pairs, merges):
        word_freqs = dict(pairs)
        size = len(BERT_SPECIAL_TOKENS) + len(course_alphabet(word_freqs)) + merges
        vocab, pairs_merged = course_loop(word_freqs, size)
        tokens, learned = train_wordpiece_score(word_freqs, vocab_size=size)
        assert [(tokens[a], tokens[b]) for a, b, _ in learned] == pairs_merged
        assert tokens == list(dict.fromkeys(vocab))

    check()


@pytest.mark.shared_data
def test_wordpiece_score_equals_the_course_loop_on_english(shared_data: Path) -> None:
    from tokenizers import pre_tokenizers

    raw = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:25_000]
    texts = raw[: raw.rindex(b"\n")].decode("utf-8").split("\n")
    word_freqs = bert_pretokenized_counts(texts)
    size = len(BERT_SPECIAL_TOKENS) + len(course_alphabet(word_freqs)) + 200
    vocab, merges = course_loop(word_freqs, size)
    model = hf_bpe.train_classic(texts, recipe="wordpiece-score", vocab_size=size, show_progress=False)
    assert model.merge_pairs == merges
    assert list(model.tokens) == list(dict.fromkeys(vocab))  # the course lists a token twice if merged twice
    splitter = pre_tokenizers.BertPreTokenizer()
    for text in texts[:200]:
        words = [w for w, _ in splitter.pre_tokenize_str(text)]
        assert model.tokenize(text) == [t for w in words for t in course_encode_word(w, vocab)]


@pytest.mark.shared_data
def test_wordpiece_score_pretokenizer_equals_bert_pretokenizer(shared_data: Path) -> None:
    from tokenizers import pre_tokenizers

    corpora = shared_data / "corpora"
    # Every 8th line of the UDHR (all its languages and scripts), a Chinese novel's start, control characters.
    texts = (corpora / "multi" / "udhr2_all_lang_tab_line.tsv").read_text(encoding="utf-8").split("\n")[::8]
    texts += (corpora / "zh" / "zh_hongloumeng.txt").read_text(encoding="utf-8")[:30_000].split("\n")
    texts += ["a\x00b\ufffdc\u200bd\te\u3000f\x85g\u037eh İstanbul ½ ß \U0001F600! x\x0by\u2028z"]
    splitter = pre_tokenizers.BertPreTokenizer()
    expected: dict[str, int] = {}
    for text in texts:
        for word, _ in splitter.pre_tokenize_str(text):
            expected[word] = expected.get(word, 0) + 1
    got = bert_pretokenized_counts(texts)
    assert got == expected and list(got) == list(expected)


# -- vocab.txt in transformers ----------------------------------------------------------------------------------------

def bert_tokenizers(vocab_txt: Path) -> list:
    """BertTokenizer and BertTokenizerFast (one tokenizers-backed class in transformers 5) and the pure-Python one
    (BertTokenizerLegacy in transformers 5, BertTokenizer before), cased, on a vocab.txt."""
    import transformers

    classes = {transformers.BertTokenizer, transformers.BertTokenizerFast}
    try:
        from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy
        classes.add(BertTokenizerLegacy)
    except ImportError:
        pass
    return [cls(str(vocab_txt), do_lower_case=False) for cls in sorted(classes, key=lambda c: c.__name__)]


def bert_words(bert, text: str) -> list[str]:
    """The words BERT's normalizer and pre-tokenizer make of a text (before WordPiece)."""
    if hasattr(bert, "basic_tokenizer"):
        return bert.basic_tokenizer.tokenize(text)
    backend = bert.backend_tokenizer
    return [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(backend.normalizer.normalize_str(text))]


@pytest.mark.crossval
@pytest.mark.shared_data
def test_wordpiece_score_vocab_txt_in_bert_tokenizers(shared_data: Path, tmp_path: Path) -> None:
    from tokenizers import pre_tokenizers

    raw = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:400_000]
    texts = raw[: raw.rindex(b"\n")].decode("utf-8").split("\n")
    model = hf_bpe.train_classic(texts[:-1500], recipe="wordpiece-score", vocab_size=2000, show_progress=False)
    folder = model.save(tmp_path / "wps")
    berts = bert_tokenizers(folder / "vocab.txt")
    assert len(berts) >= 2
    splitter = pre_tokenizers.BertPreTokenizer()
    held_out = [t for t in texts[-1500:] if t.strip()]
    compared = 0
    for text in held_out:
        # Only where BERT's normalizer and pre-tokenizer see the course's words (README: where they part).
        words = [w for w, _ in splitter.pre_tokenize_str(text)]
        if any(bert_words(b, text) != words for b in berts) or max(map(len, words), default=0) > 100:
            continue
        ids = model.encode(text)
        for bert in berts:
            assert bert(text, add_special_tokens=False)["input_ids"] == ids, (type(bert).__name__, text)
        compared += 1
    assert compared >= 0.95 * len(held_out)


def test_wordpiece_score_where_bert_parts_from_the_course(tmp_path: Path) -> None:
    # Each pinned: the recipe encodes as the course; BERT's tokenizers (fast and Python) as BERT.
    tokens = [*BERT_SPECIAL_TOKENS, "a", "b", "ab", "##b", "x", "##x", "中", "文", "##文", "M", "##A", "##S", "##K",
              "[", "]"]
    specials = {s: i for i, s in enumerate(BERT_SPECIAL_TOKENS)}
    model = ClassicModel("wordpiece-score", tokens, [], special_tokens=specials)
    folder = model.save(tmp_path / "m")
    for bert in bert_tokenizers(folder / "vocab.txt"):
        def ids(text: str, bert=bert) -> list[str]:
            return bert.convert_ids_to_tokens(bert(text, add_special_tokens=False)["input_ids"])

        assert ids("a b ab") == model.tokenize("a b ab") == ["a", "b", "ab"]
        # \x0b splits words for the course's pre-tokenizer (Rust White_Space); BERT removes it as a control char.
        assert model.tokenize("a\x0bb") == ["a", "b"] and ids("a\x0bb") == ["ab"]
        # CJK: BERT puts spaces around each ideograph; the course's pre-tokenizer does not.
        assert model.tokenize("中文") == ["中", "##文"] and ids("中文") == ["中", "文"]
        # A word over 100 characters: BERT's [UNK]; the course's encode_word has no limit.
        assert model.tokenize("x" * 101) == ["x"] + ["##x"] * 100 and ids("x" * 101) == ["[UNK]"]
        # A special token's text: BERT's special token; the course's words "[", "MASK", "]".
        assert model.tokenize("[MASK]") == ["[", "M", "##A", "##S", "##K", "]"] and ids("[MASK]") == ["[MASK]"]


def test_wordpiece_score_encoder_stops_where_the_course_encode_word_loops() -> None:
    # With "#" in the vocabulary (BERT's pre-tokenizer makes "#" a word of its own), the course's encode_word takes
    # "#" out of the "##" prefix of an unknown rest and prepends "##" again, forever. The recipe, like BERT, matches
    # only "##" + characters of the word: [UNK].
    vocab = [*BERT_SPECIAL_TOKENS, "#", "a", "b", "ab"]
    assert course_encode_word("abq", vocab) is None
    assert course_encode_word("ab", vocab) == ["ab"]
    model = ClassicModel("wordpiece-score", vocab, [], special_tokens={s: i for i, s in enumerate(BERT_SPECIAL_TOKENS)})
    assert model.tokenize("abq # ab") == ["[UNK]", "#", "ab"]


# -- real-wordpiece (PyPI), the published implementation of the same score --------------------------------------------

def _real_wordpiece(texts: list[str], vocab_size: int) -> list[str]:
    trainer_module = pytest.importorskip("real_wordpiece.trainer")
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()  # the course's words: no normalizer
    trainer = trainer_module.RealWordPieceTrainer(vocab_size=vocab_size, special_tokens=list(BERT_SPECIAL_TOKENS),
                                                  show_progress=False)
    trainer.train_tokenizer(texts, tokenizer)
    vocab = tokenizer.get_vocab()
    return sorted(vocab, key=vocab.__getitem__)


def test_wordpiece_score_versus_real_wordpiece() -> None:
    # real-wordpiece 0.1.7 (it pins tokenizers < 0.20; it runs on the installed one) parts from the course in four
    # ways, each shown here; hf_bpe follows the course.
    theirs = _real_wordpiece(COURSE, 70)
    ours = list(hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=70, show_progress=False).tokens)
    # 1. Its alphabet also holds the bare letters met only inside words ("o", "n", ...), ordered by frequency, not
    #    by code point: 52 initial tokens where the course has 40, so fewer merges fit in the same size.
    inner_only = {c for w in COURSE_WORD_FREQS for c in w[1:]} - {w[0] for w in COURSE_WORD_FREQS}
    initial = theirs[len(BERT_SPECIAL_TOKENS):len(BERT_SPECIAL_TOKENS) + len(COURSE_ALPHABET) + len(inner_only)]
    assert set(initial) == set(COURSE_ALPHABET) | inner_only and initial != sorted(initial)
    # 2. It rescores only the pairs a merge creates, not those whose parts got rarer: after ab, ##fu, Fa, Fac the
    #    course merges (##c, ##t), whose score rose to that of (##fu, ##l) when "Fac" took a ##c (a tie: "Face"
    #    comes before "Hopefully"); real-wordpiece still holds its old, lower score and merges (##fu, ##l).
    assert ours[45:50] == ["ab", "##fu", "Fa", "Fac", "##ct"]
    assert theirs[57:62] == ["ab", "##fu", "Fa", "Fac", "##ful"]
    splits = course_splits(COURSE_WORD_FREQS)
    stale = course_scores(splits, COURSE_WORD_FREQS)[("##c", "##t")]
    for pair in [("a", "##b"), ("##f", "##u"), ("F", "##a"), ("Fa", "##c")]:
        course_merge(splits, pair)
    now = course_scores(splits, COURSE_WORD_FREQS)
    assert stale < now[("##c", "##t")] == now[("##fu", "##l")]
    # 3. Among equal scores it takes the most frequent pair, the course the first seen: in the chapter's example every
    #    pair with ##u scores 1/36 after (##g, ##s); the course merges (h, ##u), real-wordpiece (p, ##u) (17 times).
    texts = [word for word, n in TOY.items() for _ in range(n)]
    size = len(BERT_SPECIAL_TOKENS) + 7 + 2
    assert _real_wordpiece(texts, size + 4)[-2:] == ["##gs", "pu"]
    assert train_wordpiece_score(TOY, vocab_size=size)[0][-2:] == ["##gs", "hu"]
    # 4. It merges right to left inside a word: after (##a, ##a), "zaaab" is z ##a ##aa ##b there, z ##aa ##a ##b in
    #    the course, whose next merge is then (##a, ##b) at 1/6; real-wordpiece has no such pair and merges ##aaa.
    texts = ["zaaab"] + ["yaa"] * 10 + ["wb"] * 5 + ["z"] * 100 + ["y"] * 100 + ["w"] * 100
    assert _real_wordpiece(texts, 14)[-2:] == ["##aa", "##aaa"]
    assert train_wordpiece_score(bert_pretokenized_counts(texts), vocab_size=12)[0][-2:] == ["##aa", "##ab"]


# -- options and the CLI ----------------------------------------------------------------------------------------------

def test_wordpiece_score_cli_and_bad_input(tmp_path: Path) -> None:
    corpus = tmp_path / "course.txt"
    corpus.write_text("\n".join(COURSE) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["train", str(corpus), "--recipe", "wordpiece-score", "--vocab-size", "70", "--out", str(out),
                 "--quiet"]) == 0
    assert (out / "vocab.txt").read_text(encoding="utf-8").splitlines() == COURSE_VOCAB
    assert main(["train", str(corpus), "--recipe", "wordpiece-score", "--vocab-size", "30", "--out",
                 str(tmp_path / "small"), "--quiet"]) == 2
    assert not (tmp_path / "small").exists()
    with pytest.raises(InputError, match=r"give vocab_size >= 45"):
        hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=44, show_progress=False)
    with pytest.raises(InputError, match=r"needs '\[UNK\]' among the special tokens"):
        hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=70, special_tokens=["[PAD]"], show_progress=False)
    with pytest.raises(InputError, match="has no min_frequency"):
        hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=70, min_frequency=2, show_progress=False)
    with pytest.raises(InputError, match="lowercase belongs to the wordpiece recipe"):
        hf_bpe.train_classic(COURSE, recipe="wordpiece-score", vocab_size=70, lowercase=True, show_progress=False)
    # Word counts as a mapping (first seen first), and training stops when no pair is left (the course fails there).
    tokens, merges = train_wordpiece_score({"ab": 1}, vocab_size=100, special_tokens=["[UNK]"])
    assert tokens == ["[UNK]", "##b", "a", "ab"] and len(merges) == 1
