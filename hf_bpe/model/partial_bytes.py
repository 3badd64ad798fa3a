"""Encoding with a vocabulary that lacks some byte tokens, as `tokenizers`' BPE does (toy and character-level
vocabularies that ``GPT2TokenizerFast`` loads)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core import _core

__all__ = ["PartialBytesEncoder"]


class PartialBytesEncoder:
    """The word encoder of a vocabulary missing some bytes, as `tokenizers`' ``BPE::merge_word`` treats them.

    A byte without a token is left out of the word (so its neighbours become adjacent and may merge), or, with an
    unk token, becomes that id and splits the word (no merge crosses it). Only words holding such a byte take the
    slow path.
    """

    __slots__ = ("_inner", "_missing", "_unk", "_fuse", "_whole")

    def __init__(self, inner: _core.WordEncoder, missing: bytes, unk_id: int | None, fuse: bool,
                 whole_words: Mapping[bytes, int] | None) -> None:
        self._inner, self._missing, self._unk, self._fuse, self._whole = inner, missing, unk_id, fuse, whole_words

    def encode_word(self, word: bytes) -> list[int]:
        if word.translate(None, self._missing) == word:  # no missing byte: the compiled path
            return self._inner.encode_word(word)
        if self._whole is not None and word in self._whole:  # ignore_merges: tokenizers looks the word up first
            return [self._whole[word]]
        if self._unk is None:
            return self._inner.encode_word(word.translate(None, self._missing))
        ids: list[int] = []
        start = 0
        for position, byte in enumerate(word):
            if byte in self._missing:
                if start < position:
                    ids += self._inner.encode_word(word[start:position])
                if not (self._fuse and ids and ids[-1] == self._unk and start == position):
                    ids.append(self._unk)
                start = position + 1
        if start < len(word):
            ids += self._inner.encode_word(word[start:])
        return ids

    def encode_words(self, words: Iterable[bytes]) -> list[int]:
        ids: list[int] = []
        for word in words:
            ids += self.encode_word(word)
        return ids

    def encode_word_spans(self, word: bytes, length_of: Any) -> list[tuple[int, int, int]]:
        """``(id, first byte, end byte)`` of each token of ``word``, the spans in ``word``'s own bytes."""
        spans: list[tuple[int, int, int]] = []
        if self._whole is not None and word in self._whole:
            return [(self._whole[word], 0, len(word))]
        if self._unk is None:
            # tokenizers measures a symbol's offsets by the lengths of the symbols before it: a dropped byte
            # takes no room, so the tokens after it are reported shifted left (as the fast tokenizer does).
            at = 0
            for token_id in self._inner.encode_word(word.translate(None, self._missing)):
                spans.append((token_id, at, at + length_of(token_id)))
                at += length_of(token_id)
            return spans
        start = 0
        for position in [*(i for i, byte in enumerate(word) if byte in self._missing), len(word)]:
            at = start
            for token_id in self._inner.encode_word(word[start:position]) if start < position else []:
                spans.append((token_id, at, at + length_of(token_id)))
                at += length_of(token_id)
            if position < len(word):
                if self._fuse and spans and spans[-1][0] == self._unk and spans[-1][2] == position:
                    spans[-1] = (self._unk, spans[-1][1], position + 1)
                else:
                    spans.append((self._unk, position, position + 1))
            start = position + 1
        return spans
