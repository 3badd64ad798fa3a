"""The names hf_bpe takes from transformers, under transformers 5.x and 4.x (>= 4.46).

transformers 5 renamed ``PretrainedConfig`` to ``PreTrainedConfig`` and moved the Python tokenizer base class
from ``tokenization_utils`` to ``tokenization_python`` (``PythonBackend``); everything else hf_bpe uses kept its
name. ``MAJOR`` lets the few behaviours that differ branch on the installed major version.
"""

from __future__ import annotations

from typing import Any

import transformers

try:  # transformers 5
    from transformers.configuration_utils import PreTrainedConfig
except ImportError:  # transformers 4
    from transformers.configuration_utils import PretrainedConfig as PreTrainedConfig
try:
    from transformers.tokenization_python import PreTrainedTokenizer
except ImportError:
    from transformers.tokenization_utils import PreTrainedTokenizer

__all__ = ["MAJOR", "PreTrainedConfig", "PreTrainedTokenizer", "Transformers4BatchMixin", "register_with_auto"]

MAJOR = int(transformers.__version__.split(".")[0])


def register_with_auto(config: type, tokenizer: type) -> None:
    """Make ``AutoTokenizer`` return ``tokenizer`` for folders whose config names it (idempotent): transformers 5
    registers any tokenizer class, transformers 4 a Python one as the "slow" class."""
    # Imported here: importing the auto module fires hf_bpe's import hook, which registers through this function.
    from transformers.models.auto.tokenization_auto import AutoTokenizer

    if MAJOR >= 5:
        AutoTokenizer.register(config, tokenizer_class=tokenizer, exist_ok=True)
    else:
        AutoTokenizer.register(config, slow_tokenizer_class=tokenizer, exist_ok=True)


class Transformers4BatchMixin:
    """Route transformers 4's batch entry point to ``_encode_plus``, which takes batches as transformers 5 passes
    them (texts and pairs as lists)."""

    def _batch_encode_plus(self, batch_text_or_text_pairs: Any, **kwargs: Any) -> Any:
        """transformers 4's batch entry point: the batch as texts (and pairs) through :meth:`_encode_plus`, as
        transformers 5 passes it (unused there)."""
        items = list(batch_text_or_text_pairs)
        words = kwargs.get("is_split_into_words")
        paired = any(isinstance(item, (list, tuple)) and not (words and not isinstance(item[0], (list, tuple)))
                     for item in items)
        if not paired:
            return self._encode_plus(items, None, **kwargs)  # type: ignore[attr-defined]
        if not all(isinstance(item, (list, tuple)) and len(item) == 2 for item in items):
            return super()._batch_encode_plus(items, **kwargs)  # type: ignore[misc]
        return self._encode_plus(  # type: ignore[attr-defined]
            [item[0] for item in items], [item[1] for item in items], **kwargs)
