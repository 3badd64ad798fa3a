"""Tests for hf_bpe.formats.atomic.write_files: every branch, and injected failures that must leave nothing half-done."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.formats import atomic
from hf_bpe.formats.atomic import write_files


def _hidden(folder: Path) -> list[str]:
    """Temp/backup leftovers: hf_bpe's are hidden names."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _fail_on_call(real, number: int, exc: BaseException):
    """Wrap ``real`` so that its ``number``-th call (1-based) raises ``exc``; other calls go through."""
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == number:
            raise exc
        return real(*args, **kwargs)

    return wrapper


# ----------------------------------------------------------------------------------------------------------------
# new folder
# ----------------------------------------------------------------------------------------------------------------

def test_atomic_new_directory_with_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "tok"
    files = {"vocab.json": '{"é":0}', "merges.txt": b"#version: 0.2\r\nx y\n", "empty.bin": b""}
    out = write_files(target, files)
    assert out == target.resolve() and isinstance(out, Path)
    assert _snapshot(target) == {"empty.bin": b"", "merges.txt": b"#version: 0.2\r\nx y\n",
                                 "vocab.json": '{"é":0}'.encode("utf-8")}
    assert _hidden(target) == [] and _hidden(target.parent) == []


def test_atomic_new_directory_gets_normal_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_files(tmp_path / "tok", {"a.txt": "x"})
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "tok").stat().st_mode) == 0o755  # not mkdtemp's 0o700
    assert stat.S_IMODE((tmp_path / "tok" / "a.txt").stat().st_mode) == 0o644  # not mkstemp's 0o600


def test_atomic_new_directory_empty_mapping(tmp_path: Path) -> None:
    assert write_files(tmp_path / "empty", {}).is_dir()
    assert list((tmp_path / "empty").iterdir()) == []


def test_atomic_new_directory_write_failure_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(atomic.os, "write", _fail_on_call(os.write, 2, OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        write_files(tmp_path / "tok", {"a.txt": "one", "b.txt": "two"})
    assert list(tmp_path.iterdir()) == []


def test_atomic_new_directory_rename_failure_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(atomic.os, "rename", _fail_on_call(os.rename, 1, OSError(5, "I/O error")))
    with pytest.raises(OSError, match="I/O error"):
        write_files(tmp_path / "tok", {"a.txt": "one"})
    assert list(tmp_path.iterdir()) == []


def test_atomic_new_directory_interrupt_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(atomic.os, "fsync", _fail_on_call(os.fsync, 2, KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        write_files(tmp_path / "tok", {"a.txt": "one", "b.txt": "two"})
    assert list(tmp_path.iterdir()) == []


def test_atomic_folder_appearing_meanwhile_is_treated_as_existing(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "tok"
    real_rename = os.rename

    def racing_rename(src, dst):
        # Another process creates the folder (with a file) just before our rename.
        target.mkdir()
        (target / "theirs.txt").write_bytes(b"keep")
        return real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", racing_rename)
    write_files(target, {"ours.txt": "new"})
    assert _snapshot(target) == {"ours.txt": b"new", "theirs.txt": b"keep"}
    assert _hidden(target) == [] and _hidden(tmp_path) == []


def test_atomic_folder_appearing_meanwhile_with_conflict_refuses(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "tok"
    real_rename = os.rename

    def racing_rename(src, dst):
        target.mkdir()
        (target / "ours.txt").write_bytes(b"theirs")
        return real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", racing_rename)
    with pytest.raises(FileExistsError, match="ours.txt"):
        write_files(target, {"ours.txt": "new"})
    assert _snapshot(target) == {"ours.txt": b"theirs"}
    assert _hidden(target) == [] and _hidden(tmp_path) == []


# ----------------------------------------------------------------------------------------------------------------
# existing folder
# ----------------------------------------------------------------------------------------------------------------

def test_atomic_existing_directory_adds_files_and_keeps_others(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_bytes(b"mine")
    assert write_files(tmp_path, {"vocab.json": "{}", "merges.txt": "#version: 0.2\n"}) == tmp_path.resolve()
    assert _snapshot(tmp_path) == {"README.md": b"mine", "merges.txt": b"#version: 0.2\n", "vocab.json": b"{}"}
    assert _hidden(tmp_path) == []


def test_atomic_existing_files_refused_without_force(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_bytes(b"old vocab")
    (tmp_path / "merges.txt").write_bytes(b"old merges")
    with pytest.raises(FileExistsError) as info:
        write_files(tmp_path, {"vocab.json": "new", "merges.txt": "new", "tokenizer.json": "new"})
    message = str(info.value)
    assert "merges.txt, vocab.json" in message and "tokenizer.json" not in message
    assert "pass force=True (CLI: --force) to replace them" in message
    # nothing was written, not even the file that did not exist
    assert _snapshot(tmp_path) == {"merges.txt": b"old merges", "vocab.json": b"old vocab"}
    assert _hidden(tmp_path) == []


def test_atomic_force_replaces_and_keeps_others_and_modes(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_bytes(b"old vocab")
    os.chmod(tmp_path / "vocab.json", 0o600)
    (tmp_path / "other.txt").write_bytes(b"untouched")
    write_files(tmp_path, {"vocab.json": "new\r\n", "tokenizer.json": b"\x00\xff"}, force=True)
    assert _snapshot(tmp_path) == {"other.txt": b"untouched", "tokenizer.json": b"\x00\xff", "vocab.json": b"new\r\n"}
    assert stat.S_IMODE((tmp_path / "vocab.json").stat().st_mode) == 0o600
    assert _hidden(tmp_path) == []


def test_atomic_force_replaces_a_symlink_not_its_target(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside")
    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / "vocab.json").symlink_to(outside)
    with pytest.raises(FileExistsError):
        write_files(folder, {"vocab.json": "new"})
    write_files(folder, {"vocab.json": "new"}, force=True)
    assert not (folder / "vocab.json").is_symlink() and (folder / "vocab.json").read_bytes() == b"new"
    assert outside.read_bytes() == b"outside"


def test_atomic_directory_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "tok").write_bytes(b"a file")
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        write_files(tmp_path / "tok", {"a.txt": "x"})
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        write_files(tmp_path / "tok" / "sub", {"a.txt": "x"})
    assert (tmp_path / "tok").read_bytes() == b"a file"
    assert _hidden(tmp_path) == []


def test_atomic_target_name_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").mkdir()
    with pytest.raises(IsADirectoryError, match="vocab.json"):
        write_files(tmp_path, {"vocab.json": "x", "merges.txt": "y"}, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vocab.json"]


def test_atomic_existing_directory_write_failure_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_bytes(b"old a")
    monkeypatch.setattr(atomic.os, "write", _fail_on_call(os.write, 2, OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        write_files(tmp_path, {"a.txt": "new a", "b.txt": "new b"}, force=True)
    assert _snapshot(tmp_path) == {"a.txt": b"old a"}
    assert _hidden(tmp_path) == []


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_atomic_replace_failure_midway_restores_everything(tmp_path: Path, monkeypatch, failing_call: int) -> None:
    # new.txt does not exist yet; a.txt and b.txt do. The N-th os.replace fails: the replaces before it are undone.
    (tmp_path / "a.txt").write_bytes(b"old a")
    (tmp_path / "b.txt").write_bytes(b"old b")
    (tmp_path / "keep.txt").write_bytes(b"keep")
    before = _snapshot(tmp_path)
    monkeypatch.setattr(atomic.os, "replace", _fail_on_call(os.replace, failing_call, OSError(5, "I/O error")))
    with pytest.raises(OSError, match="I/O error"):
        write_files(tmp_path, {"new.txt": "n", "a.txt": "new a", "b.txt": "new b"}, force=True)
    assert _snapshot(tmp_path) == before
    assert _hidden(tmp_path) == []


def test_atomic_interrupt_during_replaces_restores_everything(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_bytes(b"old a")
    (tmp_path / "b.txt").write_bytes(b"old b")
    before = _snapshot(tmp_path)
    monkeypatch.setattr(atomic.os, "replace", _fail_on_call(os.replace, 2, KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        write_files(tmp_path, {"a.txt": "new a", "b.txt": "new b"}, force=True)
    assert _snapshot(tmp_path) == before
    assert _hidden(tmp_path) == []


def test_atomic_interrupt_just_after_a_replace_restores_it(tmp_path: Path, monkeypatch) -> None:
    # The interrupt lands after os.replace did its work but before write_files could note it.
    (tmp_path / "a.txt").write_bytes(b"old a")
    before = _snapshot(tmp_path)
    real = os.replace
    calls = {"n": 0}

    def replace_then_interrupt(src, dst):
        real(src, dst)
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_files(tmp_path, {"new.txt": "n", "a.txt": "new a"}, force=True)
    assert _snapshot(tmp_path) == before
    assert _hidden(tmp_path) == []


def test_atomic_failed_restore_keeps_old_contents_in_named_backup(tmp_path: Path, monkeypatch) -> None:
    # Second replace fails, and so does the restore of the first: the old a.txt must survive in a named backup.
    (tmp_path / "a.txt").write_bytes(b"old a")
    (tmp_path / "b.txt").write_bytes(b"old b")
    real = os.replace
    calls = {"n": 0}

    def flaky_replace(src, dst):
        calls["n"] += 1
        if calls["n"] >= 2:
            raise OSError(5, "I/O error")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", flaky_replace)
    with pytest.raises(OSError) as info:
        write_files(tmp_path, {"a.txt": "new a", "b.txt": "new b"}, force=True)
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "could not restore ['a.txt']" in notes
    backups = [p for p in tmp_path.iterdir() if p.name.startswith(".a.txt.bak-")]
    assert len(backups) == 1 and backups[0].read_bytes() == b"old a" and backups[0].name in notes
    assert (tmp_path / "b.txt").read_bytes() == b"old b"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]  # temp files are gone


# ----------------------------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("files, error, message", [
    ([("a", "b")], TypeError, "files must be a mapping"),
    ({1: "x"}, TypeError, "file names must be str, got int 1"),
    ({"a.txt": 3}, TypeError, "contents of 'a.txt' must be bytes or str, got int 3"),
    ({"": "x"}, ValueError, "'' is not a plain file name"),
    ({"..": "x"}, ValueError, "'..' is not a plain file name"),
    ({"sub/a.txt": "x"}, ValueError, "'sub/a.txt' is not a plain file name"),
    ({"a\0b": "x"}, ValueError, "is not a plain file name"),
    ({"a.txt": "\ud800"}, ValueError, "cannot be written as UTF-8"),
])
def test_atomic_validation(tmp_path: Path, files, error, message) -> None:
    with pytest.raises(error, match=message):
        write_files(tmp_path / "tok", files)
    assert list(tmp_path.iterdir()) == []


def test_atomic_validation_of_arguments(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="directory must be a str or os.PathLike, got int 3"):
        write_files(3, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="force must be a bool, got str 'yes'"):
        write_files(tmp_path, {}, force="yes")  # type: ignore[arg-type]
    assert write_files(str(tmp_path / "s"), {"a": bytearray(b"x")}) == (tmp_path / "s").resolve()
    assert (tmp_path / "s" / "a").read_bytes() == b"x"


@settings(deadline=None, derandomize=True, max_examples=50)
@given(contents=st.dictionaries(st.sampled_from(["a.txt", "b.bin", "vocab.json"]),
                                st.one_of(st.binary(max_size=300), st.text(max_size=100)), max_size=3))
def test_atomic_contents_written_exactly(contents, tmp_path_factory) -> None:
    folder = tmp_path_factory.mktemp("prop")
    write_files(folder / "new", contents)
    write_files(folder, contents, force=True)
    for where in (folder / "new", folder):
        for name, data in contents.items():
            expected = data.encode("utf-8") if isinstance(data, str) else data
            assert (where / name).read_bytes() == expected
        assert _hidden(where) == []


# -- replace_folder: a tokenizer folder swapped in as a set (issue 13) -------------------------------------------

import json as _json
import subprocess as _subprocess
import sys as _sys
import textwrap as _textwrap

_ROOT = Path(__file__).resolve().parents[1]


def _model_files(seed: int) -> dict[str, str]:
    import hf_bpe

    texts = [f"low lower lowest {seed} newer newest {'x' * seed}"] * 20
    return hf_bpe.train(texts, vocab_size=262 + seed, show_progress=False).files()


def _version_of(folder: Path, versions: dict[str, dict[str, str]]) -> str:
    """Name the version every hf_bpe file in `folder` belongs to; fail on a mix."""
    candidates = set(versions)
    for name in versions["old"]:
        text = (folder / name).read_text(encoding="utf-8")
        candidates &= {v for v, files in versions.items() if files[name] == text}  # (files may agree across versions)
    assert candidates, f"mixed folder: no version has all of {sorted(versions['old'])} as they are"
    return min(candidates)


def test_atomic_replace_folder_keeps_other_entries(tmp_path):
    from hf_bpe.formats.atomic import replace_folder

    target = tmp_path / "tok"
    replace_folder(target, {"vocab.json": "1"})
    (target / "notes.txt").write_text("mine")
    (target / "sub").mkdir()
    (target / "sub" / "deep.txt").write_text("deep")
    (target / "link").symlink_to("notes.txt")
    with pytest.raises(FileExistsError, match="force=True"):
        replace_folder(target, {"vocab.json": "2"})
    replace_folder(target, {"vocab.json": "2", "merges.txt": "m"}, force=True)
    assert (target / "vocab.json").read_text() == "2" and (target / "notes.txt").read_text() == "mine"
    assert (target / "sub" / "deep.txt").read_text() == "deep" and os.readlink(target / "link") == "notes.txt"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "tok") == []  # issue 22: no lock file left


_KILLER = """
import json, os, sys
from pathlib import Path
from hf_bpe.formats import atomic
import shutil
target, new, kill_at = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), int(sys.argv[3])
calls = [0]

def step(function):
    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] == kill_at:
            os._exit(9)  # as SIGKILL: no cleanup, no finally
        result = function(*args, **kwargs)
        calls[0] += 1
        if calls[0] == kill_at:
            os._exit(9)
        return result
    return wrapped

for name in ("_write_file", "_link_or_copy", "_exchange", "_fsync_directory"):
    setattr(atomic, name, step(getattr(atomic, name)))
atomic.shutil.rmtree = step(shutil.rmtree)
atomic.os.rename = step(os.rename)
if sys.argv[4:] == ["two-renames"]:  # as where renameat2 is missing (macOS, NFS, vfat, some FUSE)
    atomic._renameat2 = lambda: None
atomic.replace_folder(target, new, force=True)
print("steps", calls[0])
"""


def _run_killer(target: Path, new_file: Path, kill_at: int, *mode: str) -> _subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")])}
    return _subprocess.run([_sys.executable, "-c", _KILLER, str(target), str(new_file), str(kill_at), *mode],
                           env=env, capture_output=True, text=True, timeout=120)


def _killer_setup(tmp_path: Path, *mode: str) -> tuple[dict, Path, Path, int]:
    """The old and new file sets, the new one's JSON file, the folder (old set and the user's notes.txt) and the
    number of steps a write of the new set takes (a run with no kill)."""
    from hf_bpe.formats.atomic import replace_folder

    versions = {"old": _model_files(1), "new": _model_files(2)}
    new_file = tmp_path / "new.json"
    new_file.write_text(_json.dumps(versions["new"]))
    target = tmp_path / "tok"
    replace_folder(target, versions["old"])
    (target / "notes.txt").write_text("mine")
    done = _run_killer(target, new_file, 0, *mode)  # no kill: count the steps
    assert done.returncode == 0, done.stderr
    return versions, new_file, target, int(done.stdout.split()[-1])


def test_atomic_replace_folder_killed_at_every_step_leaves_old_or_new(tmp_path):
    from hf_bpe.formats.atomic import replace_folder
    from hf_bpe.tools.verify import verify

    versions, new_file, target, steps = _killer_setup(tmp_path)
    assert steps > 10
    seen = set()
    for kill_at in range(1, steps + 1):
        replace_folder(target, versions["old"], force=True)  # also clears what the previous kill left
        done = _run_killer(target, new_file, kill_at)
        assert done.returncode == 9, (kill_at, done.stderr)
        seen.add(_version_of(target, versions))
        assert (target / "notes.txt").read_text() == "mine"
        assert verify(target).ok, (kill_at, verify(target).format())
    assert seen == {"old", "new"}  # some kills came before the swap, some after
    replace_folder(target, versions["new"], force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "tok"]  # a killed run's lock file went too


def test_atomic_replace_folder_two_rename_swap_killed_at_every_step_loses_nothing(tmp_path):
    # Issue 33.4: without renameat2 the swap is two renames; a kill between them left the old folder only at
    # .tok.hf_bpe-XXXX-old, and the next write deleted it with the other leftovers. Now it is put back first.
    from hf_bpe.formats.atomic import replace_folder
    from hf_bpe.tools.verify import verify

    versions, new_file, target, steps = _killer_setup(tmp_path, "two-renames")
    between = 0
    for kill_at in range(1, steps + 1):
        replace_folder(target, versions["old"], force=True)
        done = _run_killer(target, new_file, kill_at, "two-renames")
        assert done.returncode == 9, (kill_at, done.stderr)
        if not target.exists():  # killed between the two renames: the old folder is only in the -old sibling
            between += 1
            aside = [p for p in tmp_path.iterdir() if p.name.endswith("-old")]
            assert len(aside) == 1 and (aside[0] / "notes.txt").read_text() == "mine"
            with pytest.raises(FileExistsError, match="force=True"):  # restored, then refused as before
                replace_folder(target, versions["new"])
            assert _version_of(target, versions) == "old" and verify(target).ok
        assert (target / "notes.txt").read_text() == "mine"
        replace_folder(target, versions["new"], force=True)  # the next write keeps the user's folder's entries
        assert (target / "notes.txt").read_text() == "mine" and _version_of(target, versions) == "new"
        assert verify(target).ok
    assert between == 2  # right after the first rename, and right before the second
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "tok"]


def test_atomic_replace_folder_keeps_an_old_folder_the_target_lacks_and_warns(tmp_path):
    # A -old sibling beside a folder that lacks some of its entries (the user made a new folder by hand after a
    # killed swap) is never deleted: it stays, and a warning names it.
    from hf_bpe.formats.atomic import replace_folder

    target = tmp_path / "tok"
    replace_folder(target, {"vocab.json": "1"})
    aside = tmp_path / ".tok.hf_bpe-0123abcd-old"
    aside.mkdir()
    (aside / "notes.txt").write_text("mine")
    with pytest.warns(RuntimeWarning, match=r"\.tok\.hf_bpe-0123abcd-old.*it is kept"):
        replace_folder(target, {"vocab.json": "2"}, force=True)
    assert (aside / "notes.txt").read_text() == "mine"
    (target / "notes.txt").write_text("copied")  # once the folder holds every entry, the leftover goes
    replace_folder(target, {"vocab.json": "3"}, force=True)
    assert not aside.exists()


@pytest.mark.parametrize("writers", [2, 4])
def test_atomic_replace_folder_concurrent_writers_never_mix(tmp_path, writers):
    from hf_bpe.tools.verify import verify

    versions = {f"v{i}": _model_files(i) for i in range(writers)}
    versions["old"] = versions["v0"]
    target = tmp_path / "tok"
    script = _textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from hf_bpe.formats.atomic import replace_folder
        files = json.loads(Path(sys.argv[2]).read_text())
        for _ in range(5):
            replace_folder(sys.argv[1], files, force=True)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = []
    for i in range(writers):
        path = tmp_path / f"v{i}.json"
        path.write_text(_json.dumps(versions[f"v{i}"]))
        procs.append(_subprocess.Popen([_sys.executable, "-c", script, str(target), str(path)], env=env,
                                       stderr=_subprocess.PIPE, text=True))
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    assert _version_of(target, versions) and verify(target).ok
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tok.")]


# -- the lock file: removed after each write, mutual exclusion kept (issue 22) -----------------------------------


def test_atomic_folder_lock_removed_on_release_and_a_waiter_on_the_removed_file_starts_over(tmp_path, monkeypatch):
    # The interleaving that makes unlinking a lock file unsafe, forced step by step (no timing): B opens the lock
    # file while A holds it; A removes it and releases; C creates a new one and holds it; only then does B lock the
    # old file. B must see that the path no longer names the file it locked and wait for C's, not enter beside C.
    import fcntl
    import queue
    import threading

    target = tmp_path / "tok"
    lock_file = tmp_path / ".tok.hf_bpe-lock"
    events: queue.Queue[str] = queue.Queue()
    c_holds = threading.Event()
    real_flock = fcntl.flock
    b_calls = []

    def flock(fd, operation):
        if threading.current_thread().name == "B":
            b_calls.append(os.fstat(fd).st_ino)
            events.put(f"B locks #{len(b_calls)}")
            if len(b_calls) == 1:
                c_holds.wait()  # B's first lock, on A's file, is granted only after C holds the new one
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)

    def writer_b():
        with atomic._folder_lock(target):
            events.put("B inside")

    b = threading.Thread(target=writer_b, name="B", daemon=True)
    try:
        with atomic._folder_lock(target):  # A
            a_file = lock_file.stat().st_ino
            b.start()
            assert events.get() == "B locks #1"  # B has opened A's file
        assert not lock_file.exists()  # A removed its lock file when it released it
        with atomic._folder_lock(target):  # C
            c_holds.set()
            # B found A's file gone and waits on C's; entering beside C would put "B inside" here instead.
            assert events.get() == "B locks #2"
            assert b_calls[0] == a_file and b_calls[1] == lock_file.stat().st_ino != a_file
    finally:
        c_holds.set()  # a failed assertion must not leave B waiting
    b.join()
    # C removed its file too when it released it: B locks a third, new file, and enters alone.
    assert [events.get() for _ in range(events.qsize())] == ["B locks #3", "B inside"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- a symbolic link to a folder is written through (issue 22) ---------------------------------------------------


def _two_models():
    from hf_bpe import train

    texts = ["hello world, hello there"] * 5
    return train(texts, vocab_size=260, show_progress=False), train(texts, vocab_size=262, show_progress=False)


@pytest.mark.parametrize("writer", ["BPEModel.save", "save_pretrained", "replace_folder", "build_folder"])
def test_atomic_output_symlink_to_a_folder_is_written_through(tmp_path, writer):
    from hf_bpe import HFBPETokenizer

    old, new = _two_models()
    real = tmp_path / "models" / "real"
    old.save(real)
    (real / "notes.txt").write_text("mine")
    link = tmp_path / "out"
    link.symlink_to(os.path.join("models", "real"))  # relative, as `ln -s` is often used
    if writer == "BPEModel.save":
        returned = new.save(link, force=True)
    elif writer == "save_pretrained":
        HFBPETokenizer.from_model(new).save_pretrained(link)
        returned = real
    elif writer == "replace_folder":
        returned = atomic.replace_folder(link, new.files(), force=True)
    else:
        returned = atomic.build_folder(link, lambda staging: (staging / "vocab.json").write_text("{}"), force=True)
    assert link.is_symlink() and os.readlink(link) == os.path.join("models", "real")
    assert Path(returned).resolve() == real.resolve()
    if writer == "build_folder":  # replaces the folder whole
        assert sorted(p.name for p in real.iterdir()) == ["vocab.json"]
    else:
        assert (real / "vocab.json").read_text(encoding="utf-8") == new.files()["vocab.json"]
        assert (real / "notes.txt").read_text() == "mine"
    # Nothing left behind: no hidden staging folder, link or lock file beside the link or the folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "out"]
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["real"]


@pytest.mark.parametrize("writer", ["replace_folder", "write_files", "build_folder"])
def test_atomic_dangling_symlink_is_refused_clearly(tmp_path, writer):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(FileNotFoundError, match=r"'.*out' is a symbolic link to '.*gone', which does not exist"):
        if writer == "build_folder":
            atomic.build_folder(link, lambda staging: None)
        else:
            getattr(atomic, writer)(link, {"vocab.json": "{}"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and not (tmp_path / "gone").exists()


# -- out of space: the error names what was being written (issue 22) ---------------------------------------------


@pytest.mark.parametrize("writer", ["replace_folder new", "replace_folder existing", "write_files", "build_folder"])
def test_atomic_full_disk_error_names_the_folder_being_written(tmp_path, monkeypatch, writer):
    # os.write and fsync report ENOSPC without a file name; the CLI printed "cannot read or write None".
    import errno

    target = tmp_path / "tok"
    if writer != "replace_folder new":
        target.mkdir()
        (target / "vocab.json").write_text("old")
    real_write = os.write

    def full_disk(fd, data):
        if fd > 2:  # the files being written, not the test's own output
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    def build(staging):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as pyarrow's writer reports it

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError) as caught:
        if writer == "build_folder":
            atomic.build_folder(target, build, force=True)
        else:
            getattr(atomic, writer.split()[0])(target, {"vocab.json": "new", "merges.txt": "m"}, force=True)
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == os.fspath(target)
    assert str(caught.value) == f"[Errno {errno.ENOSPC}] {os.strerror(errno.ENOSPC)}: {os.fspath(target)!r}"
    # And nothing changed.
    if writer == "replace_folder new":
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]
        assert sorted(p.name for p in target.iterdir()) == ["vocab.json"]
        assert (target / "vocab.json").read_text() == "old"
