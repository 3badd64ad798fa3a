"""The tokenizers under evaluation, seen through what the metrics need: ids, their bytes, decode, fallback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LOADERS", "UNIGRAM_LOADERS", "Evaluated", "EvaluatedHFBPE", "EvaluatedHFUnigram", "EvaluatedSentencePiece",
           "EvaluatedTokenizers", "EvaluatedTokenizersUnigram", "partial_character"]


class Evaluated:
    """One tokenizer, seen through what the metrics need: ids, their bytes, decode, fallback flags."""

    name: str

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError

    def token_bytes(self, token_id: int) -> bytes:
        raise NotImplementedError

    def is_fallback(self, token_id: int) -> bool:
        raise NotImplementedError

    def is_unknown(self, token_id: int) -> bool:
        return False


def partial_character(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class EvaluatedHFBPE(Evaluated):
    name = "hf_bpe"

    def __init__(self, folder: Path) -> None:
        from ...model.bpe import BPEModel

        self.model = BPEModel.load(folder)
        self._partial = [partial_character(self.model.id_to_bytes(i)) if self._exists(i) else False
                         for i in range(self.model.vocab_size)]

    def _exists(self, token_id: int) -> bool:
        try:
            self.model.id_to_bytes(token_id)
        except ValueError:
            return False
        return True

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [self.model.encode(t, allowed_special="all") for t in texts]

    def decode(self, ids: list[int]) -> str:
        return self.model.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self.model.id_to_bytes(token_id)

    def is_fallback(self, token_id: int) -> bool:
        return self._partial[token_id]

    def vocabulary(self, specials: Iterable[str] = ()) -> set[bytes]:
        """The learned tokens as bytes (special tokens are kept apart by the model)."""
        return set(self.model.vocab)


class EvaluatedTokenizers(Evaluated):
    name = "tokenizers"

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"no tokenizer.json at {os.fspath(path)!r}; pass a tokenizer.json file or a folder "
                                    "that holds one")
        self.path = file
        self.tokenizer = Tokenizer.from_file(os.fspath(file))
        self.data = json.loads(file.read_text(encoding="utf-8"))
        self.added = {t.content for t in self.tokenizer.get_added_tokens_decoder().values()}
        self._bytes = {idx: self._token_bytes(token)
                       for token, idx in self.tokenizer.get_vocab(with_added_tokens=True).items()}

    def _token_bytes(self, token: str) -> bytes:
        from ...core.bytelevel import str_to_token

        try:
            return token.encode("utf-8") if token in self.added else str_to_token(token)
        except ValueError:
            return token.encode("utf-8")

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def token_bytes(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def is_fallback(self, token_id: int) -> bool:
        return partial_character(self._bytes[token_id])

    def merges(self) -> list[tuple[bytes, bytes]]:
        from ...core.bytelevel import str_to_token

        pairs = []
        for merge in self.data.get("model", {}).get("merges", []):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            pairs.append((str_to_token(left), str_to_token(right)))
        return pairs


class EvaluatedSentencePiece(Evaluated):
    name = "sentencepiece"

    def __init__(self, path: Path) -> None:
        import sentencepiece as spm

        file = path
        if path.is_dir():
            found = sorted(path.glob("*.model"))
            if len(found) != 1:
                raise FileNotFoundError(f"expected one *.model file in {os.fspath(path)!r}, found {len(found)}")
            file = found[0]
        if not file.is_file():
            raise FileNotFoundError(f"no SentencePiece model at {os.fspath(path)!r}")
        self.path = file
        self.sp = spm.SentencePieceProcessor(model_file=os.fspath(file))
        size = self.sp.get_piece_size()
        self._byte = [self.sp.is_byte(i) for i in range(size)]
        self._unknown = [self.sp.is_unknown(i) for i in range(size)]
        self._bytes = [self._piece_bytes(i) for i in range(size)]

    def _piece_bytes(self, token_id: int) -> bytes:
        piece = self.sp.id_to_piece(token_id)
        if self.sp.is_byte(token_id):
            return bytes([int(piece[3:5], 16)])  # "<0xNN>"
        if self.sp.is_control(token_id) or self.sp.is_unknown(token_id):
            return b""
        return piece.replace("\u2581", " ").encode("utf-8")

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return self.sp.encode(texts) if texts else []

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def is_fallback(self, token_id: int) -> bool:
        return self._byte[token_id]

    def is_unknown(self, token_id: int) -> bool:
        return self._unknown[token_id]

    def vocabulary(self, specials: Iterable[str] = ()) -> set[bytes]:
        """Pieces as bytes (``▁`` -> space, ``<0xNN>`` -> the byte), without control, unknown and special pieces."""
        skip = set(specials)
        return {self._bytes[i] for i in range(len(self._bytes))
                if not (self.sp.is_control(i) or self.sp.is_unknown(i) or self.sp.id_to_piece(i) in skip)}


class EvaluatedHFUnigram(EvaluatedSentencePiece):
    """hf_bpe's unigram model (a ``tokenizer.model``), encoded by hf_bpe's own :class:`UnigramModel`."""

    name = "hf_bpe"

    def __init__(self, path: Path) -> None:
        from ...formats.sentencepiece_model import SentencePieceModel
        from ...model.unigram import UnigramModel

        super().__init__(path)
        self.model = UnigramModel.from_sentencepiece(SentencePieceModel.load(self.path))

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [self.model.encode(t) for t in texts]


class EvaluatedTokenizersUnigram(EvaluatedTokenizers):
    """A `tokenizers` ``Unigram`` tokenizer.json: pieces with ``▁`` for a space, no byte fallback."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._unknown = self.tokenizer.token_to_id("<unk>")

    def _token_bytes(self, token: str) -> bytes:
        return b"" if token in self.added else token.replace("\u2581", " ").encode("utf-8")

    def is_fallback(self, token_id: int) -> bool:
        return False  # tokenizers' UnigramTrainer learns no byte pieces

    def is_unknown(self, token_id: int) -> bool:
        return token_id == self._unknown

    def vocabulary(self, specials: Iterable[str] = ()) -> set[bytes]:
        """Pieces as bytes (``▁`` -> space), without the special tokens and ``<unk>``."""
        skip = self.added | set(specials)
        return {self._bytes[i] for t, i in self.tokenizer.get_vocab(with_added_tokens=True).items() if t not in skip}


LOADERS = {"hf_bpe": EvaluatedHFBPE, "tokenizers": EvaluatedTokenizers, "sentencepiece": EvaluatedSentencePiece}
# With algorithm="unigram": hf_bpe and sentencepiece both write tokenizer.model files; tokenizers a Unigram model.
UNIGRAM_LOADERS = {"hf_bpe": EvaluatedHFUnigram, "tokenizers": EvaluatedTokenizersUnigram,
                   "sentencepiece": EvaluatedSentencePiece}
