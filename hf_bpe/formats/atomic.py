"""Write a set of files into a folder so that nothing is half-written, overwritten without consent, or lost.

:func:`write_files` puts files into a folder (reports, counts files); :func:`replace_folder` replaces a tokenizer
folder's files as one set (readers and killed writers never leave a mix of old and new files).

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "tok"
>>> write_files(out, {"vocab.json": "{}", "merges.txt": b"#version: 0.2\\n"}).name
'tok'
>>> sorted(p.name for p in out.iterdir())
['merges.txt', 'vocab.json']
>>> write_files(out, {"vocab.json": "{}"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
FileExistsError: ...vocab.json... pass force=True (CLI: --force) to replace them
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

__all__ = ["build_folder", "replace_folder", "write_files"]

_ATTEMPTS = 100  # random temp names collide with probability ~2**-32 each; a few retries are plenty


def write_files(directory: str | os.PathLike[str], files: Mapping[str, bytes | str], *, force: bool = False) -> Path:
    """Write ``files`` into ``directory`` all-or-nothing.

    * ``directory`` absent: everything is written into a hidden temporary sibling folder (same parent), fsynced,
      then that folder is renamed to ``directory`` in one step; missing parent folders are created.
    * ``directory`` present: if any target name exists and ``force`` is false, nothing is written and
      FileExistsError lists them. Otherwise every file goes to a hidden temporary file in ``directory`` and is
      fsynced; only when all are written are they renamed over their targets (``os.replace``). If a rename fails
      midway, the targets already replaced are restored from hard-link backups and the new ones removed. Other
      files in the folder are never touched. A replaced file keeps its permission bits.

    ``str`` contents are written as UTF-8; all contents are written byte for byte (no newline translation).

    Args:
        directory: the target folder.
        files: file name (a plain name, no folders) -> contents.
        force: replace files that already exist.

    Returns:
        The resolved path of ``directory``.

    Raises:
        TypeError: when ``files`` is not a mapping of str names to bytes/str, or ``force`` is not a bool.
        ValueError: when a name is empty, ``.``/``..``, contains a path separator or NUL.
        FileExistsError: when target files exist and ``force`` is false (nothing was written).
        NotADirectoryError: when ``directory`` (or a parent) exists and is not a folder.
        IsADirectoryError: when a target name is an existing folder.
        OSError: from the file system; nothing existing has changed then (see above), unless restoring a
            backup failed too, in which case the error names the backup files that still hold the old contents.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_files(d, {"a.txt": "one\\n"})
    >>> _ = write_files(d, {"a.txt": "two\\n"}, force=True)
    >>> (d / "a.txt").read_bytes()
    b'two\\n'
    """
    # 1. validate everything before touching the file system.
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a str or os.PathLike, got {type(directory).__name__} {directory!r}")
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, got {type(force).__name__} {force!r}")
    payload = _encode(files)
    target = Path(directory)
    _refuse_dangling_link(target)

    with _naming_errors(target):
        # 2. a folder that does not exist yet: build it aside, then rename it into place in one step.
        if not target.exists() and not target.is_symlink():
            try:
                return _write_new_directory(target, payload)
            except FileExistsError:
                if not target.is_dir():  # something else appeared there: report it as such
                    raise
                # Someone created the folder meanwhile: fall through to the "existing folder" rules.

        # 3. an existing folder (a link to one: written through): refuse to overwrite without force, then write
        #    aside and rename file by file.
        if not target.is_dir():
            raise NotADirectoryError(f"{os.fspath(directory)!r} exists and is not a folder; pass a folder path "
                                     "(new or existing) to write the files into")
        return _write_into_directory(target, payload, force=force)


def _refuse_dangling_link(path: Path) -> None:
    if path.is_symlink() and not path.exists():
        raise FileNotFoundError(f"{os.fspath(path)!r} is a symbolic link to {os.readlink(path)!r}, which does not "
                                "exist (or loops); create the folder it names, or remove the link to write a new "
                                "folder in its place")


@contextlib.contextmanager
def _naming_errors(target: Path) -> Iterator[None]:
    """Name ``target`` in a file-system error that names no file (``os.write``/``fsync`` on a full disk)."""
    try:
        yield
    except OSError as exc:
        if exc.errno is not None and exc.filename is None:  # our own messages (errno None) stay as they are
            exc.filename = os.fspath(target)
        raise


def _encode(files: object) -> dict[str, bytes]:
    if not isinstance(files, Mapping):
        raise TypeError(f"files must be a mapping of file name -> bytes or str, got {type(files).__name__} "
                        f"{files!r:.80}")
    payload: dict[str, bytes] = {}
    for name, content in files.items():
        if not isinstance(name, str):
            raise TypeError(f"file names must be str, got {type(name).__name__} {name!r}")
        separators = {"/", os.sep, os.altsep or "/"}
        if name in ("", ".", "..") or "\0" in name or any(sep in name for sep in separators):
            raise ValueError(f"file name {name!r} is not a plain file name; pass names like 'vocab.json' "
                             "(no folders, not empty, not '.' or '..')")
        if isinstance(content, str):
            try:
                payload[name] = content.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"contents of {name!r} cannot be written as UTF-8 ({exc.reason} at index "
                                 f"{exc.start}); pass valid text or bytes") from None
        elif isinstance(content, (bytes, bytearray, memoryview)):
            payload[name] = bytes(content)
        else:
            raise TypeError(f"contents of {name!r} must be bytes or str, got {type(content).__name__} {content!r:.80}")
    return payload


def _hidden_name(base: str, kind: str) -> str:
    # os.urandom, as secrets.token_hex reads it: `secrets` imports hmac and so hashlib's OpenSSL (3.6 MiB) into
    # every save.
    return f".{base}.{kind}-{os.urandom(4).hex()}"


def _fsync_directory(path: Path) -> None:
    # Makes the renames durable. Not possible on Windows (folders cannot be opened); the renames are still atomic.
    if os.name == "nt":  # pragma: no cover
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes, mode: int = 0o666) -> None:
    """Create ``path`` (must not exist), write ``data`` fully and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        path.unlink(missing_ok=True)  # the file is ours (O_EXCL): no partial file is left behind
        raise


def _write_new_directory(target: Path, payload: dict[str, bytes]) -> Path:
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise NotADirectoryError(f"cannot create {os.fspath(target)!r}: {exc.filename!r} exists and is not a "
                                 "folder") from None
    # 1. a hidden sibling, created with os.mkdir so that it gets the usual permissions (mkdtemp would give 0o700).
    for _ in range(_ATTEMPTS):
        staging = parent / _hidden_name(target.name, "tmp")
        try:
            os.mkdir(staging)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - needs 100 collisions of 32 random bits
        raise FileExistsError(f"could not create a temporary folder next to {os.fspath(target)!r}")
    try:
        # 2. every file complete and on disk before the folder becomes visible under its name.
        for name, data in payload.items():
            _write_file(staging / name, data)
        _fsync_directory(staging)
        # 3. one atomic rename. POSIX rename also replaces an EMPTY folder that appeared meanwhile (nothing lost);
        #    a non-empty one makes it fail (ENOTEMPTY/EEXIST), reported as FileExistsError to the caller.
        try:
            os.rename(staging, target)
        except OSError as exc:
            if target.exists():
                raise FileExistsError(f"{os.fspath(target)!r} appeared while writing") from exc
            raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _fsync_directory(parent)
    return target.resolve()


def _write_into_directory(target: Path, payload: dict[str, bytes], *, force: bool) -> Path:
    # 1. what would be replaced; refuse before writing anything.
    existing = _replaced_names(target, payload, force=force)

    temps: dict[str, Path] = {}
    backups: dict[str, Path] = {}
    replaced: list[str] = []
    try:
        # 2. all temporary files written and fsynced before the first replace. A replaced file keeps its mode.
        for name, data in payload.items():
            old_mode = None
            if name in existing and not (target / name).is_symlink():
                old_mode = stat.S_IMODE((target / name).stat().st_mode)
            temp = _unique(target, name, "tmp")
            _write_file(temp, data)  # removes its own partial file on failure
            temps[name] = temp
            if old_mode is not None:
                os.chmod(temp, old_mode)  # os.open applied the umask; the old file's mode survives exactly
        # 3. backups of the files about to be replaced: hard links (no copy), so that a failed replace can undo.
        for name in existing:
            backups[name] = _backup(target / name, _unique(target, name, "bak"))
        # 4. the replaces; each one is atomic. A name is recorded BEFORE its replace: undoing a replace that did
        #    not happen is harmless (the backup is a link to the same old contents; a new name is just absent),
        #    while missing one that did happen (interrupt right after it) would not be.
        for name, temp in temps.items():
            replaced.append(name)
            os.replace(temp, target / name)
    except BaseException as exc:
        _undo(target, temps, backups, replaced, exc)
        raise
    for backup in backups.values():
        backup.unlink(missing_ok=True)
    _fsync_directory(target)
    return target.resolve()


def _replaced_names(target: Path, payload: dict[str, bytes], *, force: bool) -> list[str]:
    """Return the names of ``payload`` that exist in ``target``; refuse folders, and files without ``force``."""
    existing = [name for name in payload if (target / name).exists() or (target / name).is_symlink()]
    folders = [name for name in existing if (target / name).is_dir() and not (target / name).is_symlink()]
    if folders:
        raise IsADirectoryError(f"cannot write file(s) {folders!r} into {os.fspath(target)!r}: folder(s) with "
                                "these names exist there; move them away first")
    if existing and not force:
        raise FileExistsError(f"{os.fspath(target)!r} already has {', '.join(sorted(existing))}; "
                              "pass force=True (CLI: --force) to replace them")
    return existing


def _unique(folder: Path, base: str, kind: str) -> Path:
    for _ in range(_ATTEMPTS):
        path = folder / _hidden_name(base, kind)
        if not path.exists() and not path.is_symlink():
            return path
    raise FileExistsError(f"could not find a free temporary name in {os.fspath(folder)!r}")  # pragma: no cover


def _backup(path: Path, backup: Path) -> Path:
    """Keep the current contents of ``path`` under ``backup`` (hard link; a copy where links are impossible)."""
    try:
        os.link(path, backup, follow_symlinks=False)
    except OSError:
        shutil.copy2(path, backup, follow_symlinks=False)
    return backup


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b) if not b.is_symlink() else os.readlink(a) == os.readlink(b)
    except OSError:
        return False


def _undo(target: Path, temps: dict[str, Path], backups: dict[str, Path], replaced: list[str],
          error: BaseException) -> None:
    """Return the folder to its state before the call: restore replaced files, remove new ones and temp files."""
    stuck: list[str] = []
    for name in replaced:
        try:
            if name in backups:
                if _same_file(backups[name], target / name):
                    continue  # its replace never happened; the backup is removed below
                os.replace(backups[name], target / name)  # the backup becomes the file again
            else:
                (target / name).unlink(missing_ok=True)  # did not exist before the call
        except OSError:
            stuck.append(name)
    leftovers = [temp for temp in temps.values()]
    leftovers += [backup for name, backup in backups.items() if name not in stuck]
    for path in leftovers:  # temp files, and backups of files that were never replaced (or restored already)
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
    if stuck:
        # Nothing is lost: the old contents are still in the backups, which we leave in place and name.
        kept = {name: os.fspath(backups[name]) for name in stuck if name in backups}
        error.add_note(f"hf_bpe.formats.atomic: could not restore {stuck!r} in {os.fspath(target)!r}; "
                       f"their previous contents are kept in {kept!r}")


# -- a tokenizer folder replaced as a set -----------------------------------------------------------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h


def replace_folder(directory: str | os.PathLike[str], files: Mapping[str, bytes | str], *, force: bool = False) -> Path:
    """Write a tokenizer folder's ``files`` so that readers see the old set or the new set, never a mix.

    :func:`write_files` replaces files one rename at a time: a process killed between two renames leaves new and
    old files side by side. Here the new folder is built complete beside the old one (a hidden sibling holding the
    new files and hard links to every other entry of the old folder, so that nothing else in it is lost or
    changed), then swapped in with one atomic ``renameat2(RENAME_EXCHANGE)``; the old folder is then removed.
    Writers of the same folder take turns (an exclusive ``flock`` on a hidden lock file beside it), so concurrent
    writers never interleave: the last one's set wins, whole; the lock file goes when the write ends. A killed run
    leaves at most a hidden ``.NAME.hf_bpe-*`` sibling, which the next write removes. A symbolic link to a folder is
    written through (the folder it leads to is swapped, the link stays). Where the exchange is not available (not
    Linux, or a file system without it: macOS, NFS, vfat, some FUSE) the swap is two renames (the old folder to
    ``.NAME.hf_bpe-XXXX-old``, the new one into place); a kill between them leaves no ``NAME``, and the next write
    first renames that ``-old`` folder back to ``NAME`` (it holds the only copy of the user's folder). An ``-old``
    folder beside a ``NAME`` that does not hold all its entries is never deleted: it is kept and named in a
    warning.

    Args, returns and errors as :func:`write_files`.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "tok"
    >>> _ = replace_folder(out, {"vocab.json": "{}", "merges.txt": "#version: 0.2\\n"})
    >>> _ = (out / "README.md").write_text("mine")
    >>> _ = replace_folder(out, {"vocab.json": '{"a":0}', "merges.txt": "#version: 0.2\\n"}, force=True)
    >>> sorted(p.name for p in out.iterdir()), (out / "vocab.json").read_text(), (out / "README.md").read_text()
    (['README.md', 'merges.txt', 'vocab.json'], '{"a":0}', 'mine')
    """
    # 1. Validate before touching anything.
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a str or os.PathLike, got {type(directory).__name__} {directory!r}")
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, got {type(force).__name__} {force!r}")
    payload = _encode(files)
    target = _folder_target(directory)
    # 2. One writer at a time; what a killed writer left behind is removed first.
    with _naming_errors(target), _folder_lock(target):
        _remove_leftovers(target)
        if not target.exists():
            return _write_new_directory(target, payload)
        return _swap_in(target, payload, force=force)


def _folder_target(directory: str | os.PathLike[str]) -> Path:
    """The absolute folder path to write, its parents created; refuse a path that is or passes through a file.

    A symbolic link is written through: the target is the folder it leads to, swapped in that folder's parent (the
    link stays a link; swapping the link itself would replace it by a real folder and leave the old one behind)."""
    target = Path(os.path.abspath(directory))
    _refuse_dangling_link(target)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{os.fspath(directory)!r} exists and is not a folder; pass a folder path "
                                 "(new or existing) to write the files into")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise NotADirectoryError(f"cannot create {os.fspath(target)!r}: {exc.filename!r} exists and is not a "
                                 "folder") from None
    return target


def _prefix(target: Path) -> str:
    return f".{target.name}.hf_bpe-"


@contextlib.contextmanager
def _folder_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``.NAME.hf_bpe-lock`` beside ``target``; the file is removed on release.

    Removing a lock file is safe only as follows: a writer that waited on the file may lock it after its holder
    unlinked it, so each writer, once its lock is granted, checks that the path still names the file it locked
    (same device and inode) and starts over when not. Only a holder unlinks, before it releases; so two writers
    can never both hold the file their path names. A killed writer leaves the file, which the next write removes.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, the swap is still all-or-nothing
        yield
        return
    path = target.parent / f"{_prefix(target)}lock"
    # Each turn of this loop follows another writer's release of the lock (its unlink), so it ends once the
    # writers ahead of this one are done.
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the holder; released when the fd closes (or its owner dies)
            held = os.fstat(fd)
            try:
                named = os.lstat(path)
            except FileNotFoundError:
                named = None
        except BaseException:
            os.close(fd)
            raise
        if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # locked a file its holder removed: take the one at the path now
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # still holding it: waiters on this file see it gone and start over
        os.close(fd)


_ASIDE = "-old"  # the suffix of the old folder moved aside by the two-rename swap (_exchange)


def _remove_leftovers(target: Path) -> None:
    """Remove what killed runs left beside ``target``; first put back a folder a killed two-rename swap moved aside.

    Under the lock, no live writer owns a staging folder: every one left is from a killed run (the staging folders
    of both swap_in and write_new_directory, named by _hidden_name, for this target). A ``-old`` folder is the
    user's previous folder: with no ``target`` it is the only copy, and goes back to its name; beside a ``target``
    that holds every one of its entries (the swap finished: the new folder has links to them or their new files) it
    goes as the swap would have removed it; otherwise it is kept, and a warning names it."""
    prefixes = (_prefix(target), f".{target.name}.tmp-")
    leftovers = [entry for entry in target.parent.iterdir()
                 if entry.name.startswith(prefixes) and entry.is_dir() and not entry.is_symlink()]
    for aside in sorted((e for e in leftovers if e.name.endswith(_ASIDE)), key=lambda e: e.stat().st_mtime_ns,
                        reverse=True):
        if not target.exists() and not target.is_symlink():
            os.rename(aside, target)  # the swap was killed between its two renames: the old folder comes back
            _fsync_directory(target.parent)
            leftovers.remove(aside)
        elif not all((target / entry.name).exists() or (target / entry.name).is_symlink()
                     for entry in aside.iterdir()):
            import warnings

            warnings.warn(f"{os.fspath(aside)!r} holds a previous version of {os.fspath(target)!r} with entries "
                          f"that {os.fspath(target)!r} lacks (a write of it was killed midway); it is kept: move "
                          "what you need out of it, then delete it", RuntimeWarning, stacklevel=4)
            leftovers.remove(aside)
    for entry in leftovers:
        shutil.rmtree(entry, ignore_errors=True)


def _link_tree(source: Path, destination: Path) -> None:
    """Recreate ``source`` (a file, link or folder) at ``destination`` with hard links: no copy, no change."""
    if source.is_symlink():
        os.symlink(os.readlink(source), destination)
    elif source.is_dir():
        shutil.copytree(source, destination, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(source, destination)


def _link_or_copy(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
    try:
        os.link(source, destination, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, destination, follow_symlinks=False)


def _swap_in(target: Path, payload: dict[str, bytes], *, force: bool) -> Path:
    # 1. What would be replaced; refuse before writing anything.
    existing = _replaced_names(target, payload, force=force)
    staging = target.parent / f"{_prefix(target)}{os.urandom(4).hex()}"
    os.mkdir(staging)
    try:
        # 2. The complete new folder: the new files (a replaced file keeps its mode), links to everything else.
        os.chmod(staging, stat.S_IMODE(target.stat().st_mode))
        kept = [entry for entry in target.iterdir() if entry.name not in payload]
        for entry in kept:
            _link_tree(entry, staging / entry.name)
        for name, data in payload.items():
            _write_file(staging / name, data)
            if name in existing and not (target / name).is_symlink():
                os.chmod(staging / name, stat.S_IMODE((target / name).stat().st_mode))
        _fsync_directory(staging)
        # 3. The swap: one atomic exchange; `staging` then holds the old folder.
        _exchange(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # 4. Anything another program put into the old folder after step 2 moves across; then the old one goes.
    kept_names = {entry.name for entry in kept}
    for entry in staging.iterdir():
        if entry.name not in kept_names and entry.name not in payload and not (target / entry.name).exists():
            with contextlib.suppress(OSError):
                os.rename(entry, target / entry.name)
    shutil.rmtree(staging, ignore_errors=True)
    _fsync_directory(target.parent)
    return target.resolve()


def _renameat2() -> Callable[..., int] | None:
    """The C library's ``renameat2`` (Linux), or None where there is none (the swap is then two renames)."""
    if os.name != "posix":  # pragma: no cover
        return None
    import ctypes  # here: only replacing a folder needs it, and it costs every write ~5 ms to import

    return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)


def _exchange(new: Path, target: Path) -> None:
    """Swap two folders atomically (Linux renameat2); else move ``target`` aside and ``new`` into its place."""
    renameat2 = _renameat2()
    if renameat2 is not None:
        import ctypes

        if renameat2(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), os.fspath(new), None, os.fspath(target))
    # Two renames; a kill between them leaves `aside` and no `target`: the next write renames it back.
    aside = new.with_name(new.name + _ASIDE)
    os.rename(target, aside)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(aside, target)
        raise
    os.rename(aside, new)  # the caller removes `new`, which now holds the old folder


def build_folder(directory: str | os.PathLike[str], build: Callable[[Path], None], *, force: bool = False) -> Path:
    """Create the folder ``directory`` whole: ``build(staging)`` fills a hidden sibling, which then takes its place.

    For outputs too large to hold in memory (a tokenized dataset, a token file). Readers see no folder, the old
    folder or the new one, never a partial one; an interrupted ``build`` leaves only the hidden sibling, which the
    next call removes. An existing ``directory`` is replaced as a whole (nothing of it is kept) with ``force``, and
    refused without. Writers of the same folder take turns, as in :func:`replace_folder`.

    Args:
        directory: the folder to create or replace.
        build: called once with the empty staging folder; everything it writes there becomes ``directory``.
        force: replace an existing ``directory``.

    Raises:
        FileExistsError: ``directory`` exists and ``force`` is false (nothing is built).
        NotADirectoryError: ``directory`` or a parent is a file.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "data"
    >>> _ = build_folder(out, lambda staging: (staging / "a.bin").write_bytes(b"\\x01"))
    >>> sorted(p.name for p in out.iterdir())
    ['a.bin']
    """
    # 1. Validate before building anything.
    if not isinstance(directory, (str, os.PathLike)) or not os.fspath(directory):
        raise TypeError(f"directory must be a non-empty str or os.PathLike, got {directory!r}")
    if not callable(build):
        raise TypeError(f"build must be callable, got {type(build).__name__} {build!r}")
    if Path(directory).is_dir() and not force:
        raise FileExistsError(f"{os.fspath(directory)!r} already exists; pass force=True (--force) to replace it")
    target = _folder_target(directory)
    # 2. Under the lock: leftovers of killed runs go, the new folder is built beside, then swapped in.
    with _naming_errors(target), _folder_lock(target):
        _remove_leftovers(target)
        staging = target.parent / f"{_prefix(target)}{os.urandom(4).hex()}"
        os.mkdir(staging)
        try:
            build(staging)
            for root, _dirs, names in os.walk(staging):
                for name in names:
                    with open(os.path.join(root, name), "rb") as handle:
                        os.fsync(handle.fileno())
            _fsync_directory(staging)
            if target.exists():
                if not force:  # appeared while building
                    raise FileExistsError(f"{os.fspath(directory)!r} appeared while writing; pass force=True")
                _exchange(staging, target)  # staging now holds the old folder
            else:
                os.rename(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    _fsync_directory(target.parent)
    return target.resolve()
