"""Encode one text in one compiled call, and a long one on every core: the body of ``BPEModel.encode_ordinary``.

A short text is scanned and encoded by ``WordEncoder.encode_text`` without a Python object per piece. A text of
``LONG_TEXT_CHARS`` characters or more (a book, a code file, a web page) is cut where every named pattern ends a
piece whether or not the text goes on (:mod:`hf_bpe.core.fragment`), into about ``_PARTS_PER_THREAD`` parts per
thread, and the parts are encoded on threads without the GIL, the caller helping; their ids, concatenated in order,
are the one-thread ids. Custom regexes and vocabularies missing some bytes keep the piece-list path.

>>> from hf_bpe.model.bpe import BPEModel
>>> model = BPEModel.bytes_only()
>>> encode_ordinary(model, "ab cd", None, "replace", part_chars=1) == model.encode_ordinary("ab cd")
True
"""

from __future__ import annotations

from typing import Any

from ..core.pretokenize import usable_cpus
from .tiktoken_compat import check_surrogates, repair_surrogates

__all__ = ["LONG_TEXT_CHARS", "encode_ordinary", "encode_batch"]

# `model` below is a BPEModel (typed Any: bpe.py imports this module, and the layers allow no import cycle).

# From this length on a text is cut for threads (starting them and cutting cost ~0.1 ms: < 5 % of such a text).
LONG_TEXT_CHARS = 1 << 18
# Parts per thread: the caller turns part k into ints while the workers encode the next ones, and the threads'
# last parts end close together.
_PARTS_PER_THREAD = 4
# Batches of at most this many texts are checked for long texts (a check per text would cost big batches of short
# texts more than it saves; their texts already spread over the threads).
_FEW_TEXTS = 1024


def check_threads(num_threads: Any) -> None:
    """Raise ValueError unless ``num_threads`` is None or a positive int."""
    if num_threads is not None and (type(num_threads) is not int or num_threads < 1):
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r:.80}")


def encode_ordinary(model: Any, text: str, num_threads: int | None, surrogates: str, *,
                    part_chars: int = 0) -> list[int]:
    """Return ``model.encode_ordinary(text, num_threads=..., surrogates=...)``.

    ``part_chars`` (tests only): cut the text near every ``part_chars`` characters whatever its length.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.80}")
    if type(text) is not str:
        text = str.__str__(text)  # a str subclass: its characters (the compiled calls take an exact str)
    if num_threads is not None:
        check_threads(num_threads)
    if surrogates != "replace":
        check_surrogates(surrogates)
    try:
        if part_chars or len(text) >= LONG_TEXT_CHARS or model._missing:
            return _encode(model, text, num_threads, part_chars)
        return model._pretokenizer.encode_text(text, model._encoder)  # the short-text hot path: one call
    except UnicodeEncodeError:
        if surrogates == "strict":
            raise
    # Only text without a UTF-8 form gets here: the fix-up costs valid text nothing (as in tiktoken).
    return _encode(model, repair_surrogates(text), num_threads, part_chars)


def _encode(model: Any, text: str, num_threads: int | None, part_chars: int) -> list[int]:
    pre, encoder = model._pretokenizer, model._encoder
    if model._missing:  # a PartialBytesEncoder: encode_words only
        return encoder.encode_words(pre.split_bytes(text))
    if not part_chars and len(text) < LONG_TEXT_CHARS:
        return pre.encode_text(text, encoder)
    threads = usable_cpus() if num_threads is None else num_threads
    # One thread cuts too: the parts are encoded without the GIL, and with buffers a part long instead of a text
    # long (measured ~25 % faster on 10 MB of English than the whole text at once).
    return pre.encode_text(text, encoder, threads=threads,
                           part_chars=part_chars or len(text) // (threads * _PARTS_PER_THREAD))


def encode_batch(model: Any, texts: list[str], threads: int) -> list[list[int]]:
    """Encode a batch on ``threads`` threads (named patterns); a long text in a small batch is cut as above."""
    pre, encoder = model._pretokenizer, model._encoder
    if threads > 1 and len(texts) <= _FEW_TEXTS:
        long = [i for i, text in enumerate(texts) if isinstance(text, str) and len(text) >= LONG_TEXT_CHARS]
        if long:
            short = list(texts)
            for i in long:
                short[i] = ""  # encoded below; the batch call still checks every other text
            out = pre.encode_batch(short, encoder, threads=threads)
            for i in long:
                out[i] = _encode(model, texts[i], threads, 0)
            return out
    return pre.encode_batch(texts, encoder, threads=threads)
