"""hf_bpe: byte-level BPE tokenizers trained from scratch, equal to `tokenizers`, first-class in transformers.

>>> import hf_bpe
>>> model = hf_bpe.train(["hello world"] * 4, vocab_size=260, show_progress=False)
>>> model.decode(model.encode("hello"))
'hello'

``HFBPETokenizer`` (the `transformers` tokenizer) is imported on first use, so that ``import hf_bpe`` and the
``hf-bpe`` command stay fast; ``AutoTokenizer`` finds it as soon as `transformers` loads its auto classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .compare import compare
from .hf_config import install_import_hook as _install_import_hook
from .manifest import CorpusFingerprint, verify
from .model import BPEModel, DisallowedSpecialTokenError
from .pretokenize import PATTERNS, Pretokenizer
from .trainer import train

if TYPE_CHECKING:
    from .hf_tokenizer import HFBPETokenizer

__version__ = "0.1.0"
__all__ = [
    "BPEModel",
    "CorpusFingerprint",
    "DisallowedSpecialTokenError",
    "HFBPETokenizer",
    "PATTERNS",
    "Pretokenizer",
    "compare",
    "train",
    "verify",
    "__version__",
]

# AutoTokenizer finds HFBPETokenizer from here on, whichever of hf_bpe and transformers is imported first.
_install_import_hook()

def __getattr__(name: str) -> Any:
    # Lazy: importing transformers costs over a second.
    if name == "HFBPETokenizer":
        from .hf_tokenizer import HFBPETokenizer

        return HFBPETokenizer
    raise AttributeError(f"module 'hf_bpe' has no attribute {name!r}")
