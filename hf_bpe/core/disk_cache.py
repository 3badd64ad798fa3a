"""Keep derived data between runs in a per-user cache folder: tables that take tens of ms to build at every start.

What is cached must be derivable again: a missing, unreadable, damaged or stale entry is rebuilt by the caller
and written again; a cache that cannot be written (read-only home, full disk) only costs the rebuild. Each entry
ends with the sha256 of its payload, so a torn or damaged file reads as absent, never as wrong data; entries are
written to a temporary file and renamed into place, so concurrent runs never see half an entry.

The checksum proves nothing against another local user, who can recompute it: the cache is untrusted input. An
entry is read only when the folder and the entry belong to this user (``os.geteuid()``) and neither is writable by
group or others (what pip and ccache require), when the entry is a regular file (opened with ``O_NOFOLLOW`` and
``O_NONBLOCK``: a symlink or a FIFO is never followed nor waited on) and when its size is one the caller expects (the
read is bounded by it). Anything else is ignored, with one warning per process, and the caller rebuilds. A folder
the cache creates is created ``0o700`` (the default folder, when this user's but group-writable, is made ``0o700``
again); an entry is written ``0o600``.

The folder is ``$HF_BPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hf_bpe``, else ``~/.cache/hf_bpe``; setting
``HF_BPE_CACHE_DIR`` to an empty string turns the cache off (it is off on Windows).

>>> import os, tempfile
>>> old = os.environ.get(CACHE_ENV); os.environ[CACHE_ENV] = tempfile.mkdtemp()
>>> store("example-v1.bin", b"payload"); load("example-v1.bin", sizes=(7,))
b'payload'
>>> load("absent-v1.bin", sizes=(7,)) is None
True
>>> _ = os.environ.pop(CACHE_ENV) if old is None else os.environ.update({CACHE_ENV: old})
"""

from __future__ import annotations

import errno
import os
import stat
import warnings
from collections.abc import Collection
from pathlib import Path

from ._tally import Sha256  # not hashlib: OpenSSL's libcrypto is 3.6 MiB resident (csrc/sha256.hpp)

__all__ = ["CACHE_ENV", "cache_dir", "load", "store"]

CACHE_ENV = "HF_BPE_CACHE_DIR"
_DIGEST = 32  # sha256 bytes at the end of each entry
_warned = False  # one warning per process about an ignored entry


def cache_dir() -> Path | None:
    """Return the cache folder (see the module docs), or None when the cache is off.

    It is off when ``HF_BPE_CACHE_DIR`` is set to ``""``, and on systems without POSIX ownership and ``O_NOFOLLOW``
    (Windows), where an entry could not be checked.
    """
    if os.name != "posix":  # pragma: no cover
        return None
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hf_bpe"


def _untrusted(info: os.stat_result, what: str) -> str | None:
    """Why a folder or entry with this status may not be trusted, or None when it may."""
    advice = (f"; use a folder only you can write (chmod go-w, or set {CACHE_ENV} to a private folder, or to an empty "
              "string to turn the cache off)")
    if info.st_uid != os.geteuid():
        return f"the {what} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()}){advice}"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"the {what} is writable by group or others (mode {stat.S_IMODE(info.st_mode):o}){advice}"
    return None


def _warn_ignored(path: Path, reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"hf_bpe ignores the cache entry {os.fspath(path)!r} and rebuilds its data: {reason}",
                      UserWarning, stacklevel=3)


def _open_folder(folder: Path) -> tuple[int | None, str | None]:
    """Open the cache folder; return (fd, None) when it may be trusted, (None, reason or None if absent) when not."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return None, None if exc.errno in (errno.ENOENT, errno.ENOTDIR) else f"the folder cannot be opened ({exc})"
    reason = _untrusted(os.fstat(fd), "cache folder")
    if reason is not None:
        os.close(fd)
        return None, reason
    return fd, None


def load(name: str, *, sizes: Collection[int]) -> bytes | None:
    """Return the payload stored under ``name``, or None when it is absent, damaged or not to be trusted.

    Args:
        name: the entry's file name in the cache folder.
        sizes: the payload sizes a valid entry can have (e.g. a ``range``); an entry of any other size is ignored,
            and nothing more than the largest is ever read.
    """
    folder = cache_dir()
    if folder is None:
        return None
    # The entry is opened relative to the folder's fd, so the folder checked is the folder read.
    folder_fd, reason = _open_folder(folder)
    if folder_fd is None:
        if reason is not None:
            _warn_ignored(folder / name, reason)
        return None
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                _warn_ignored(folder / name, "it is a symbolic link" if exc.errno == errno.ELOOP
                              else f"it cannot be opened ({exc.strerror})")
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                _warn_ignored(folder / name, "it is not a regular file")
                return None
            reason = _untrusted(info, "entry")
            if reason is None and info.st_size - _DIGEST not in sizes:
                reason = f"its size ({info.st_size} bytes) is not one an entry can have"
            if reason is not None:
                _warn_ignored(folder / name, reason)
                return None
            data = _read_exactly(fd, info.st_size)
        finally:
            os.close(fd)
    finally:
        os.close(folder_fd)
    if data is None:
        return None  # changed size while read: a concurrent writer replaced it, or damage
    payload, digest = data[:-_DIGEST], data[-_DIGEST:]
    if Sha256(payload).digest() != digest:
        return None
    return payload


def _read_exactly(fd: int, size: int) -> bytes | None:
    """Read ``size`` bytes from ``fd``; None when the file holds fewer or more."""
    parts = []
    left = size
    while left > 0:
        part = os.read(fd, left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)  # os.read returns at most `left` bytes and at least 1 here: the loop advances
    if os.read(fd, 1):
        return None
    return b"".join(parts)


def _tightened(folder: Path) -> bool:
    """Make the default cache folder, when it is this user's but group-writable, private (0o700); say if done.

    Earlier versions created it with the umask's mode (0o775 under a umask of 002): this user's own folder, which
    ``chmod`` makes trusted again. A folder chosen with ``HF_BPE_CACHE_DIR`` is left as its owner set it.
    """
    if os.environ.get(CACHE_ENV) is not None:
        return False
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                return False
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def store(name: str, payload: bytes) -> None:
    """Write ``payload`` under ``name`` atomically; do nothing when the cache is off, untrusted or not writable."""
    folder = cache_dir()
    if folder is None:
        return
    temp = None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder_fd, reason = _open_folder(folder)
        if folder_fd is None and not _tightened(folder):
            return  # load() warns; writing where others can write would not make the entry trusted
        if folder_fd is not None:
            os.close(folder_fd)
        # mkstemp creates the file 0o600 and exclusively (never through a planted link). Imported here: most runs
        # only read the cache.
        import tempfile

        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.write(Sha256(payload).digest())
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
