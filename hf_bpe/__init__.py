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

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .integrations.auto_register import install_import_hook as _install_import_hook

if TYPE_CHECKING:
    from .core.patterns import PATTERNS
    from .core.pretokenize import Pretokenizer
    from .errors import DisallowedSpecialTokenError, InputError
    from .formats.manifest import CorpusFingerprint
    from .formats.token_file import read_token_file
    from .integrations.embeddings import new_token_embeddings
    from .integrations.hf_tokenizer import HFBPETokenizer
    from .integrations.file_tokenize import tokenize_files
    from .integrations.preprocess import save_tokenized, tokenize_dataset
    from .integrations.sentencepiece_hf import save_sentencepiece
    from .integrations.sentencepiece_tokenizer import HFSentencePieceTokenizer
    from .model.bpe import BPEModel
    from .model.classic import ClassicModel
    from .model.unigram import UnigramModel
    from .tools.compare import compare
    from .tools.evaluate import evaluate
    from .tools.extend import extend
    from .tools.extension_report import ExtensionReport, extension_report
    from .tools.verify import verify
    from .training.bpe.trainer import train, train_from_counts
    from .training.parity.parity import train_parity
    from .training.counts import WordCounts
    from .training.held_out import HeldOutSplit
    from .training.classic.recipes import RECIPES
    from .training.classic.scheme import train_scheme
    from .training.classic.train import train_classic
    from .training.sentencepiece.extend import extend_sentencepiece
    from .training.sentencepiece.trainer import train_sentencepiece
    from .training.unigram.train import train_unigram
    from .training.bpe.superbpe import train_superbpe

# The public API: name -> the module that defines it. Loaded on first use (PEP 562), so that `import hf_bpe` costs
# a few milliseconds and a child process that needs one submodule (e.g. compare's peer trainers, whose memory is
# measured) does not load the compiled core, `regex` or `transformers`.
_EXPORTS = {
    "BPEModel": ".model.bpe",
    "ClassicModel": ".model.classic",
    "RECIPES": ".training.classic.recipes",
    "CorpusFingerprint": ".formats.manifest",
    "DisallowedSpecialTokenError": ".errors",
    "ExtensionReport": ".tools.extension_report",
    "HeldOutSplit": ".training.held_out",
    "HFBPETokenizer": ".integrations.hf_tokenizer",
    "HFSentencePieceTokenizer": ".integrations.sentencepiece_tokenizer",
    "InputError": ".errors",
    "PATTERNS": ".core.patterns",
    "Pretokenizer": ".core.pretokenize",
    "compare": ".tools.compare",
    "evaluate": ".tools.evaluate",
    "extend": ".tools.extend",
    "extend_sentencepiece": ".training.sentencepiece.extend",
    "extension_report": ".tools.extension_report",
    "new_token_embeddings": ".integrations.embeddings",
    "read_token_file": ".formats.token_file",
    "save_sentencepiece": ".integrations.sentencepiece_hf",
    "save_tokenized": ".integrations.preprocess",
    "tokenize_dataset": ".integrations.preprocess",
    "tokenize_files": ".integrations.file_tokenize",
    "WordCounts": ".training.counts",
    "train": ".training.bpe.trainer",
    "train_classic": ".training.classic.train",
    "train_from_counts": ".training.bpe.trainer",
    "train_parity": ".training.parity.parity",
    "train_scheme": ".training.classic.scheme",
    "train_sentencepiece": ".training.sentencepiece.trainer",
    "train_superbpe": ".training.bpe.superbpe",
    "train_unigram": ".training.unigram.train",
    "UnigramModel": ".model.unigram",
    "verify": ".tools.verify",
}

__all__ = [
    "BPEModel",
    "ClassicModel",
    "CorpusFingerprint",
    "DisallowedSpecialTokenError",
    "ExtensionReport",
    "HFBPETokenizer",
    "HFSentencePieceTokenizer",
    "HeldOutSplit",
    "InputError",
    "PATTERNS",
    "RECIPES",
    "Pretokenizer",
    "WordCounts",
    "compare",
    "evaluate",
    "extend",
    "extend_sentencepiece",
    "extension_report",
    "new_token_embeddings",
    "read_token_file",
    "save_sentencepiece",
    "save_tokenized",
    "tokenize_dataset",
    "tokenize_files",
    "train",
    "train_classic",
    "train_from_counts",
    "train_parity",
    "train_scheme",
    "train_sentencepiece",
    "train_superbpe",
    "train_unigram",
    "UnigramModel",
    "verify",
    "__version__",
]

# AutoTokenizer finds HFBPETokenizer from here on, whichever of hf_bpe and transformers is imported first.
_install_import_hook()


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hf_bpe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
