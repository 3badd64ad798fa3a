"""Evaluate tokenizers on named texts: sizes, tokens, fertility, Rényi efficiency, vocabulary use, parity.

:func:`evaluate` (CLI ``hf-bpe evaluate``) loads each tokenizer with the reader that knows its format
(``subjects``), measures it on each text (``measures``: pure functions, the definitions), and writes
``report.json``, ``report.md`` (``markdown``), ``report.png`` (``chart``, with matplotlib) and ``report.html``
(``html``: sample lines split into tokens, side by side).

>>> from hf_bpe.tools.evaluate import gini, renyi_efficiency
>>> gini([1.0, 1.0]), renyi_efficiency([1, 1], vocab_size=2)
(0.0, 1.0)
"""

from __future__ import annotations

from .measures import count_words, gini, parity_ratios, renyi_efficiency, renyi_entropy, split_documents, text_sizes
from .run import REPORT_FILES, evaluate

__all__ = ["REPORT_FILES", "count_words", "evaluate", "gini", "parity_ratios", "renyi_efficiency", "renyi_entropy",
           "split_documents", "text_sizes"]
