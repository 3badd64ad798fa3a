"""The measures of an evaluation report, as pure functions of counts (the definitions ``report.md`` quotes).

* **bytes**: the UTF-8 length of the text; **characters**: its code points (``len(str)``).
* **words**: maximal runs of characters that are not whitespace by Python's ``str.isspace`` (Unicode category Zs
  and the bidirectional classes B, S and WS, so also the ASCII separators U+001C-U+001F and U+0085), i.e.
  ``len(text.split())``. Scripts written without spaces (Chinese, Japanese, Thai) have few such words, so their
  fertility is large and says little.
* **fertility**: tokens per word.
* **Rényi efficiency** (Zouhar et al. 2023, "Tokenization and the Noiseless Channel"): the Rényi entropy of order
  alpha (2.5 by default, the order they found best correlated with BLEU) of the unigram distribution of the tokens
  produced, ``H_a(p) = log(sum_i p_i ** a) / (1 - a)``, divided by ``log |V|``, the largest entropy a distribution
  over the vocabulary can have. ``|V|`` is the tokenizer's vocabulary size, as in the paper; their package
  `tokenization-scorer` divides by the number of *distinct tokens observed* unless told the vocabulary size,
  which :func:`renyi_efficiency` gives too (``vocab_size=`` the observed count). Both lie in [0, 1].
* **parity**: a text's tokens divided by the tokens of a reference text (parallel texts: the same content in two
  languages), and the **Gini coefficient** of those ratios over all texts (reference included): 0 when every
  language costs the same, towards 1 when one language takes all the tokens. The Gini of ratios to any reference
  equals the Gini of the token counts themselves (it does not change with scale).

>>> count_words("Hello,  wide\\u00a0world\\n")
3
>>> round(renyi_efficiency([5, 5, 5, 5], vocab_size=4), 12), round(renyi_efficiency([5, 5, 5, 5], vocab_size=16), 12)
(1.0, 0.5)
>>> gini([2, 2, 2]), gini([0, 0, 3])
(0.0, 0.6666666666666666)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

__all__ = ["DEFAULT_ORDER", "count_words", "gini", "parity_ratios", "rate", "renyi_efficiency", "renyi_entropy",
           "split_documents", "text_sizes"]

DEFAULT_ORDER = 2.5


def rate(part: float, total: float) -> float | None:
    """Return ``part / total``, or None when ``total`` is 0."""
    return part / total if total else None


def count_words(text: str) -> int:
    """Return the number of whitespace-separated words of ``text`` (``len(text.split())``; see the module)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.80}")
    return len(text.split())


def text_sizes(text: str) -> tuple[int, int, int]:
    """Return ``(bytes, characters, words)`` of ``text`` (UTF-8 bytes; lone surrogates count as 3 bytes each).

    >>> text_sizes("día 1\\n")
    (7, 6, 2)
    """
    return len(text.encode("utf-8", "surrogatepass")), len(text), count_words(text)


def split_documents(text: str) -> list[str]:
    """Cut ``text`` after each ``\\n`` (only there: not at ``\\r``, U+0085 or U+2028 as ``str.splitlines`` does).

    Each line keeps its line end, so the pieces join back to ``text``; an empty text has no documents.

    >>> split_documents("a\\nb\\r\\n\\nc")
    ['a\\n', 'b\\r\\n', '\\n', 'c']
    """
    documents = [line + "\n" for line in text.split("\n")]
    documents[-1] = documents[-1][:-1]
    if not documents[-1]:
        documents.pop()
    return documents


def _checked_counts(counts: Iterable[int]) -> list[int]:
    values = [c for c in counts]
    for c in values:
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise ValueError(f"counts must be integers >= 0, got {c!r:.80}")
    return [c for c in values if c]


def renyi_entropy(counts: Iterable[int], *, order: float = DEFAULT_ORDER) -> float | None:
    """Return the Rényi entropy (natural log) of the distribution ``counts / sum(counts)``; None when it is empty.

    Order 1 is Shannon's entropy; order 0 the log of the number of outcomes.

    >>> renyi_entropy([1, 1]) == math.log(2)
    True
    """
    if not isinstance(order, (int, float)) or isinstance(order, bool) or not order >= 0 or math.isinf(order):
        raise ValueError(f"order must be a finite number >= 0, got {order!r}")
    values = _checked_counts(counts)
    total = sum(values)
    if not total:
        return None
    if order == 1:
        return -math.fsum(c / total * math.log(c / total) for c in values)
    if order == 0:
        return math.log(len(values))
    return math.log(math.fsum((c / total) ** order for c in values)) / (1 - order)


def renyi_efficiency(counts: Iterable[int], *, vocab_size: int, order: float = DEFAULT_ORDER) -> float | None:
    """Return ``renyi_entropy(counts) / log(vocab_size)``, in [0, 1]; None for no tokens or a vocabulary of one.

    ``counts`` are the occurrences of each distinct token (zeros ignored). Rounding can put the ratio of a uniform
    distribution a hair above 1; it is clipped to [0, 1].

    Raises:
        ValueError: when more distinct tokens are counted than ``vocab_size`` allows, or on a bad order or count.
    """
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 1:
        raise ValueError(f"vocab_size must be an integer >= 1, got {vocab_size!r}")
    values = _checked_counts(counts)
    if len(values) > vocab_size:
        raise ValueError(f"{len(values)} distinct tokens counted, more than vocab_size={vocab_size}")
    entropy = renyi_entropy(values, order=order)
    if entropy is None or vocab_size == 1:
        return None
    return min(1.0, max(0.0, entropy / math.log(vocab_size)))


def gini(values: Iterable[float]) -> float | None:
    """Return the Gini coefficient of non-negative ``values``: the mean absolute difference over twice the mean.

    0 when all are equal; ``(n - 1) / n`` when one holds everything. None for no values or all zero.

    >>> gini([1.0, 3.0])
    0.25
    """
    ordered = sorted(float(v) for v in values)
    if any(not v >= 0 or math.isinf(v) for v in ordered):
        raise ValueError(f"values must be finite numbers >= 0, got {ordered!r:.200}")
    n, total = len(ordered), math.fsum(ordered)
    if not n or not total:
        return None
    # sum_i sum_j |x_i - x_j| = 2 * sum_i (2i - n - 1) x_i over the values sorted ascending (i from 1).
    spread = math.fsum((2 * i - n - 1) * v for i, v in enumerate(ordered, start=1))
    return max(0.0, spread / (n * total))


def parity_ratios(tokens: Mapping[str, int], reference: str) -> dict[str, float | None]:
    """Return each text's tokens divided by the reference text's (None when the reference has no tokens).

    >>> parity_ratios({"en": 100, "fi": 150}, "en")
    {'en': 1.0, 'fi': 1.5}
    """
    if reference not in tokens:
        raise ValueError(f"the reference text {reference!r} is not one of the texts {sorted(tokens)!r}")
    base = tokens[reference]
    return {name: rate(count, base) for name, count in tokens.items()}
