"""BPEModel.load through the per-user cache (model/load_cache.py): the same model as reading the files, an entry per
distinct folder, nothing stale."""

from __future__ import annotations

import json
import pickle

import pytest

from hf_bpe import BPEModel
from hf_bpe.core.disk_cache import CACHE_ENV
from hf_bpe.formats import folder as folder_format
from hf_bpe.model import load_cache


def _model() -> BPEModel:
    vocab = {bytes([b]): b for b in range(256)}
    merges = [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"a", b"n")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    return BPEModel(vocab, merges, special_tokens={"<|end|>": len(vocab)}, pattern="gpt4",
                    roles={"eos_token": "<|end|>"})


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    monkeypatch.setattr(load_cache, "_MIN_BYTES", 0)  # cache the small test folders too
    return folder


def test_load_cache_gives_the_model_read_from_the_files_then_reads_them_no_more(tmp_path, cache, monkeypatch):
    _model().save(tmp_path / "tok")
    first = BPEModel.load(tmp_path / "tok")
    assert len(list(cache.glob("folder-*.bin"))) == 1

    def refuse(directory):
        raise AssertionError("read_folder called on a cached folder")

    monkeypatch.setattr(folder_format, "read_folder", refuse)
    second = BPEModel.load(tmp_path / "tok")
    text = "the then <|end|> an"
    assert second.encode(text, allowed_special="all") == first.encode(text, allowed_special="all")
    assert "_merges" not in vars(second)  # encoding left the merges packed (built from the entry's id triples)
    assert pickle.loads(pickle.dumps(second._encoder)).encode_words([b" then", b"an"]) == [258, 110, 259]
    assert second == first == _model()
    assert second.merges == first.merges and pickle.loads(pickle.dumps(second)) == first
    assert second.digest() == first.digest()
    assert dict(second.roles) == {"eos_token": "<|end|>"} and second.pattern == "gpt4"


def test_load_cache_a_changed_file_or_option_is_another_entry(tmp_path, cache):
    _model().save(tmp_path / "tok")
    BPEModel.load(tmp_path / "tok")
    config = tmp_path / "tok" / "tokenizer_config.json"
    settings = json.loads(config.read_text(encoding="utf-8"))
    settings["pattern"] = "gpt2"
    config.write_text(json.dumps(settings), encoding="utf-8")
    assert BPEModel.load(tmp_path / "tok").pattern == "gpt2"  # not the stale entry's gpt4
    BPEModel.load(tmp_path / "tok", missing_bytes="allow")
    assert len(list(cache.glob("folder-*.bin"))) == 3


def test_load_cache_a_damaged_entry_or_the_cache_off_reads_the_files(tmp_path, cache, monkeypatch):
    _model().save(tmp_path / "tok")
    BPEModel.load(tmp_path / "tok")
    (entry,) = cache.glob("folder-*.bin")
    data = bytearray(entry.read_bytes())
    data[100] ^= 1
    entry.write_bytes(bytes(data))  # the checksum no longer matches: ignored, rebuilt
    assert BPEModel.load(tmp_path / "tok") == _model()
    monkeypatch.setenv(CACHE_ENV, "")
    assert load_cache.folder_key(tmp_path / "tok", "refuse") is None
    assert BPEModel.load(tmp_path / "tok") == _model()


def test_load_cache_small_folders_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    _model().save(tmp_path / "tok")
    BPEModel.load(tmp_path / "tok")
    assert not list((tmp_path / "cache").glob("folder-*.bin"))


def test_load_cache_keeps_the_newest_entries_only(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(load_cache, "_KEEP", 2)
    for n in range(4):
        model = _model()
        BPEModel(dict(model.vocab), model.merges, pattern=["gpt2", "gpt4", "o200k", "llama3"][n]).save(tmp_path / str(n))
        BPEModel.load(tmp_path / str(n))
    (cache / "folder-unrelated.txt").write_text("kept")
    assert len(list(cache.glob("folder-*.bin"))) == 2
    assert (cache / "folder-unrelated.txt").exists()
    assert BPEModel.load(tmp_path / "3").pattern == "llama3"
