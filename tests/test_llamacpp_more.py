"""llama.cpp test vectors of the byte-level BPE families with their own pre-tokenizers (falcon, starcoder, mpt,
refact, deepseek-llm, deepseek-coder), encoded with hf_bpe's word encoder.

The expected ids (``*.gguf.out``) are what the Hugging Face fast tokenizer of each model produces
(``AutoTokenizer.from_pretrained(repo).encode(text, add_special_tokens=False)``; repos listed in llama.cpp's
``convert_hf_to_gguf_update.py``: tiiuae/falcon-7b, bigcode/starcoder2-3b, mosaicml/mpt-7b,
smallcloudai/Refact-1_6-base, deepseek-ai/deepseek-llm-7b-base, deepseek-ai/deepseek-coder-6.7b-base).

Their published pre-tokenizers are sequences of splits, which hf_bpe's single-regex ``Pretokenizer`` cannot express:
a later regex runs on each piece of the earlier one, so a lookahead such as ``\\s+(?!\\S)`` stops at the piece's end
(starcoder: ``"  1"`` is ``"  "`` + ``"1"`` as a sequence, but ``" "`` + ``" "`` + ``"1"`` with the regexes joined by
``|``). So the test applies the sequence itself and hands every final piece to ``BPEModel.encode_ordinary`` with
the pattern ``(?s).+`` (one piece). The regexes are llama.cpp's transcription of those tokenizer.json pre-tokenizers
(``src/llama-vocab.cpp``, ``llm_tokenizer_bpe``, ``regex_exprs`` per ``LLAMA_VOCAB_PRE_TYPE_*``). Each regex splits
like tokenizers' ``Split(..., behavior="Isolated")`` and llama.cpp's ``unicode_regex_split``: every match is a piece
and so is every gap between matches.

Measured: 46/46 for every family, in both test-set versions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import regex

from hf_bpe.formats import gpt2 as gpt2_format
from hf_bpe.model.bpe import BPEModel

pytestmark = [pytest.mark.shared_data, pytest.mark.crossval]

_SEPARATOR = "\n__ggml_vocab_test__\n"

# GPT-2's regex as llama.cpp writes it: without the final `|\s+`, which is redundant when gaps are pieces.
_GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""

# deepseek-llm's letter class, in escapes: it is the cased letters (Lu/Ll/Lt) of tokenizer.json's regex, and some of
# its code points (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A) are canonical singletons that any NFC step (an
# editor, a copy through a web page) silently turns into other code points, which breaks the ranges.
_DEEPSEEK_LETTERS = (
    r"A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    r"\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    r"\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b"
    r"\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b"
    r"\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb"
    r"\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128"
    r"\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4"
    r"\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf"
    r"\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    r"\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943"
)
# CJK unified ideographs 一-龥, U+0800..U+4E00, Hangul 가..U+D7FF (deepseek's "[一-龥ࠀ-一가-퟿]+").
_DEEPSEEK_CJK = r"[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"

# name -> the regexes applied one after another. The comment names the tokenizer.json pre-tokenizer each mirrors.
SEQUENCES: dict[str, list[str]] = {
    # Sequence[Punctuation(contiguous), ByteLevel(use_regex), Digits(individual=false), Split("[0-9][0-9][0-9]")].
    # llama.cpp leaves out Digits: after GPT-2's ` ?\p{N}+` it would only cut the space off " 123"; that changes no
    # id in these vectors (46/46), but is a known gap of the transcription for digit runs after a space.
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, r"[0-9][0-9][0-9]"],
    # Sequence[Digits(individual_digits=true), ByteLevel(use_regex=true)].
    "starcoder": [r"\p{N}", _GPT2],
    "refact": [r"\p{N}", _GPT2],
    # gpt-neox-20b's ByteLevel(use_regex=true): a single regex (hf_bpe's "gpt2"). Its NFC normalizer changes none of
    # the inputs (all are NFC already), so it is not applied here.
    "mpt": [_GPT2],
    # Sequence[Split x 6 (below), ByteLevel(use_regex=false)].
    "deepseek-llm": [
        r"[\r\n]",
        rf"\s?[{_DEEPSEEK_LETTERS}]+",
        r"\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
        r"\s+$",
        _DEEPSEEK_CJK,
        r"\p{N}+",
    ],
    # Sequence[Split x 5 (below), ByteLevel(use_regex=false)].
    "deepseek-coder": [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _DEEPSEEK_CJK, r"\p{N}"],
}

# Measured passes out of 46, per family (same in vectors_2025_02 and vectors_2025_mid).
EXPECTED_PASSES = {name: 46 for name in SEQUENCES}

def split_isolated(piece: str, pattern: regex.Pattern[str]) -> list[str]:
    """Split like tokenizers' Split(Isolated) / llama.cpp's unicode_regex_split: matches and gaps are pieces."""
    out: list[str] = []
    position = 0
    for match in pattern.finditer(piece):
        if match.start() == match.end():
            continue
        if match.start() > position:
            out.append(piece[position : match.start()])
        out.append(match.group())
        position = match.end()
    if position < len(piece):
        out.append(piece[position:])
    return out


@dataclass(frozen=True)
class _Family:
    model: BPEModel
    placeholder_base: int  # ids from here on stand for bytes missing from the vocabulary; they are dropped
    added: dict[str, int]
    added_regex: regex.Pattern[str] | None
    steps: tuple[regex.Pattern[str], ...]

    @classmethod
    def load(cls, data: Path, name: str) -> _Family:
        folder = data / "llamacpp" / "vocab_merges" / name
        tokens, others = gpt2_format.load_vocab_json(folder / "vocab.json")
        merges = gpt2_format.load_merges_txt(folder / "merges.txt", vocab=tokens)
        # Every family lacks some single bytes: all lack those that never occur in UTF-8 (C0, C1, F5-FF; deepseek
        # adds them back as user-defined tokens spelled "õ", "ü", ...), falcon also lacks 14 control characters.
        # tokenizers' BPE without unk_token drops such a byte; a placeholder id (dropped below) does the same.
        # (Placeholders sit right after the largest id: the model keeps an id -> bytes table as long as that id.)
        base = max(max(tokens.values()), max(others.values(), default=0)) + 1
        for byte in range(256):
            tokens.setdefault(bytes([byte]), base + byte)
        model = BPEModel(tokens, merges, pattern="(?s).+")
        # Control (3) and user-defined (4) tokens are tokenizer.json's added tokens: split out of the text first,
        # leftmost-longest, as tokenizers does. This matters for two families: gpt-neox's (mpt) added tokens for
        # runs of 2..24 spaces ('  Hello' -> [50276, 12092]), and deepseek's "ü" etc. (the missing bytes'
        # byte-level spellings, added as normalized tokens, so the *character* ü in text is that token:
        # 'Führer' -> [37, 32009, 71, 6247]). Without this split: mpt 39/46, deepseek-* 45/46 (vectors_2025_02).
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        added = {text: idx for idx, text, kind in meta["non_normal_tokens"] if kind in (3, 4)}
        alternatives = sorted(added, key=lambda t: (-len(t), t))
        added_regex = regex.compile("|".join(map(regex.escape, alternatives))) if added else None
        return cls(model, base, added, added_regex, tuple(regex.compile(p) for p in SEQUENCES[name]))

    def pieces(self, text: str) -> list[str]:
        """Return the final pre-tokens of one stretch of text between added tokens."""
        pieces = [text] if text else []
        for step in self.steps:
            pieces = [part for piece in pieces for part in split_isolated(piece, step)]
        return pieces

    def encode(self, text: str) -> list[int]:
        segments = split_isolated(text, self.added_regex) if self.added_regex is not None else [text]
        ids: list[int] = []
        for segment in segments:
            if segment in self.added:
                ids.append(self.added[segment])
                continue
            for piece in self.pieces(segment):
                ids += [i for i in self.model.encode_ordinary(piece) if i < self.placeholder_base]
        return ids


_FAMILIES: dict[str, _Family] = {}


def _family(data: Path, name: str) -> _Family:
    if name not in _FAMILIES:
        _FAMILIES[name] = _Family.load(data, name)
    return _FAMILIES[name]


def _vectors(folder: Path, name: str) -> list[tuple[str, list[int]]]:
    inputs = (folder / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split(_SEPARATOR)
    outputs = (folder / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    assert inputs[-1] == "" and outputs[-1] == ""
    return [(text, [int(x) for x in line.split()]) for text, line in zip(inputs[:-1], outputs[:-1], strict=True)]


@pytest.mark.parametrize("version", ["vectors_2025_02", "vectors_2025_mid"])
@pytest.mark.parametrize("name", list(SEQUENCES))
def test_llamacpp_more_vectors_match_published_pre_tokenizers(shared_data: Path, version: str, name: str) -> None:
    vectors = _vectors(shared_data / "llamacpp" / version, name)
    assert len(vectors) == 46
    family = _family(shared_data, name)
    failures = [(i, text, expected, got) for i, (text, expected) in enumerate(vectors)
                if (got := family.encode(text)) != expected]
    passes = len(vectors) - len(failures)
    assert passes == EXPECTED_PASSES[name], (
        f"{name} ({version}): {passes}/46 pass, expected {EXPECTED_PASSES[name]}; first failure: {failures[:1]!r}"
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("mpt", "  Hello", [50276, 12092]),  # the added token for two spaces, then "Hello"
        ("deepseek-coder", "Führer", [37, 32009, 71, 6247]),  # the character ü is the added token "ü"
        ("deepseek-llm", "Führer", [37, 100014, 71, 6245]),
        ("starcoder", "  1", [280, 54]),  # sequence semantics: "  " is one piece (joined regexes: [244, 244, 54])
    ],
)
def test_llamacpp_more_added_tokens_and_sequences_matter(shared_data: Path, name: str, text: str,
                                                         expected: list[int]) -> None:
    assert _family(shared_data, name).encode(text) == expected


def test_llamacpp_more_split_isolated_keeps_gaps() -> None:
    assert split_isolated("ab12c3", regex.compile(r"\d+")) == ["ab", "12", "c", "3"]
    assert split_isolated("", regex.compile(r"\d")) == []
    assert split_isolated("x", regex.compile(r"y*")) == ["x"]  # empty matches are not pieces


def test_llamacpp_more_deepseek_letters_are_cased_letters() -> None:
    # Guards the escaped class against transcription slips: every member is a cased letter, no range is reversed.
    import unicodedata

    letters = regex.compile(rf"[{_DEEPSEEK_LETTERS}]")
    members = [c for c in range(0x110000) if letters.fullmatch(chr(c))]
    assert all(unicodedata.category(chr(c)) in ("Lu", "Ll", "Lt") for c in members)
    assert len(members) > 2000 and 0x1F7D in members and 0x212A in members and 0x03CE in members
