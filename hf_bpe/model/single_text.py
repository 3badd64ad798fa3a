"""Encode one text in one compiled call, and a long one on every core: the body of ``BPEModel.encode_ordinary``.

A short text is scanned and encoded by ``WordEncoder.encode_text`` without a Python object per piece. A text of
``LONG_TEXT_CHARS`` characters or more (a book, a code file, a web page) is cut where every named pattern ends a
piece whether or not the text goes on (:mod:`hf_bpe.core.fragment`), into about ``_PARTS_PER_THREAD`` parts per
thread of at most ``_PART_MAX_CHARS`` characters, and the parts are encoded on threads without the GIL, the caller
helping; their ids, concatenated in order, are the one-thread ids. Custom regexes and vocabularies missing some
bytes keep the piece-list path.

>>> from hf_bpe.model.bpe import BPEModel
>>> model = BPEModel.bytes_only()
>>> encode_ordinary(model, "ab cd", None, "replace", part_chars=1) == model.encode_ordinary("ab cd")
True
"""

from __future__ import annotations

from typing import Any

from ..core.pretokenize import usable_cpus
from .tiktoken_compat import check_surrogates, encode_repairing, repair_surrogates

__all__ = ["LONG_TEXT_CHARS", "encode_ordinary", "encode_ordinary_array", "encode_batch", "encode_batch_arrays"]

# `model` below is a BPEModel (typed Any: bpe.py imports this module, and the layers allow no import cycle).

# From this length on a text is cut for threads (starting them and cutting cost ~0.1 ms: < 5 % of such a text).
LONG_TEXT_CHARS = 1 << 18
# Parts per thread: the caller turns part k into ints while the workers encode the next ones, and the threads'
# last parts end close together.
_PARTS_PER_THREAD = 4
# And at most this many characters a part: a part is scanned whole before it is encoded, so its text and its piece
# ends (8 bytes a piece, ~2 bytes a character of English) are read back from the caches only while the part is
# small. 10 MB of English, medians of 15 calls, 2.5 MB parts -> 128K: ASCII, GPT-2, one thread 13.7 -> 13.3 ms,
# two 7.7 -> 7.1 ms; with accents, o200k, one thread, a new str each call 17.6 -> 16.0 ms; 2 MB of Chinese alike.
_PART_MAX_CHARS = 1 << 17
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
    text = _checked(text, num_threads, surrogates)
    try:
        if part_chars or len(text) >= LONG_TEXT_CHARS or model._missing:
            return _encode(model, text, num_threads, part_chars)
        return model._pretokenizer.encode_text(text, model._encoder)  # the short-text hot path: one call
    except UnicodeEncodeError:
        if surrogates == "strict":
            raise
    # Only text without a UTF-8 form gets here: the fix-up costs valid text nothing (as in tiktoken).
    return _encode(model, repair_surrogates(text), num_threads, part_chars)


def _checked(text: Any, num_threads: Any, surrogates: Any) -> str:
    """The text as an exact str, after checking the arguments of encode_ordinary (raising its errors)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.80}")
    if type(text) is not str:
        text = str.__str__(text)  # a str subclass: its characters (the compiled calls take an exact str)
    if num_threads is not None:
        check_threads(num_threads)
    if surrogates != "replace":
        check_surrogates(surrogates)
    return text


def _encode(model: Any, text: str, num_threads: int | None, part_chars: int) -> list[int]:
    """The ids of a text with a UTF-8 form, as a list."""
    pre, encoder = model._pretokenizer, model._encoder
    if model._missing:  # a PartialBytesEncoder: encode_words only
        return encoder.encode_words(pre.split_bytes(text))
    return _call_cut(pre.encode_text, model, text, num_threads, part_chars)


def _encode_array(model: Any, text: str, num_threads: int | None, part_chars: int) -> Any:
    """The ids of a text with a UTF-8 form, as a TokenBuffer (named patterns, all 256 bytes in the vocabulary)."""
    return _call_cut(model._pretokenizer.encode_text_array, model, text, num_threads, part_chars)


def _call_cut(call: Any, model: Any, text: str, num_threads: int | None, part_chars: int) -> Any:
    """``call(text, encoder)``, with a long text (or ``part_chars``) cut into parts on the threads."""
    encoder = model._encoder
    if not part_chars and len(text) < LONG_TEXT_CHARS:
        return call(text, encoder)
    threads = usable_cpus() if num_threads is None else num_threads
    # One thread cuts too: the parts are encoded without the GIL, and with buffers a part long instead of a text
    # long (measured ~25 % faster on 10 MB of English than the whole text at once).
    part_chars = part_chars or min(len(text) // (threads * _PARTS_PER_THREAD), _PART_MAX_CHARS)
    return call(text, encoder, threads=threads, part_chars=part_chars)


def encode_ordinary_array(model: Any, text: str, num_threads: int | None, surrogates: str, *,
                          part_chars: int = 0) -> Any:
    """Return ``model.encode_ordinary_array(text, ...)``: the ids of :func:`encode_ordinary` as a numpy int32 array.

    Built in compiled code (no Python int per id), a long text cut onto threads as :func:`encode_ordinary` cuts it;
    custom regexes and vocabularies missing some bytes take the lists path. ``part_chars``: as there (tests).
    """
    import numpy as np  # here: `import hf_bpe` does not pay for numpy

    text = _checked(text, num_threads, surrogates)
    if model._missing or not model._pretokenizer.compiled:
        return np.array(encode_ordinary(model, text, num_threads, surrogates, part_chars=part_chars), dtype=np.int32)
    ids = encode_repairing(lambda part: _encode_array(model, part, num_threads, part_chars), text, surrogates,
                           repair_surrogates)
    return np.frombuffer(ids, dtype=np.int32)


def encode_batch(model: Any, texts: list[str], threads: int) -> list[list[int]]:
    """Encode a batch on ``threads`` threads (named patterns); a long text in a small batch is cut as above."""
    pre, encoder = model._pretokenizer, model._encoder
    found = _blank_long(texts, threads)
    if found is None:
        return pre.encode_batch(texts, encoder, threads=threads)
    long, short = found
    out = pre.encode_batch(short, encoder, threads=threads)
    for i in long:
        out[i] = _encode(model, texts[i], threads, 0)
    return out


def encode_batch_arrays(model: Any, texts: list[str], threads: int, eos_id: int) -> tuple[Any, Any]:
    """Encode a batch into (ids int32, offsets int64) buffers, as :func:`encode_batch` into lists (``eos_id`` >= 0:
    after every text): a long text in a small batch is cut onto the threads, its ids spliced in."""
    pre, encoder = model._pretokenizer, model._encoder
    found = _blank_long(texts, threads)
    if found is None:
        return pre.encode_batch_arrays(texts, encoder, threads=threads, eos_id=eos_id)
    long, short = found
    ids, offsets = pre.encode_batch_arrays(short, encoder, threads=threads, eos_id=eos_id)
    return _splice(ids, offsets, {i: _encode_array(model, texts[i], threads, 0) for i in long})


def _blank_long(texts: list[str], threads: int) -> tuple[list[int], list[str]] | None:
    """For a small batch on several threads that holds long texts: their indices and the batch with them blanked
    (they are encoded apart, cut onto the threads; the batch call still checks every other text). Else None."""
    if threads > 1 and len(texts) <= _FEW_TEXTS:
        long = [i for i, text in enumerate(texts) if isinstance(text, str) and len(text) >= LONG_TEXT_CHARS]
        if long:
            short = list(texts)
            for i in long:
                short[i] = ""
            return long, short
    return None


def _splice(ids: Any, offsets: Any, inserted: dict[int, Any]) -> tuple[Any, Any]:
    """Put the ids `inserted[i]` at the start of text i's (empty or EOS-only) span: new (ids, offsets) arrays."""
    import numpy as np

    flat, starts = np.frombuffer(ids, dtype=np.int32), np.frombuffer(offsets, dtype=np.int64)
    parts, prev = [], 0
    grown = np.zeros(len(starts), dtype=np.int64)  # grown[i + 1]: ids added to text i
    for i in sorted(inserted):
        at = int(starts[i])
        extra = np.frombuffer(inserted[i], dtype=np.int32)
        parts += [flat[prev:at], extra]
        prev = at
        grown[i + 1] = len(extra)
    parts.append(flat[prev:])
    return np.concatenate(parts), starts + np.cumsum(grown)
