"""hf_bpe: byte-level BPE tokenizers trained from scratch, equal to `tokenizers`, first-class in transformers.

>>> import hf_bpe
>>> model = hf_bpe.train(["hello world"] * 4, vocab_size=260, show_progress=False)
>>> model.decode(model.encode("hello"))
'hello'

``HFBPETokenizer`` (the `transformers` tokenizer) is imported on first use, so that ``import hf_bpe`` and the
``hf-bpe`` command stay fast; ``AutoTokenizer`` finds it as soon as `transformers` loads its auto classes.
The layers and where each thing lives are described in ARCHITECTURE.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .core.patterns import PATTERNS
from .core.pretokenize import Pretokenizer
from .errors import DisallowedSpecialTokenError, InputError
from .formats.manifest import CorpusFingerprint
from .integrations.auto_register import install_import_hook as _install_import_hook
from .model.bpe import BPEModel
from .model.classic import ClassicModel
from .tools.compare import compare
from .tools.verify import verify
from .training.bpe_trainer import train
from .training.recipes import RECIPES
from .training.scheme import train_scheme

if TYPE_CHECKING:
    from .integrations.hf_tokenizer import HFBPETokenizer

__all__ = [
    "BPEModel",
    "ClassicModel",
    "CorpusFingerprint",
    "DisallowedSpecialTokenError",
    "HFBPETokenizer",
    "InputError",
    "PATTERNS",
    "RECIPES",
    "Pretokenizer",
    "compare",
    "train",
    "train_scheme",
    "verify",
    "__version__",
]

# AutoTokenizer finds HFBPETokenizer from here on, whichever of hf_bpe and transformers is imported first.
_install_import_hook()


def __getattr__(name: str) -> Any:
    # Lazy: importing transformers costs over a second.
    if name == "HFBPETokenizer":
        from .integrations.hf_tokenizer import HFBPETokenizer

        return HFBPETokenizer
    raise AttributeError(f"module 'hf_bpe' has no attribute {name!r}")
