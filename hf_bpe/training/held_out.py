"""A corpus cut into training and held-out documents as it streams, by a rule that needs only each document's index.

``hf-bpe compare`` holds out documents by :func:`is_heldout`; ``hf-bpe extend`` trains on :class:`HeldOutSplit`'s
training documents and reports tokens per byte on the held-out ones, and its manifest records the fraction and the
seed, so that ``hf-bpe verify`` cuts the corpus it is given the same way before re-extending.

>>> [i for i in range(20) if is_heldout(i, fraction=0.25, seed=0)]
[1, 4, 5, 18]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .corpus import iter_texts

__all__ = ["HeldOutSplit", "is_heldout", "splitmix64"]

_MASK64 = 2**64 - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def is_heldout(index: int, *, fraction: float, seed: int = 0) -> bool:
    """Say whether document ``index`` (0-based, over the whole corpus) belongs to the held-out split.

    The choice is ``splitmix64(splitmix64(seed) ^ index) < fraction * 2**64``: stable across machines and Python
    versions, streaming (it needs only the index), and independent of every other document.

    >>> sum(is_heldout(i, fraction=0.1, seed=1) for i in range(10_000))
    997
    """
    return splitmix64(splitmix64(seed & _MASK64) ^ index) < int(fraction * 2**64)


class _Texts:
    """A corpus as texts, read again on each pass (``iter_texts``: a file's lines with their ``\\n``)."""

    def __init__(self, corpus: Any, text_column: str) -> None:
        self.corpus, self.text_column = corpus, text_column

    def __iter__(self) -> Iterator[str]:
        return iter_texts(self.corpus, text_column=self.text_column)


@dataclass
class HeldOutSplit:
    """A corpus cut into training and held-out texts as it streams: iterating yields the training texts and
    collects the held-out ones in :attr:`held_out` (refilled on each pass).

    Document ``i`` (0-based, in the order the texts come) is held out when
    ``is_heldout(i, fraction=fraction, seed=seed)``: stable across machines and runs, independent of the other
    documents, the rule ``hf-bpe compare`` uses.

    Args:
        texts: the corpus as texts (e.g. ``hf_bpe.training.corpus.iter_texts(paths)``); iterated once per pass.
        fraction: the share of documents held out, in [0, 1).
        seed: picks which documents.

    >>> split = HeldOutSplit([f"text {i}" for i in range(20)], fraction=0.25)
    >>> len(list(split)), split.held_out
    (16, ['text 1', 'text 4', 'text 5', 'text 18'])
    """

    texts: Iterable[str]
    fraction: float = 0.01
    seed: int = 0
    held_out: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if isinstance(self.fraction, bool) or not isinstance(self.fraction, int | float) or \
                not 0 <= self.fraction < 1:
            raise ValueError(f"fraction must be a number in [0, 1) (the share of documents held out), "
                             f"got {self.fraction!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise TypeError(f"seed must be an int, got {self.seed!r}")

    def __iter__(self) -> Iterator[str]:
        self.held_out.clear()
        for index, text in enumerate(self.texts):
            if is_heldout(index, fraction=self.fraction, seed=self.seed):
                self.held_out.append(text)
            else:
                yield text

    @classmethod
    def of_corpus(cls, corpus: Any, *, text_column: str = "text", fraction: float = 0.01, seed: int = 0) -> HeldOutSplit:
        """Return the split of any corpus :func:`hf_bpe.train` reads (paths: each line with its ``\\n`` one
        document, as training reads them; a dataset's ``text_column``; texts), read again on each pass.

        >>> split = HeldOutSplit.of_corpus([f"text {i}" for i in range(20)], fraction=0.25)
        >>> len(list(split)), len(list(split)), split.held_out[:2]
        (16, 16, ['text 1', 'text 4'])
        """
        return cls(_Texts(corpus, text_column), fraction=fraction, seed=seed)
