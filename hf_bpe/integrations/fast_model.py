"""The ``BPEModel`` of a `transformers` fast tokenizer: what ``AutoTokenizer`` returns for a default hf_bpe folder.

A default folder names ``PreTrainedTokenizerFast`` (it loads everywhere), so the tokenizer a user holds is often
the fast class, not ``HFBPETokenizer``; hf_bpe's functions that take a tokenizer read its ``tokenizer.json`` (the
backend's current state, added tokens included) as :meth:`BPEModel.load` reads a folder. `transformers` is not
imported here.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..model.bpe import BPEModel

__all__ = ["fast_tokenizer_model"]


def fast_tokenizer_model(tokenizer: Any) -> BPEModel | None:
    """Return the model of a fast tokenizer (an object with a ``backend_tokenizer``), None for anything else.

    Raises:
        ValueError: for a fast tokenizer whose ``tokenizer.json`` is not a byte-level BPE (what ``BPEModel.load``
            refuses, naming it).

    >>> fast_tokenizer_model("not a tokenizer") is None
    True
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not hasattr(backend, "to_str"):
        return None
    with tempfile.TemporaryDirectory(prefix="hf_bpe_") as folder:
        Path(folder, "tokenizer.json").write_text(backend.to_str(), encoding="utf-8")
        return BPEModel.load(folder)
