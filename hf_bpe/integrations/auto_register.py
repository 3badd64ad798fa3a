"""Let ``AutoTokenizer`` find ``HFBPETokenizer`` without importing `transformers` at ``import hf_bpe``.

Importing `transformers` costs over a second, so ``install_import_hook`` registers ``HFBPETokenizer`` with
``AutoTokenizer`` only when `transformers`' auto-tokenizer module is (or gets) imported, whatever the import order.
"""

from __future__ import annotations

import sys
import threading
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import importlib.abc
    import importlib.machinery

__all__ = ["install_import_hook"]

# The module whose import makes AutoTokenizer usable; registering right after it loads is early enough.
_AUTO_MODULE = "transformers.models.auto.tokenization_auto"


def _register_now() -> None:
    from .hf_tokenizer import register
    from .sentencepiece_tokenizer import register as register_sentencepiece

    register()
    register_sentencepiece()


# The two classes below follow the import protocols (a loader's create_module/exec_module, a finder's find_spec)
# without subclassing importlib.abc's classes: `import hf_bpe` then does not import importlib.abc (~1 ms).
class _RegisteringLoader:
    """Run the real loader of transformers' auto-tokenizer module, then register ``HFBPETokenizer``."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        try:
            _register_now()
        except Exception as exc:  # noqa: BLE001 - a failed registration must not break `import transformers`
            warnings.warn(
                f"hf_bpe could not register HFBPETokenizer with AutoTokenizer ({type(exc).__name__}: {exc}); "
                "load it with hf_bpe.HFBPETokenizer.from_pretrained(folder) instead",
                RuntimeWarning,
                stacklevel=2,
            )

    def __getattr__(self, name: str) -> Any:
        # Resource readers, get_source, is_package...: whatever else importlib or tools ask of the real loader.
        return getattr(self._loader, name)


class _RegisterOnImport:
    """A one-shot ``sys.meta_path`` finder: wraps the loader of transformers' auto-tokenizer module."""

    def find_spec(self, fullname: str, path: Any = None, target: ModuleType | None = None):
        if fullname != _AUTO_MODULE:
            return None
        # Ask the other finders for the real spec, then take ourselves out: one registration is enough.
        _remove_hook()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


_HOOK_LOCK = threading.Lock()


def _remove_hook() -> None:
    with _HOOK_LOCK:
        sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _RegisterOnImport)]


def install_import_hook() -> None:
    """Make ``AutoTokenizer.from_pretrained`` return ``HFBPETokenizer`` for hf_bpe folders, whatever the import order.

    If `transformers`' auto-tokenizer module is already imported, register now (this imports hf_bpe's tokenizer
    module). Otherwise put a one-shot finder on ``sys.meta_path`` that registers right after that module loads, so
    ``import hf_bpe`` stays free of `transformers`. Idempotent; safe to call from ``hf_bpe/__init__.py``.

    >>> install_import_hook()
    >>> install_import_hook()  # a second call changes nothing
    """
    if _AUTO_MODULE in sys.modules:
        _register_now()
        return
    with _HOOK_LOCK:
        if not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
            sys.meta_path.insert(0, _RegisterOnImport())
