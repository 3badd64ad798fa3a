"""A batch's token ids as flat arrays (numpy, Arrow) built in compiled code: no Python list per text or per id.

:class:`TokenArrays` is a base class of :class:`~hf_bpe.model.bpe.BPEModel` (kept here: ``bpe.py`` is at its size
limit). The compiled path encodes the batch on threads without the GIL into one ``int32`` vector of ids and one
``int64`` vector of offsets (``TokenBuffer``), which numpy and pyarrow view without a copy; the ids are those of
``encode_ordinary_batch``, text for text (held by ``tests/test_token_arrays.py``).

>>> from hf_bpe import BPEModel
>>> ids, offsets = BPEModel.bytes_only().encode_ordinary_batch_arrays(["hi", "", "!"])
>>> ids.tolist(), offsets.tolist()
([104, 105, 33], [0, 2, 2, 3])
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..core.pretokenize import usable_cpus
from . import single_text
from .single_text import check_threads
from .tiktoken_compat import Surrogates, encode_repairing, repair_each

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["TokenArrays", "check_batch"]

_INT32_MAX = 2**31 - 1


class TokenArrays:
    """Batch encoding into flat arrays; mixed into ``BPEModel`` (uses its encoder, pre-tokenizer and lists path)."""

    def encode_ordinary_batch_arrays(self, texts: Sequence[str], *, num_threads: int | None = None,
                                     surrogates: Surrogates = "replace",
                                     eos_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Encode each text as :meth:`encode_ordinary_batch` does, into a flat id array and an offset array.

        The arrays are made in compiled code and handed to numpy without a copy (no Python list per text or id).

        Args:
            texts: the texts.
            num_threads: as in :meth:`encode_ordinary_batch`; the ids never depend on it.
            surrogates: as in :meth:`encode_ordinary`.
            eos_id: if given, this id is appended after every text's ids (counted in its length): the end-of-text
                separator of packed training data.

        Returns:
            ``(ids, offsets)``: every text's ids end to end (``int32``), and ``offsets`` (``int64``, one more entry
            than texts) with text ``i``'s ids at ``ids[offsets[i]:offsets[i + 1]]``.

        >>> from hf_bpe import BPEModel
        >>> ids, offsets = BPEModel.bytes_only().encode_ordinary_batch_arrays(["hi", "!"], eos_id=0)
        >>> ids.tolist(), offsets.tolist()
        ([104, 105, 0, 33, 0], [0, 3, 5])
        """
        ids, offsets = self._encode_arrays(texts, num_threads, surrogates, eos_id)
        import numpy as np  # here, not at the top: `import hf_bpe` and the CLI's start-up do not pay for numpy

        return np.frombuffer(ids, dtype=np.int32), np.frombuffer(offsets, dtype=np.int64)

    def encode_ordinary_array(self, text: str, *, num_threads: int | None = None,
                              surrogates: Surrogates = "replace") -> np.ndarray:
        """Encode one text as :meth:`encode_ordinary` does, into a numpy ``int32`` array.

        The array is made in compiled code (no Python int per id) and handed to numpy without a copy; a long text
        is cut onto threads as :meth:`encode_ordinary` cuts it. Custom regexes and vocabularies without some byte
        tokens take the lists path (same ids). When a long output's array is freed, its memory (one buffer, of at
        most 64 MiB) is kept for the next long output, whose pages are then not mapped and zeroed again.

        Args:
            text: the text.
            num_threads: as in :meth:`encode_ordinary`; the ids never depend on it.
            surrogates: as in :meth:`encode_ordinary`.

        >>> from hf_bpe import BPEModel
        >>> BPEModel.bytes_only().encode_ordinary_array("hi!").tolist()
        [104, 105, 33]
        """
        return single_text.encode_ordinary_array(self, text, num_threads, surrogates)

    def encode_ordinary_batch_arrow(self, texts: Sequence[str], *, num_threads: int | None = None,
                                    surrogates: Surrogates = "replace", eos_id: int | None = None) -> pa.ListArray:
        """Encode each text as :meth:`encode_ordinary_batch_arrays` does, as a ``pyarrow.ListArray`` of ``int32``.

        The ids buffer is the compiled encoder's, not copied (only the offsets are narrowed to ``int32``), ready for
        a ``pyarrow.Table`` or a batched ``datasets`` ``map``.

        Raises:
            ValueError: the batch has 2**31 ids or more (beyond a ``ListArray``'s offsets): encode smaller batches.

        >>> from hf_bpe import BPEModel
        >>> BPEModel.bytes_only().encode_ordinary_batch_arrow(["hi", "!"]).to_pylist()
        [[104, 105], [33]]
        """
        import numpy as np
        import pyarrow as pa

        ids, offsets = self._encode_arrays(texts, num_threads, surrogates, eos_id)
        wide = np.frombuffer(offsets, dtype=np.int64)
        if wide[-1] > _INT32_MAX:
            raise ValueError(f"the batch of {len(wide) - 1} texts has {int(wide[-1])} ids, more than a ListArray's "
                             f"int32 offsets hold ({_INT32_MAX}); encode it in smaller batches")
        values = pa.Array.from_buffers(pa.int32(), len(ids), [None, pa.py_buffer(ids)])
        narrow = pa.py_buffer(wide.astype(np.int32))
        return pa.Array.from_buffers(pa.list_(pa.int32()), len(wide) - 1, [None, narrow], children=[values])

    def _encode_arrays(self, texts: Sequence[str], num_threads: int | None, surrogates: Surrogates,
                       eos_id: int | None) -> tuple[Any, Any]:
        """The batch as two buffers (ids int32, offsets int64), compiled when the model allows, else from lists."""
        model: Any = self
        check_batch(texts, num_threads)
        if eos_id is not None and (type(eos_id) is not int or not 0 <= eos_id < _INT32_MAX):
            raise ValueError(f"eos_id must be None or a token id (an int from 0 to {_INT32_MAX - 1}), got "
                             f"{eos_id!r:.80}")
        if model._missing or not model._pretokenizer.compiled:
            # The lists path (a custom regex, or a vocabulary without some byte tokens), made flat once.
            lists = model.encode_ordinary_batch(texts, num_threads=num_threads, surrogates=surrogates)
            return _flatten(lists, eos_id)
        threads = usable_cpus() if num_threads is None else num_threads
        eos = -1 if eos_id is None else eos_id
        return encode_repairing(lambda batch: single_text.encode_batch_arrays(model, batch, threads, eos),
                                texts if type(texts) is list else list(texts), surrogates, repair_each)


def check_batch(texts: Sequence[str], num_threads: int | None) -> None:
    """Refuse one str as a batch, and a thread count that is not a positive int or None."""
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, got one str; wrap it in a list: [text]")
    check_threads(num_threads)


def _flatten(lists: list[list[int]], eos_id: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ids as (ids int32, offsets int64), ``eos_id`` after each list when given."""
    import numpy as np

    extra = 0 if eos_id is None else 1
    lengths = np.fromiter((len(ids) + extra for ids in lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rows = lists if eos_id is None else ([*ids, eos_id] for ids in lists)
    ids = np.fromiter(chain.from_iterable(rows), dtype=np.int32, count=int(offsets[-1]))
    return ids, offsets
