"""Decode a stream of token ids to text, holding back the bytes of an incomplete UTF-8 character."""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from typing import Protocol

__all__ = ["IncrementalDecoder"]


class _DecodesBytes(Protocol):
    def decode_bytes(self, ids: Iterable[int]) -> bytes: ...

    @property
    def special_tokens(self) -> Mapping[str, int]: ...


def _check_ids(ids: object, what: str) -> None:
    # bytes and str iterate as ints and characters: almost always a mistake for a list of ids.
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"{what} must be token ids (a list of int), got {type(ids).__name__} {ids!r:.80}; "
                        "encode text with the model first")


class IncrementalDecoder:
    """Decode a stream of token ids to text, holding back bytes of an incomplete UTF-8 character.

    Two ways to read the stream, which may be mixed:

    - :meth:`decode` returns every character the ids complete, at once;
    - :meth:`step` is `tokenizers`' ``DecodeStream.step``: it returns text only when the text since the last text
      it returned does not end with U+FFFD (an incomplete character, an invalid byte, or U+FFFD itself), else
      ``None``; what it holds back comes out with a later :meth:`step` or :meth:`decode`.

    Joining every text returned, with ``decode([], final=True)`` last, gives exactly
    ``model.decode(prefill + ids, errors=errors)`` less the text of the prefill's complete characters: the prefill
    is the prompt, already shown; the bytes of a character it leaves incomplete come out with the character.

    Where the prefill's text does not end with U+FFFD, :meth:`step` returns what ``DecodeStream(ids=prefill,
    skip_special_tokens=...)`` returns, step for step, on the model's ``tokenizer.json``. Where it does (a prefill
    that ends inside a character), ``DecodeStream``'s first text repeats the whole prefill's text; this one does not.
    ``DecodeStream`` also never returns text that ends with U+FFFD at the end of a stream; ``decode([], final=True)``
    returns it.

    Args:
        model: the model whose tokens are decoded (a ``BPEModel``).
        errors: UTF-8 error handling, as in :meth:`bytes.decode` (``DecodeStream`` replaces).
        prefill: ids whose text has been shown (the prompt): they give the context the stream continues.
        skip_special_tokens: leave the model's special tokens out of the text.

    >>> from hf_bpe import BPEModel
    >>> stream = BPEModel.bytes_only().incremental_decoder(prefill=[0x61, 0xE4])
    >>> stream.step(0xBD), stream.step([0xA0, 0x21])
    (None, '你!')
    """

    def __init__(self, model: _DecodesBytes, *, errors: str = "replace", prefill: Iterable[int] = (),
                 skip_special_tokens: bool = False) -> None:
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(f"skip_special_tokens must be a bool, got {skip_special_tokens!r:.80}")
        _check_ids(prefill, "prefill")
        self._model = model
        self._skip = frozenset(model.special_tokens.values()) if skip_special_tokens else frozenset()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)
        self._held: list[str] = []  # text that step() decoded and has not returned yet (non-empty strings)
        self._feed(prefill, False)  # shown already: only an incomplete last character stays behind

    def _feed(self, ids: Iterable[int], final: bool) -> str:
        if self._skip:
            ids = [i for i in ids if i not in self._skip]
        return self._decoder.decode(self._model.decode_bytes(ids), final=final)

    def decode(self, ids: Iterable[int], *, final: bool = False) -> str:
        """Return the text that the ids complete (with what :meth:`step` held back); with ``final``, flush."""
        text = self._feed(ids, final)
        if self._held:
            text = "".join(self._held) + text
            self._held.clear()
        return text

    def step(self, ids: int | Iterable[int]) -> str | None:
        """Add the next id (or ids) and return the text since the last text returned, or ``None`` while it would
        end with U+FFFD or is empty (as ``DecodeStream.step``).

        >>> from hf_bpe import BPEModel
        >>> stream = BPEModel.bytes_only().incremental_decoder()
        >>> [stream.step(i) for i in [0x68, 0xF0, 0x9F, 0x91, 0x8D]]
        ['h', None, None, None, '👍']
        """
        _check_ids(ids, "ids")
        text = self._feed([ids] if isinstance(ids, int) else ids, False)
        if text:
            self._held.append(text)
        # The text so far ends with U+FFFD when bytes of a character are pending (decode(final=True) would replace
        # them) or when the last decoded character is one.
        if not self._held or self._decoder.getstate()[0] or self._held[-1].endswith("\ufffd"):
            return None
        text = "".join(self._held)
        self._held.clear()
        return text

    def reset(self) -> None:
        """Forget held-back bytes and text, to start a new stream (without a prefill)."""
        self._decoder.reset()
        self._held.clear()

    def __copy__(self) -> IncrementalDecoder:
        # A copy continues the stream on its own (DecodeStream's copy): it needs its own codec state.
        twin = object.__new__(IncrementalDecoder)
        twin.__dict__.update(self.__dict__)
        twin._decoder = codecs.getincrementaldecoder("utf-8")(errors=self._decoder.errors)
        twin._decoder.setstate(self._decoder.getstate())
        twin._held = list(self._held)
        return twin

    def __deepcopy__(self, memo: dict) -> IncrementalDecoder:
        return self.__copy__()  # the model is immutable: shared, as DecodeStream shares nothing but its state
