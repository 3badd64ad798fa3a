"""What extending a tokenizer bought: tokens per byte before and after, on held-out text, and the first new tokens.

``hf-bpe extend`` prints :meth:`ExtensionReport.render` and writes :meth:`ExtensionReport.to_json` to the folder
as ``extension_report.json``. The report is deterministic (no times, no paths): the same tokenizers and texts give
the same JSON. Tokens per byte counts the tokens of each text encoded alone, without special tokens (special-token
text counts as ordinary text), over the texts' UTF-8 bytes; SentencePiece models encode as ``sentencepiece`` does
(normalization, dummy prefix, no BOS/EOS).

:class:`HeldOutSplit` (:mod:`hf_bpe.training.held_out`) cuts a corpus into training and held-out texts while it
streams, with the rule of ``hf-bpe compare`` (each document by its index, stable everywhere).

>>> import hf_bpe
>>> corpus = ["low lower lowest newer wider"] * 8
>>> base = hf_bpe.train(corpus, vocab_size=262, show_progress=False)
>>> extended = hf_bpe.train(corpus, vocab_size=265, show_progress=False)
>>> report = extension_report(base, extended, ["newer and wider"], first=2)
>>> report.held_out.base_tokens, report.held_out.extended_tokens, report.new_tokens
(12, 9, 3)
>>> print(report.render())
extended 262 -> 265 ids (3 new)
held-out text: 1 texts, 15 bytes: 0.8000 -> 0.6000 tokens per byte (-25.00%)
first new tokens (byte-level: UTF-8, other bytes as \\xNN):
     262  'ew'  (was 2 base tokens)
     263  'ider'  (was 2 base tokens)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ..formats.sentencepiece_model import SentencePieceModel
from ..integrations.embeddings import as_tokenizer_model, base_splits, token_text
from ..training.held_out import HeldOutSplit

__all__ = ["ExtensionReport", "HeldOutSplit", "NewToken", "TokensPerByte", "extension_report"]

_BATCH = 1024  # texts encoded per call: bounds the ids held at once


@dataclass(frozen=True)
class TokensPerByte:
    """Tokens per UTF-8 byte of one set of texts, with the base and with the extended tokenizer."""

    texts: int
    bytes: int
    base_tokens: int
    extended_tokens: int

    @property
    def base_per_byte(self) -> float:
        """The base's tokens per byte (0.0 for no bytes)."""
        return self.base_tokens / self.bytes if self.bytes else 0.0

    @property
    def extended_per_byte(self) -> float:
        """The extended tokenizer's tokens per byte (0.0 for no bytes)."""
        return self.extended_tokens / self.bytes if self.bytes else 0.0

    @property
    def relative_change(self) -> float:
        """``extended / base - 1``: -0.25 is a quarter fewer tokens (0.0 when the base gives none)."""
        return self.extended_tokens / self.base_tokens - 1 if self.base_tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The counts and the three ratios, as plain JSON values."""
        return {**asdict(self), "base_tokens_per_byte": self.base_per_byte,
                "extended_tokens_per_byte": self.extended_per_byte, "relative_change": self.relative_change}

    def render(self, name: str) -> str:
        """One line: ``name: N texts, B bytes: x -> y tokens per byte (+z%)`` (``name: no text`` for none)."""
        if not self.bytes:
            return f"{name}: no text"
        return (f"{name}: {self.texts:,} texts, {self.bytes:,} bytes: {self.base_per_byte:.4f} -> "
                f"{self.extended_per_byte:.4f} tokens per byte ({self.relative_change:+.2%})")


@dataclass(frozen=True)
class NewToken:
    """A new token: its id, its text (:func:`hf_bpe.integrations.embeddings.token_text`) and how many base
    tokens the base split it into (the rows its embedding averages)."""

    id: int
    text: str
    base_tokens: int


@dataclass(frozen=True)
class ExtensionReport:
    """Tokens per byte of the base and the extended tokenizer, and the first new tokens.

    Attributes:
        kind: ``"byte-level"`` or ``"sentencepiece"``.
        base_size, extended_size: the ids of each (largest id plus one).
        new_tokens: ``extended_size - base_size``.
        held_out: on held-out text of the new corpus.
        check: on text of the base's own kind (``--check``), or None.
        first_new_tokens: the first new tokens, by id.
    """

    kind: str
    base_size: int
    extended_size: int
    new_tokens: int
    held_out: TokensPerByte
    check: TokensPerByte | None
    first_new_tokens: tuple[NewToken, ...]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON values (what :meth:`to_json` writes)."""
        return {"kind": self.kind, "base_size": self.base_size, "extended_size": self.extended_size,
                "new_tokens": self.new_tokens, "token_text": _TEXT_RULE[self.kind],
                "held_out": self.held_out.to_dict(), "check": None if self.check is None else self.check.to_dict(),
                "first_new_tokens": [asdict(token) for token in self.first_new_tokens]}

    def to_json(self) -> str:
        """The report as ``extension_report.json``'s text (UTF-8 characters as they are, sorted keys, a final
        newline): the same report gives the same bytes."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"

    def render(self) -> str:
        """The report as a few lines for a terminal (no final newline)."""
        lines = [f"extended {self.base_size:,} -> {self.extended_size:,} ids ({self.new_tokens:,} new)",
                 self.held_out.render("held-out text")]
        if self.check is not None:
            lines.append(self.check.render("check text"))
        if self.first_new_tokens:
            lines.append(f"first new tokens ({_TEXT_RULE[self.kind]}):")
            lines += [f"{token.id:>8}  {token.text!r}  (was {token.base_tokens} base tokens)"
                      for token in self.first_new_tokens]
        return "\n".join(lines)


_TEXT_RULE = {"byte-level": "byte-level: UTF-8, other bytes as \\xNN",
              "sentencepiece": "SentencePiece pieces as they are, \u2581 for spaces"}


def extension_report(base: Any, extended: Any, held_out: Iterable[str], *, check: Iterable[str] | None = None,
                     first: int = 20) -> ExtensionReport:
    """Measure an extension: tokens per byte of ``base`` and ``extended`` on ``held_out`` (and ``check``).

    Args:
        base, extended: tokenizers as :func:`hf_bpe.new_token_embeddings` takes them (models, hf_bpe's transformers
            tokenizers, folders); ``extended`` must be an extension of ``base``.
        held_out: texts of the new corpus the extension did not learn from (:class:`HeldOutSplit`).
        check: texts of the kind the base was made for (to see what the extension costs there), or None.
        first: how many of the new tokens to list, from the lowest id.

    Raises:
        TypeError: tokenizers as :func:`hf_bpe.new_token_embeddings` refuses them; texts that are not str; a
            ``first`` that is not an int.
        ValueError: ``extended`` is not an extension of ``base``; a negative ``first``.
    """
    if not isinstance(first, int) or isinstance(first, bool):
        raise TypeError(f"first must be an int (how many new tokens to list), got {first!r}")
    if first < 0:
        raise ValueError(f"first must be 0 or more (how many new tokens to list), got {first!r}")
    base_model, extended_model = as_tokenizer_model(base, "base"), as_tokenizer_model(extended, "extended")
    splits = base_splits(base_model, extended_model)  # also checks that extended extends base
    kind = "sentencepiece" if isinstance(base_model, SentencePieceModel) else "byte-level"
    base_size = len(base_model.pieces) if isinstance(base_model, SentencePieceModel) else base_model.vocab_size
    shown = tuple(NewToken(base_size + i, token_text(extended_model, base_size + i), len(split))
                  for i, split in enumerate(splits[:first]))
    count_base, count_extended = _counter(base_model), _counter(extended_model)
    return ExtensionReport(kind=kind, base_size=base_size, extended_size=base_size + len(splits),
                           new_tokens=len(splits), held_out=_measure(held_out, count_base, count_extended, "held_out"),
                           check=None if check is None else _measure(check, count_base, count_extended, "check"),
                           first_new_tokens=shown)


def _counter(model: Any) -> Any:
    """A function: a list of texts -> the total number of tokens the model gives them."""
    if isinstance(model, SentencePieceModel):
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor()
        processor.LoadFromSerializedProto(model.to_bytes())
        return lambda texts: sum(map(len, processor.encode(texts)))
    return lambda texts: int(model.encode_ordinary_batch_arrays(texts)[1][-1])


def _measure(texts: Iterable[str], count_base: Any, count_extended: Any, what: str) -> TokensPerByte:
    if isinstance(texts, str | bytes):
        raise TypeError(f"{what} must be an iterable of texts, got a single {type(texts).__name__}; pass [text]")
    n_texts = n_bytes = base_tokens = extended_tokens = 0
    batch: list[str] = []

    def flush() -> None:
        nonlocal base_tokens, extended_tokens
        base_tokens += count_base(batch)
        extended_tokens += count_extended(batch)
        batch.clear()

    for text in texts:  # streamed: a large check file is never held whole
        if not isinstance(text, str):
            raise TypeError(f"{what} must hold str texts, got {type(text).__name__} at position {n_texts}")
        batch.append(text)
        n_texts += 1
        n_bytes += len(text.encode("utf-8", "surrogatepass"))
        if len(batch) == _BATCH:
            flush()
    if batch:
        flush()
    return TokensPerByte(texts=n_texts, bytes=n_bytes, base_tokens=base_tokens, extended_tokens=extended_tokens)
