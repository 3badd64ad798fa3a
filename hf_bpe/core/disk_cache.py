"""Keep derived data between runs in a per-user cache folder: tables that take tens of ms to build at every start.

What is cached must be derivable again: a missing, unreadable, damaged or stale entry is rebuilt by the caller
and written again; a cache that cannot be written (read-only home, full disk) only costs the rebuild. Each entry
ends with the sha256 of its payload, so a torn or damaged file reads as absent, never as wrong data; entries are
written to a temporary file and renamed into place, so concurrent runs never see half an entry.

The folder is ``$HF_BPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hf_bpe``, else ``~/.cache/hf_bpe``; setting
``HF_BPE_CACHE_DIR`` to an empty string turns the cache off.

>>> import os, tempfile
>>> old = os.environ.get(CACHE_ENV); os.environ[CACHE_ENV] = tempfile.mkdtemp()
>>> store("example-v1.bin", b"payload"); load("example-v1.bin")
b'payload'
>>> load("absent-v1.bin") is None
True
>>> _ = os.environ.pop(CACHE_ENV) if old is None else os.environ.update({CACHE_ENV: old})
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir", "load", "store"]

CACHE_ENV = "HF_BPE_CACHE_DIR"
_DIGEST = 32  # sha256 bytes at the end of each entry


def cache_dir() -> Path | None:
    """Return the cache folder (see the module docs), or None when ``HF_BPE_CACHE_DIR`` is set to ``""``."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hf_bpe"


def load(name: str) -> bytes | None:
    """Return the payload stored under ``name``, or None when it is absent, unreadable or damaged."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = (folder / name).read_bytes()
    except OSError:
        return None
    payload, digest = data[:-_DIGEST], data[-_DIGEST:]
    if len(data) < _DIGEST or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def store(name: str, payload: bytes) -> None:
    """Write ``payload`` under ``name`` atomically; do nothing when the cache is off or cannot be written."""
    folder = cache_dir()
    if folder is None:
        return
    temp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.write(hashlib.sha256(payload).digest())
        os.replace(temp, folder / name)
        temp = None
    except OSError:
        pass  # the caller keeps what it built; the next run builds it again
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except OSError:
                pass
