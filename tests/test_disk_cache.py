"""hf_bpe.core.disk_cache: entries round-trip; damaged, torn or absent entries read as None; a cache that is off
or cannot be written costs nothing but the rebuild; an entry another user could have written (or a symlink, a FIFO,
a wrong size) is ignored with one warning. And the scanner's class tables through it."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import warnings

import pytest

from hf_bpe.core import disk_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(disk_cache, "_warned", False)  # one warning per process: each test starts unwarned
    return tmp_path / "cache"


def _load(name, size):
    return disk_cache.load(name, sizes=(size,))


def test_disk_cache_round_trip_and_overwrite(cache):
    assert _load("a-v1.bin", 5) is None
    disk_cache.store("a-v1.bin", b"first")
    disk_cache.store("a-v1.bin", b"second")
    assert _load("a-v1.bin", 6) == b"second"
    assert _load("b-v1.bin", 6) is None
    assert [p.name for p in cache.iterdir()] == ["a-v1.bin"]  # no temporary file left behind


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_disk_cache_damaged_entry_reads_as_absent(cache, damage):
    disk_cache.store("a-v1.bin", b"payload" * 100)
    path = cache / "a-v1.bin"
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[3] ^= 1
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    assert disk_cache.load("a-v1.bin", sizes=range(701)) is None


def test_disk_cache_off_and_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, "")
    assert disk_cache.cache_dir() is None
    disk_cache.store("a-v1.bin", b"x")
    assert _load("a-v1.bin", 1) is None
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(blocker / "cache"))
    disk_cache.store("a-v1.bin", b"x")  # cannot create the folder: silently nothing
    assert _load("a-v1.bin", 1) is None


def test_disk_cache_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(disk_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_dir() == tmp_path / "hf_bpe"


def test_disk_cache_folder_created_private(cache):
    disk_cache.store("a-v1.bin", b"x")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "a-v1.bin").stat().st_mode) == 0o600


def _ignored(name, size):
    """Load expecting the entry to be ignored: return the one warning's message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _load(name, size) is None
    assert len(caught) == 1, [str(w.message) for w in caught]
    return str(caught[0].message)


def test_disk_cache_ignores_folder_or_entry_others_can_write(cache):
    disk_cache.store("a-v1.bin", b"payload")
    cache.chmod(0o777)  # a shared, world-writable cache folder: the checksum proves nothing
    assert "writable by group or others (mode 777)" in _ignored("a-v1.bin", 7)
    disk_cache.store("a-v1.bin", b"other")  # and nothing is written there either
    cache.chmod(0o700)
    assert _load("a-v1.bin", 7) == b"payload"
    (cache / "a-v1.bin").chmod(0o620)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per process: already given by _ignored above
        assert _load("a-v1.bin", 7) is None
    disk_cache._warned = False
    assert "entry is writable by group or others (mode 620)" in _ignored("a-v1.bin", 7)


def test_disk_cache_default_folder_made_private_again(tmp_path, monkeypatch):
    """A default folder an older version created under umask 002 (0o775) is this user's: store makes it 0o700."""
    monkeypatch.delenv(disk_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(disk_cache, "_warned", False)
    folder = tmp_path / "hf_bpe"
    folder.mkdir(mode=0o775)
    folder.chmod(0o775)
    assert "writable by group or others (mode 775)" in _ignored("a-v1.bin", 7)
    disk_cache.store("a-v1.bin", b"payload")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _load("a-v1.bin", 7) == b"payload"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
@pytest.mark.parametrize("owned", ["folder", "entry"])
def test_disk_cache_ignores_what_another_user_owns(cache, owned):
    disk_cache.store("a-v1.bin", b"payload")
    os.chown(cache if owned == "folder" else cache / "a-v1.bin", 4242, -1)
    assert "belongs to uid 4242" in _ignored("a-v1.bin", 7)


def test_disk_cache_ignores_an_entry_of_another_size(cache):
    disk_cache.store("a-v1.bin", b"payload")
    assert "size (39 bytes)" in _ignored("a-v1.bin", 8)
    assert disk_cache.load("a-v1.bin", sizes=range(5, 10)) == b"payload"


# Run in a child process: on a cache that follows links, /dev/zero reads until MemoryError (bounded here by the
# address-space limit) and a FIFO blocks the read forever (the timeout is a safety net that fails the test; what is
# asserted is the output).
_CHILD_LOAD = """
import resource, sys, warnings
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from hf_bpe.core import disk_cache
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(repr(disk_cache.load("a-v1.bin", sizes=(7,))))
print(len(caught), *(str(w.message) for w in caught))
"""


def _load_in_child(cache):
    env = {**os.environ, disk_cache.CACHE_ENV: str(cache)}
    out = subprocess.run([sys.executable, "-c", _CHILD_LOAD], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_disk_cache_ignores_a_symlink_to_dev_zero(cache):
    disk_cache.store("b-v1.bin", b"payload")
    (cache / "a-v1.bin").symlink_to("/dev/zero")
    result, warned = _load_in_child(cache)
    assert result == "None" and warned.startswith("1 ") and "symbolic link" in warned


def test_disk_cache_ignores_a_fifo_without_blocking(cache):
    disk_cache.store("b-v1.bin", b"payload")
    os.mkfifo(cache / "a-v1.bin", 0o600)  # nobody ever writes to it
    result, warned = _load_in_child(cache)
    assert result == "None" and warned.startswith("1 ") and "not a regular file" in warned


_PROBE = ("import hashlib, json; from hf_bpe.core import _scanner; _scanner.split('x', 0); "
          "print(json.dumps([_scanner.TABLE_SOURCE, hashlib.sha256(_scanner.class_table()).hexdigest(), "
          "[_scanner.split(t, p) for t in ['Ǉ\\'S ſ\\'T', '\\u3000x1'] for p in range(5)]]))")


def _probe(cache_dir):
    env = {**os.environ, disk_cache.CACHE_ENV: str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_disk_cache_scanner_tables_built_once_then_read_equal(tmp_path):
    built = _probe(tmp_path)
    read = _probe(tmp_path)
    assert built[0] == "regex" and read[0] == "cache"
    assert read[1:] == built[1:]
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:-1] + b"\0")  # damaged: rebuilt from regex, and written again
    again = _probe(tmp_path)
    assert again[0] == "regex" and again[1:] == built[1:]
    assert _probe(tmp_path)[0] == "cache"
    # An intact entry that is not a table (another layout under the name) is rebuilt too, and so is a table that
    # breaks the scanners' invariants (here: every code point a letter and a digit).
    entry.write_bytes(b"short" + hashlib.sha256(b"short").digest())
    assert _probe(tmp_path)[0] == "regex" and _probe(tmp_path)[1:] == built[1:]
    payload = bytes([3]) * 0x110000 + bytes(128)
    entry.write_bytes(payload + hashlib.sha256(payload).digest())
    assert _probe(tmp_path)[0] == "regex" and _probe(tmp_path)[1:] == built[1:]


def test_disk_cache_forged_compact_table_is_rebuilt(tmp_path):
    """Checksummed entries of the compact layout that would read out of bounds or are not a table: rebuilt."""
    built = _probe(tmp_path)
    (entry,) = tmp_path.iterdir()
    payload = entry.read_bytes()[:-32]
    out_of_range = bytearray(payload)
    out_of_range[0x10000 + 2 * 0xF6:0x10000 + 2 * 0xF7] = (0xFFFF).to_bytes(2, "little")  # U+1F600's block
    stage2 = 0x10000 + 2 * 0x1000
    for forged in (bytes(out_of_range), payload + b"\0", payload[:stage2] + bytes(256) + payload[stage2:]):
        entry.write_bytes(forged + hashlib.sha256(forged).digest())
        assert _probe(tmp_path) == ["regex", *built[1:]]
    assert entry.read_bytes()[:-32] == payload  # written again as built


_BOX = ("from hf_bpe.core import _scanner; print(_scanner.split(' box X9', 0), _scanner.TABLE_SOURCE)")


def test_disk_cache_poisoned_table_in_a_shared_folder_is_not_used(tmp_path):
    """Another user of a world-writable cache writes a checksummed table that marks x and X as digits."""
    env = {**os.environ, disk_cache.CACHE_ENV: str(tmp_path)}
    clean = subprocess.run([sys.executable, "-c", _BOX], env=env, capture_output=True, text=True, check=True).stdout
    assert clean == "[' box', ' X', '9'] regex\n"
    (entry,) = tmp_path.iterdir()
    payload = bytearray(entry.read_bytes()[:-32])
    payload[ord("x")] = payload[ord("X")] = payload[ord("9")]
    entry.write_bytes(bytes(payload) + hashlib.sha256(payload).digest())
    tmp_path.chmod(0o777)
    out = subprocess.run([sys.executable, "-c", _BOX], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == clean  # rebuilt from regex: ' box' stays one piece
    assert "writable by group or others" in out.stderr
