"""Decode a stream of token ids to text, holding back the bytes of an incomplete UTF-8 character."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Protocol

__all__ = ["IncrementalDecoder"]


class _DecodesBytes(Protocol):
    def decode_bytes(self, ids: Iterable[int]) -> bytes: ...


class IncrementalDecoder:
    """Decode a stream of token ids to text, holding back bytes of an incomplete UTF-8 character.

    Joining the outputs of :meth:`decode` over any split of the ids, with ``final=True`` on the last call, gives
    exactly ``model.decode(all_ids, errors=errors)``.

    Args:
        model: the model whose tokens are decoded (a ``BPEModel``).
        errors: UTF-8 error handling, as in :meth:`bytes.decode`.
    """

    def __init__(self, model: _DecodesBytes, *, errors: str = "replace") -> None:
        self._model = model
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def decode(self, ids: Iterable[int], *, final: bool = False) -> str:
        """Return the text that the ids complete; with ``final``, flush what is held back."""
        return self._decoder.decode(self._model.decode_bytes(ids), final=final)

    def reset(self) -> None:
        """Forget held-back bytes, to start a new stream."""
        self._decoder.reset()
