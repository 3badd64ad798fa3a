"""A model of a classic BPE scheme: its tokens, its merges in order, and the encoder its published code uses.

Tokens are ``str`` here, in each scheme's own spelling, because these schemes are character-level (subword-nmt's
``</w>``, rasbt's ``chr(0..255)`` then ``Ġ``) or publish their tokens in GPT-2's spelling (the HF course,
minbpe's ids over bytes shown as GPT-2 characters). Byte-level ones convert to :class:`BPEModel` exactly
(:meth:`ClassicModel.to_bpe_model`).

>>> ClassicModel("subword-nmt", ["l", "o", "w</w>", "lo"], [(0, 1, 3)]).segment("low")
'lo@@ w'
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core.bytelevel import str_to_token, token_to_str
from ..errors import InputError
from ..formats.gpt2 import read_json
from .bpe import BPEModel
from .segment import (
    CodesSegmenter,
    merge_by_rank,
    merge_greedy_passes,
    rasbt_pretokenize,
    rasbt_simple_pretokenize,
    wordpiece_word,
)

__all__ = ["CLASSIC_NAME", "SCHEMES", "ClassicModel", "scheme_symbols"]

CLASSIC_NAME = "hf_bpe_classic.json"
# scheme -> the pre-tokenizer pattern of its encoder (None: words on spaces, or the scheme's own splitter).
SCHEMES: Mapping[str, str | None] = MappingProxyType({
    "subword-nmt": None,
    "sennrich-paper": None,
    "hf-course": "gpt2",
    "minbpe-basic": r"[\s\S]+",
    "minbpe-regex": "gpt4",
    "rasbt-simple": None,
    "rasbt": None,
    "wordpiece": None,
    "wordpiece-score": None,  # BertPreTokenizer words, no normalizer (the HF course's WordPiece chapter)
    "custom": None,  # hf_bpe.train_classic without a recipe: the options are in provenance["options"]
})
_BYTE_LEVEL = ("hf-course", "minbpe-basic", "minbpe-regex")


class ClassicModel:
    """Tokens, merges and encoder of one classic scheme.

    Args:
        scheme: one of :data:`SCHEMES`.
        tokens: id -> token text, in the scheme's spelling (GPT-2 characters for the byte-level schemes).
        merges: ``(left id, right id, new id)`` in the order learned.
        special_tokens: special token text -> id.
        provenance: what trained it (recorded in ``hf_bpe_classic.json``).

    >>> model = ClassicModel("subword-nmt", ["l", "o", "w</w>", "lo", "low</w>"], [(0, 1, 3), (3, 2, 4)])
    >>> model.segment("low lowly")
    'low lo@@ w@@ l@@ y'
    """

    def __init__(self, scheme: str, tokens: Sequence[str], merges: Sequence[tuple[int, int, int]], *,
                 special_tokens: Mapping[str, int] = MappingProxyType({}),
                 provenance: Mapping[str, Any] = MappingProxyType({})) -> None:
        if scheme not in SCHEMES:
            raise InputError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
        self.scheme = scheme
        self.tokens: tuple[str, ...] = tuple(tokens)
        self.merges: tuple[tuple[int, int, int], ...] = tuple((int(a), int(b), int(n)) for a, b, n in merges)
        self.special_tokens: Mapping[str, int] = MappingProxyType(dict(special_tokens))
        self.provenance: Mapping[str, Any] = MappingProxyType(dict(provenance))
        for a, b, n in self.merges:
            if not all(0 <= i < len(self.tokens) for i in (a, b, n)):
                raise InputError(f"merge {(a, b, n)!r} names an id outside the {len(self.tokens)} tokens")
        # Later ids win for equal texts, as rasbt's inverse_vocab; specials are looked up by their own table.
        self._ids = {token: i for i, token in enumerate(self.tokens) if token not in self.special_tokens}
        self._ranks = {(a, b): rank for rank, (a, b, _n) in reversed(list(enumerate(self.merges)))}
        self._new = {(a, b): n for a, b, n in self.merges}
        self._segmenter: CodesSegmenter | None = None

    def __repr__(self) -> str:
        return f"ClassicModel({self.scheme!r}, {len(self.tokens)} tokens, {len(self.merges)} merges)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassicModel):
            return NotImplemented
        return (self.scheme, self.tokens, self.merges, dict(self.special_tokens)) == (
            other.scheme, other.tokens, other.merges, dict(other.special_tokens))

    @property
    def merge_pairs(self) -> list[tuple[str, str]]:
        """The merges as pairs of token texts, in order."""
        return [(self.tokens[a], self.tokens[b]) for a, b, _n in self.merges]

    # -- subword-nmt and the paper ------------------------------------------------------------------------------

    def _codes(self) -> CodesSegmenter:
        if self.scheme not in ("subword-nmt", "sennrich-paper"):
            raise InputError(f"segment() applies subword-nmt codes; a {self.scheme!r} model encodes with encode()")
        if self._segmenter is None:
            version = (0, 2) if self.scheme == "subword-nmt" else (0, 1)
            self._segmenter = CodesSegmenter(self.merge_pairs, version=version)
        return self._segmenter

    def segment(self, text: str) -> str:
        """Return ``text`` segmented line by line with ``@@ `` marks, as ``subword-nmt apply-bpe`` writes it."""
        return "".join(self._codes().segment_line(line) for line in text.splitlines(keepends=True))

    # -- id-based schemes ------------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Encode text to ids as the scheme's published code does.

        Raises:
            InputError: for a character outside the vocabulary (the character-level schemes have no byte
                fallback), or for the subword-nmt schemes, which have no ids (use :meth:`segment`).
        """
        if self.scheme in ("subword-nmt", "sennrich-paper"):
            raise InputError(f"a {self.scheme!r} model has no ids; segment(text) gives its '@@ ' segmentation")
        if self.scheme in ("rasbt", "rasbt-simple"):
            return self._encode_rasbt(text)
        if self.scheme == "wordpiece":
            return self._encode_wordpiece(text)
        if self.scheme == "wordpiece-score":
            return self._encode_wordpiece_score(text)
        if self.scheme == "custom":
            return self._encode_custom(text)
        from ..core.pretokenize import Pretokenizer

        out: list[int] = []
        for piece in Pretokenizer(SCHEMES[self.scheme] or "gpt2").split_bytes(text):
            ids = [self._id_of(token_to_str(bytes([b]))) for b in piece]
            out += merge_by_rank(ids, self._ranks, self._new)
        return out

    def tokenize(self, text: str) -> list[str]:
        """Encode and return the token texts (the HF course's ``tokenize``)."""
        return [self.tokens[i] for i in self.encode(text)]

    def _id_of(self, symbol: str) -> int:
        found = self._ids.get(symbol)
        if found is None:
            raise InputError(
                f"{symbol!r} is not in this {self.scheme!r} vocabulary, which holds only the characters of its "
                "training corpus; train on text that contains it"
            )
        return found

    def _encode_rasbt(self, text: str) -> list[int]:
        out: list[int] = []
        words = rasbt_simple_pretokenize(text) if self.scheme == "rasbt-simple" else rasbt_pretokenize(text)
        for word in words:
            whole = self._ids.get(word)
            if whole is not None:  # rasbt looks the whole word up first
                out.append(whole)
            else:
                out += merge_greedy_passes([self._id_of(c) for c in word], self._new)
        return out

    def _encode_custom(self, text: str) -> list[int]:
        from ..core.pretokenize import Pretokenizer

        options = self.provenance["options"]
        how = options["pretokenize"]
        pieces = text.split() if how == "whitespace" else [text] if how == "none" else Pretokenizer(how).split(text)
        unk = options.get("unk_token")
        unk_id = self.special_tokens[unk] if unk else None
        out: list[int] = []
        for piece in pieces:
            symbols = scheme_symbols(piece, self._ids.keys(), options, unknown="unk")
            # A unit never seen in this position (e.g. "e</w>" when "e" never ended a word) is unknown too.
            ids = [self._ids.get(s, unk_id) if s != unk else unk_id for s in symbols]
            if None in ids:
                self._id_of(symbols[ids.index(None)])  # raises, naming the symbol
            out += merge_by_rank(ids, self._ranks, self._new)
        return out

    def _encode_wordpiece(self, text: str) -> list[int]:
        from tokenizers import normalizers, pre_tokenizers

        if "[UNK]" not in self.special_tokens:
            raise InputError("this wordpiece model has no '[UNK]' token to encode unknown words with")
        lowercase = bool(self.provenance.get("lowercase", False))
        normalized = normalizers.BertNormalizer(lowercase=lowercase).normalize_str(text)
        vocab = {t: i for i, t in enumerate(self.tokens)}  # specials too, as WordPiece's vocab holds them
        unk = self.special_tokens["[UNK]"]
        return [i for word, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(normalized)
                for i in wordpiece_word(word, vocab, unk)]

    def _encode_wordpiece_score(self, text: str) -> list[int]:
        # The course's tokenize(): BertPreTokenizer words, then encode_word (longest match first, no length limit).
        from tokenizers import pre_tokenizers

        if "[UNK]" not in self.special_tokens:
            raise InputError("this wordpiece-score model has no '[UNK]' token to encode unknown words with")
        vocab = {t: i for i, t in enumerate(self.tokens)}
        unk = self.special_tokens["[UNK]"]
        return [i for word, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)
                for i in wordpiece_word(word, vocab, unk, max_chars=None)]

    def to_bpe_model(self) -> BPEModel:
        """Return the equal byte-level :class:`BPEModel`, for the byte-level schemes (minbpe, the HF course).

        Ids are kept; the bytes the training text lacked (the HF course's alphabet is the characters seen) are
        added after the last id, so that any text encodes, and text made of seen characters gets the same ids.
        The model then goes wherever a BPEModel goes (``HFBPETokenizer``, tokenizer.json).

        Raises:
            InputError: for other schemes, or when two merges spell the same bytes (BPEModel keys by bytes).
        """
        if self.scheme not in _BYTE_LEVEL:
            raise InputError(f"only the byte-level schemes {_BYTE_LEVEL!r} convert to BPEModel, not {self.scheme!r}")
        vocab = {str_to_token(t): i for i, t in enumerate(self.tokens) if t not in self.special_tokens}
        if len(vocab) + len(self.special_tokens) != len(self.tokens):
            raise InputError("two merges spell the same bytes; BPEModel cannot give them two ids")
        for byte in map(lambda b: bytes([b]), range(256)):
            if byte not in vocab:
                vocab[byte] = len(vocab) + len(self.special_tokens)
        pairs = [(str_to_token(a), str_to_token(b)) for a, b in self.merge_pairs]
        return BPEModel(vocab, pairs, special_tokens=dict(self.special_tokens), pattern=SCHEMES[self.scheme] or "gpt2")

    # -- files -----------------------------------------------------------------------------------------------

    def files(self) -> dict[str, str | bytes]:
        """Return the files :meth:`save` writes: ``hf_bpe_classic.json`` and the scheme's native files.

        WordPiece schemes get ``vocab.txt`` with the ``tokenizer.json`` and configs that make transformers load
        it with the recipe's ids (:mod:`hf_bpe.model.wordpiece_files`). Byte-level schemes get the whole
        :class:`BPEModel` folder (GPT-2 ``vocab.json`` and ``merges.txt``,
        ``tokenizer.json``, transformers configs), so that ``hf-bpe encode``, ``AutoTokenizer`` and
        ``BPEModel.load`` read it; when two minbpe merges spell the same bytes (no BPEModel can hold that), only
        ``merges.txt`` is written beside the json.
        """
        from ..formats import bpe_codes, gpt2

        files: dict[str, str | bytes] = {CLASSIC_NAME: json.dumps({
            "scheme": self.scheme,
            "tokens": list(self.tokens),
            "merges": [list(m) for m in self.merges],
            "special_tokens": dict(self.special_tokens),
            "provenance": dict(self.provenance),
        }, ensure_ascii=False, indent=1) + "\n"}
        if self.scheme in ("subword-nmt", "sennrich-paper"):
            version = (0, 2) if self.scheme == "subword-nmt" else (0, 1)
            files[bpe_codes.CODES_NAME] = bpe_codes.dump_codes(self.merge_pairs, version=version)
        elif self.scheme in _BYTE_LEVEL:
            files["merges.txt"] = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in self.merge_pairs)
            try:
                bpe = self.to_bpe_model()
            except InputError:
                bpe = None
            if bpe is not None:
                with tempfile.TemporaryDirectory() as tmp:
                    folder = bpe.save(Path(tmp) / "model")
                    files.update({path.name: path.read_bytes() for path in folder.iterdir()})
        elif self.scheme == "custom":
            files["merges.txt"] = "".join(f"{a} {b}\n" for a, b in self.merge_pairs)
            files["vocab.json"] = gpt2.to_json({t: i for i, t in enumerate(self.tokens)})
        elif self.scheme in ("wordpiece", "wordpiece-score"):  # BERT's vocab.txt: one token per line, by id
            files["vocab.txt"] = "".join(f"{token}\n" for token in self.tokens)
            if "[UNK]" in self.special_tokens:  # and the files transformers loads it with (its encode needs [UNK])
                from .wordpiece_files import wordpiece_files

                files.update(wordpiece_files(self.tokens, list(self.special_tokens), scheme=self.scheme,
                                             lowercase=bool(self.provenance.get("lowercase", False))))
        else:  # rasbt's save_vocab_and_merges
            files["vocab.json"] = json.dumps({str(i): t for i, t in enumerate(self.tokens)}, ensure_ascii=False,
                                             indent=2)
            files["bpe_merges.json"] = json.dumps(
                [{"pair": [a, b], "new_id": n} for a, b, n in self.merges], ensure_ascii=False, indent=2)
        return files

    def save(self, directory: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write :meth:`files` into ``directory`` atomically; existing files are replaced only with ``force``."""
        from ..formats import atomic

        return atomic.replace_folder(directory, self.files(), force=force)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> ClassicModel:
        """Load a model saved by :meth:`save`."""
        path = Path(directory) / CLASSIC_NAME
        if not path.is_file():
            raise FileNotFoundError(
                f"{os.fspath(directory)!r} holds no {CLASSIC_NAME}; train one with hf-bpe train --recipe NAME")
        data = read_json(path, unique_keys=False)[1]
        return cls(data["scheme"], data["tokens"], [tuple(m) for m in data["merges"]],
                   special_tokens=data.get("special_tokens", {}), provenance=data.get("provenance", {}))


def scheme_symbols(piece: str, alphabet: Collection[str], options: Mapping[str, Any], *,
                   unknown: str = "drop") -> list[str]:
    """Split a pre-token into a custom scheme's symbols: its units, ``##`` inside, the suffix on the last one.

    Units outside ``alphabet`` are dropped (training, as `tokenizers` drops them) or, with ``unknown="unk"``,
    become the ``unk_token`` (encoding).

    >>> scheme_symbols("low", {"l", "o", "w"}, {"alphabet": "chars", "end_of_word_suffix": "</w>",
    ...                                         "continuing_subword_prefix": "##", "unk_token": None})
    ['l', '##o', '##w</w>']
    """
    units = list(piece) if options["alphabet"] == "chars" else [token_to_str(bytes([b])) for b in piece.encode()]
    prefix, suffix = options["continuing_subword_prefix"], options["end_of_word_suffix"]
    out: list[str] = []
    for i, unit in enumerate(units):
        if unit not in alphabet:
            if unknown == "unk" and options.get("unk_token"):
                out.append(options["unk_token"])
            elif unknown == "unk":
                raise InputError(f"{unit!r} is not in this model's alphabet and it has no unk_token")
            continue
        out.append((prefix if i else "") + unit + (suffix if i == len(units) - 1 else ""))
    return out
