"""The tokenizers under evaluation: each file or folder loaded by the reader that knows it, behind one interface.

* hf_bpe folders, GPT-2 files, byte-level BPE ``tokenizer.json`` and ``.tiktoken`` files: :func:`..convert.load_any`
  gives a :class:`~hf_bpe.model.bpe.BPEModel`, which encodes them (tests hold it equal to `tokenizers` and tiktoken).
* any other ``tokenizer.json`` (WordPiece, Unigram, SentencePiece-style BPE): the `tokenizers` library.
* a SentencePiece ``.model`` (or a folder whose ``tokenizer.json`` is not byte-level BPE but which holds a
  ``tokenizer.model``): the `sentencepiece` library.

Each document is encoded on its own, special tokens in the text recognised (`tokenizers` always splits its added
tokens out; hf_bpe and tiktoken are asked to with ``allowed_special="all"``), no BOS/EOS added.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compare.evaluated import EvaluatedSentencePiece, EvaluatedTokenizers

__all__ = ["Span", "Subject", "load_subject", "spans_from_offsets", "spans_from_pieces"]


@dataclass(frozen=True)
class Span:
    """A piece of a line as a tokenizer split it: the token id (None for text no token covers), the bytes of the
    line this token stands for (its *surface*: a character split over several tokens belongs to the one holding its
    last byte), and the token's own bytes (what the tokenizer's vocabulary spells)."""

    token_id: int | None
    surface: bytes
    token: bytes


def spans_from_pieces(line: bytes, pieces: Sequence[tuple[int, bytes]]) -> list[Span] | None:
    """Spans of a tokenizer whose token bytes concatenate to the line (byte-level BPE); None when they do not."""
    if b"".join(p for _, p in pieces) != line:
        return None
    spans, pending = [], b""
    for token_id, token in pieces:
        data = pending + token
        cut = _complete_prefix(data)
        spans.append(Span(token_id, data[:cut], token))
        pending = data[cut:]
    return spans


def _complete_prefix(data: bytes) -> int:
    """The length of the longest prefix of ``data`` (valid UTF-8 from a character start) of whole characters."""
    start = len(data)
    while start > 0 and 0x80 <= data[start - 1] < 0xC0:  # continuation bytes at the end (at most 3)
        start -= 1
    if start == 0:
        return 0
    lead = data[start - 1]
    need = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return len(data) if len(data) - (start - 1) >= need else start - 1


def spans_from_offsets(line: bytes, ids: Sequence[int], offsets: Sequence[tuple[int, int]],
                       tokens: Sequence[bytes]) -> list[Span]:
    """Spans from each token's (start, end) byte offsets in ``line``: overlapping ranges go to the first token that
    reaches them, and text no token covers becomes a span of its own (token id None)."""
    spans: list[Span] = []
    cursor = 0
    for token_id, (start, end), token in zip(ids, offsets, tokens):
        start, end = max(0, min(start, len(line))), max(0, min(end, len(line)))
        if start > cursor:
            spans.append(Span(None, line[cursor:start], b""))
            cursor = start
        spans.append(Span(token_id, line[cursor:end] if end > cursor else b"", token))
        cursor = max(cursor, end)
    if cursor < len(line):
        spans.append(Span(None, line[cursor:], b""))
    return spans


class Subject:
    """One tokenizer under evaluation."""

    name: str
    path: str
    library: str
    ids: frozenset[int]

    def encode_documents(self, documents: list[str]) -> list[list[int]]:
        raise NotImplementedError

    def token_bytes(self, token_id: int) -> bytes:
        raise NotImplementedError

    def spans(self, line: str) -> list[Span]:
        raise NotImplementedError


class BPESubject(Subject):
    """A byte-level BPE model (hf_bpe, GPT-2 files, tokenizer.json, .tiktoken), encoded by hf_bpe."""

    def __init__(self, name: str, path: str, model: Any) -> None:
        from ..._version import __version__

        self.name, self.path, self.model = name, path, model
        self.library = f"hf_bpe {__version__}"
        self.ids = frozenset(model.vocab.values()) | frozenset(model.special_tokens.values())

    def encode_documents(self, documents: list[str]) -> list[list[int]]:
        specials = self.model.special_tokens
        if not any(s in d for d in documents for s in specials):
            return self.model.encode_ordinary_batch(documents)  # one compiled call on every core
        return [self.model.encode(d, allowed_special="all") for d in documents]

    def token_bytes(self, token_id: int) -> bytes:
        return self.model.id_to_bytes(token_id)

    def spans(self, line: str) -> list[Span]:
        ids = self.encode_documents([line])[0]
        pieces = [(i, self.model.id_to_bytes(i)) for i in ids]
        data = line.encode("utf-8")
        if self.model.add_prefix_space and pieces and not line.startswith(" ") and pieces[0][1][:1] == b" ":
            pieces[0] = (pieces[0][0], pieces[0][1][1:])  # the prefix space is not part of the line
        found = spans_from_pieces(data, pieces)
        if found is None:  # e.g. a vocabulary missing byte tokens drops bytes: one span holds the line
            return [Span(None, data, b"")]
        return [Span(s.token_id, s.surface, self.model.id_to_bytes(s.token_id)) for s in found]


class TokenizersSubject(Subject):
    """Any ``tokenizer.json``, encoded by the `tokenizers` library."""

    def __init__(self, name: str, path: Path) -> None:
        import tokenizers

        self.name, self.path = name, os.fspath(path)
        self.evaluated = EvaluatedTokenizers(path)
        self.library = f"tokenizers {tokenizers.__version__}"
        self.ids = frozenset(self.evaluated.tokenizer.get_vocab(with_added_tokens=True).values())

    def encode_documents(self, documents: list[str]) -> list[list[int]]:
        return self.evaluated.encode_batch(documents)

    def token_bytes(self, token_id: int) -> bytes:
        return self.evaluated.token_bytes(token_id)

    def spans(self, line: str) -> list[Span]:
        encoding = self.evaluated.tokenizer.encode(line, add_special_tokens=False)
        # Character offsets to byte offsets.
        at = [0]
        for char in line:
            at.append(at[-1] + len(char.encode("utf-8")))
        offsets = [(at[s], at[e]) for s, e in encoding.offsets]
        return spans_from_offsets(line.encode("utf-8"), encoding.ids, offsets,
                                  [self.token_bytes(i) for i in encoding.ids])


class SentencePieceSubject(Subject):
    """A SentencePiece ``.model``, encoded by the `sentencepiece` library."""

    def __init__(self, name: str, path: Path) -> None:
        import sentencepiece

        self.name, self.path = name, os.fspath(path)
        self.evaluated = EvaluatedSentencePiece(path)
        self.library = f"sentencepiece {sentencepiece.__version__}"
        self.ids = frozenset(range(self.evaluated.sp.get_piece_size()))

    def encode_documents(self, documents: list[str]) -> list[list[int]]:
        return self.evaluated.encode_batch(documents)

    def token_bytes(self, token_id: int) -> bytes:
        return self.evaluated.token_bytes(token_id)

    def spans(self, line: str) -> list[Span]:
        sp = self.evaluated.sp
        data = line.encode("utf-8")
        try:
            proto = sp.encode(line, return_type="proto")  # each piece's byte range in the line (needs protobuf)
        except (ImportError, ValueError, TypeError):
            ids = sp.encode(line)
            return [Span(None, data, b"")] if ids else []
        pieces = list(proto.pieces)
        return spans_from_offsets(data, [p.id for p in pieces], [(p.begin, p.end) for p in pieces],
                                  [self.token_bytes(p.id) for p in pieces])


def load_subject(name: str, source: Any, *, pattern: str | None = None) -> Subject:
    """Load the tokenizer at ``source`` (a path, or a ``BPEModel``) for evaluation under ``name``.

    Raises:
        TypeError: when ``source`` is neither a path nor a ``BPEModel``.
        FileNotFoundError: when the path does not exist.
        ValueError: when the format cannot be told or the files are malformed (the readers' messages).
    """
    from ...model.bpe import BPEModel
    from ..convert import load_any

    if isinstance(source, BPEModel):
        return BPESubject(name, f"<{type(source).__name__} in memory>", source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"a tokenizer must be a path (str or os.PathLike) or a BPEModel, got "
                        f"{type(source).__name__} {source!r:.80}")
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"tokenizer {name!r}: {os.fspath(source)!r} does not exist; expected an hf_bpe folder, "
                                "a tokenizer.json, a .tiktoken file or a SentencePiece .model file")
    if path.is_file() and path.suffix == ".model":
        return SentencePieceSubject(name, path)
    try:
        return BPESubject(name, os.fspath(path), load_any(path, pattern=pattern))
    except ValueError as exc:
        # Not byte-level BPE: a tokenizer.json the tokenizers library reads, or a folder with a SentencePiece model.
        folder = path if path.is_dir() else None
        if folder is not None and (folder / "tokenizer.model").is_file():
            return SentencePieceSubject(name, folder / "tokenizer.model")
        json_file = folder / "tokenizer.json" if folder is not None else path
        if json_file.name.endswith("tokenizer.json") and json_file.is_file():
            try:
                return TokenizersSubject(name, json_file)
            except Exception as inner:  # the library's own parse error (a Rust exception type)
                raise ValueError(f"tokenizer {name!r}: {os.fspath(json_file)!r} is not byte-level BPE ({exc}) and the "
                                 f"tokenizers library cannot read it either: {inner}") from None
        raise ValueError(f"tokenizer {name!r}: {exc}") from None
