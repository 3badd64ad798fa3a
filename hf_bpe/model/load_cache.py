"""Keep loaded tokenizer folders between runs: :meth:`BPEModel.load <hf_bpe.BPEModel.load>` of a large vocabulary
without parsing its files again.

Reading a GPT-2 folder (JSON, the byte-level alphabet, 50,000 merges checked) was ~60 % of the CPU time of a whole
``hf-bpe tokenize`` process (callgrind). The folder's reading is kept as its packed tokens and merges
(:mod:`hf_bpe.model.packing`, the model's pickled form) with the special tokens, roles and options, in the per-user
cache (:mod:`hf_bpe.core.disk_cache`: an entry is read only when it and its folder belong to this user, no one else
can write them, and its sha256 matches). The entry's name is a sha256 of everything the reading depends on: the
bytes (or the absence) of every file :func:`hf_bpe.formats.folder.read_folder` may read, ``missing_bytes``, and the
source of the modules that read them; a changed file, option or reader is another entry, so a stale one is never
used. The model is then built from the entry exactly as ``load`` builds it from the files (same arguments; its
constructor checks them again), with the merges' id triples kept too (``merge_triples``, done when the entry was
made). Folders whose files hold under 256 KiB are read directly (parsing them costs a
few ms), so tests' many small folders add no entries; the 8 newest entries are kept, older ones deleted.

>>> import os, tempfile
>>> from hf_bpe import BPEModel
>>> from hf_bpe.core.disk_cache import CACHE_ENV
>>> old = os.environ.get(CACHE_ENV); os.environ[CACHE_ENV] = tempfile.mkdtemp()
>>> folder = tempfile.mkdtemp(); _ = BPEModel.bytes_only().save(folder)
>>> folder_key(folder, "refuse") is None  # too small to pay
True
>>> _ = os.environ.pop(CACHE_ENV) if old is None else os.environ.update({CACHE_ENV: old})
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
from array import array
from pathlib import Path
from typing import Any

from ..core import disk_cache
from ..formats import folder as folder_format
from ..formats import hf_config
from .packing import pack, unpack_vocab
from .vocab_checks import merge_triples

__all__ = ["folder_key", "keep", "kept"]

_FORMAT = b"hf_bpe-loaded-folder-v1"
_ID = "i"  # merge triples' ids: int32, little-endian in the entry (ids are at most 2**31 - 1: core/_reference.py)
_SWAP = sys.byteorder == "big"
_MIN_BYTES = 256 << 10  # files smaller than this are parsed in a few ms: not worth an entry
_KEEP = 8  # folder entries kept (the newest); older ones are deleted when one is added
# Every file read_folder may read (it reads no other).
_NAMES = (hf_config.TOKENIZER_CONFIG_FILE, *(name for pair in folder_format.GPT2_PAIRS for name in pair),
          folder_format.TOKENIZER_JSON)
# The modules whose code decides what a folder's reading gives (their source is part of every key).
_READERS = ("hf_bpe.formats.folder", "hf_bpe.formats.gpt2", "hf_bpe.formats.tokenizer_json", "hf_bpe.formats.hf_config",
            "hf_bpe.core.bytelevel", "hf_bpe.core.patterns", "hf_bpe.model.vocab_checks", "hf_bpe.model.bpe_files",
            "hf_bpe.model.packing", "hf_bpe.model.bpe", "hf_bpe.model.load_cache")


@functools.cache
def _readers_digest() -> bytes | None:
    """sha256 of the readers' source (None when one cannot be read: then nothing is cached)."""
    digest = hashlib.sha256(_FORMAT)
    for name in _READERS:
        __import__(name)
        path = getattr(sys.modules[name], "__file__", None)
        try:
            data = Path(path).read_bytes() if path else None
        except OSError:
            data = None
        if data is None:
            return None
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.digest()


def folder_key(directory: object, missing_bytes: str) -> str | None:
    """Return the cache entry's name for loading ``directory`` (see the module docs), or None when it is not to be
    cached: not a folder, a file that is not a regular file or cannot be read, too small, or the cache off."""
    if not isinstance(directory, (str, os.PathLike)) or disk_cache.cache_dir() is None:
        return None
    readers = _readers_digest()
    if readers is None:
        return None
    folder = Path(directory)
    digest = hashlib.sha256(readers + repr(missing_bytes).encode("utf-8"))
    total = 0
    for name in _NAMES:
        path = folder / name
        digest.update(len(name).to_bytes(8, "little") + name.encode("utf-8"))
        try:
            if not path.exists():
                digest.update(b"\x00")
                continue
            if not path.is_file():  # a folder, FIFO or device named like a model file: read_folder's business
                return None
            data = path.read_bytes()
        except OSError:
            return None
        total += len(data)
        digest.update(b"\x01" + len(data).to_bytes(8, "little") + data)
    if total < _MIN_BYTES:
        return None
    return f"folder-{digest.hexdigest()}.bin"


def keep(key: str, model: Any, contents: Any) -> None:
    """Store a freshly loaded ``model`` and its folder's ``contents`` under ``key`` (nothing when they do not round
    trip through JSON exactly)."""
    extra = {"specials": contents.specials, "roles": contents.roles, "options": contents.options}
    try:
        text = json.dumps(extra, ensure_ascii=False)
    except (TypeError, ValueError):
        return
    if json.loads(text) != extra:  # e.g. a tuple among the options: it would come back a list
        return
    if model._packed is None:
        model._packed = pack(model._vocab, model._merges)
    try:
        triples = array(_ID, [i for triple in merge_triples(model._vocab, model._merges) for i in triple])
    except OverflowError:  # an id beyond int32 (the encoder refuses those): nothing to keep
        return
    if _SWAP:
        triples.byteswap()
    parts = (*model._packed, triples.tobytes())
    header = json.dumps({"lengths": [len(part) for part in parts], "extra": extra},
                        ensure_ascii=False).encode("utf-8")
    disk_cache.store(key, len(header).to_bytes(8, "little") + header + b"".join(parts))
    _forget_old(key)


def _forget_old(kept_now: str) -> None:
    """Delete all but the :data:`_KEEP` newest folder entries (each is as large as its folder's files; a folder
    edited and loaded again and again would otherwise leave one entry per version). Only this user's regular files
    named ``folder-*.bin`` in the cache folder go; any failure leaves the cache as it is."""
    folder = disk_cache.cache_dir()
    if folder is None:
        return
    try:
        entries = []
        for path in folder.glob("folder-*.bin"):
            info = path.lstat()
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and path.name != kept_now:
                entries.append((info.st_mtime, path))
        entries.sort(reverse=True)
        for _, path in entries[_KEEP - 1:]:  # the entry just kept counts as the newest
            path.unlink()
    except OSError:
        pass


def kept(cls: type, key: str, directory: object, missing_bytes: str) -> Any:
    """The model stored under ``key``, built as ``load`` builds it, or None when there is no usable entry."""
    limit = 4 * _MIN_BYTES + sum(_size(Path(os.fspath(directory)) / name) for name in _NAMES) * 4
    payload = disk_cache.load(key, sizes=range(9, limit))
    if payload is None:
        return None
    try:
        size = int.from_bytes(payload[:8], "little")
        header = json.loads(payload[8:8 + size].decode("utf-8"))
        lengths, extra = header["lengths"], header["extra"]
        at, parts = 8 + size, []
        for length in lengths:
            parts.append(payload[at:at + length])
            at += length
        if at != len(payload) or len(parts) != 8:
            return None
        packed = tuple(parts[:7])
        vocab = unpack_vocab(packed)
        ids = array(_ID)
        ids.frombytes(parts[7])
        if _SWAP:
            ids.byteswap()
        merges = len(packed[3]) // 4  # one uint32 length per merge's left (and right) token
        if len(ids) != 3 * merges or len(packed[5]) != 4 * merges:
            return None
        # The merges stay packed until used (model._merges): encoding needs only their id triples.
        model = cls(vocab, (), special_tokens=extra["specials"], roles=extra["roles"], missing_bytes=missing_bytes,
                    _triples=ids, _packed=packed, **extra["options"])
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):  # checksummed, so only a format change
        return None
    return model


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
