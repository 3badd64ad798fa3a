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
