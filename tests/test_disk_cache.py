"""hf_bpe.core.disk_cache: entries round-trip; damaged, torn or absent entries read as None; a cache that is off
or cannot be written costs nothing but the rebuild. And the scanner's class tables through it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from hf_bpe.core import disk_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_disk_cache_round_trip_and_overwrite(cache):
    assert disk_cache.load("a-v1.bin") is None
    disk_cache.store("a-v1.bin", b"first")
    disk_cache.store("a-v1.bin", b"second")
    assert disk_cache.load("a-v1.bin") == b"second"
    assert disk_cache.load("b-v1.bin") is None
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
    assert disk_cache.load("a-v1.bin") is None


def test_disk_cache_off_and_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, "")
    assert disk_cache.cache_dir() is None
    disk_cache.store("a-v1.bin", b"x")
    assert disk_cache.load("a-v1.bin") is None
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(blocker / "cache"))
    disk_cache.store("a-v1.bin", b"x")  # cannot create the folder: silently nothing
    assert disk_cache.load("a-v1.bin") is None


def test_disk_cache_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(disk_cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_dir() == tmp_path / "hf_bpe"


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
