"""TokenFileWriter (formats/token_file.py): the encoder's int32 buffers packed in C equal numpy's packing of any
integers, ids that do not fit refused, and a failed write raised in the caller's thread."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from hf_bpe.formats.token_file import TokenFileWriter, read_token_file, write_token_file


@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_token_file_writer_packs_int32_buffers_as_numpy_does_and_refuses_ids_that_do_not_fit(tmp_path, dtype):
    ids = np.array([0, 1, 65535, 300, 7], dtype=np.int32)
    for name, pieces in (("c", (ids, np.array([0, 2, 5]))), ("lists", (ids.tolist(), [0, 2, 5]))):
        folder = tmp_path / name
        folder.mkdir()
        writer = TokenFileWriter(folder, dtype=dtype, tokenizer={})
        writer.append(*pieces)
        writer.append(np.array([9], dtype=np.int32), np.array([0, 1]))
        writer.close()
    for file in ("tokens.bin", "offsets.bin", "tokens.json"):
        assert (tmp_path / "c" / file).read_bytes() == (tmp_path / "lists" / file).read_bytes()
    got, index = read_token_file(tmp_path / "c")
    assert got.tolist() == [0, 1, 65535, 300, 7, 9] and index["document_offsets"].tolist() == [0, 2, 5, 6]
    writer = TokenFileWriter(tmp_path, dtype="uint16", tokenizer={})
    with pytest.raises(ValueError, match=r"an id \(65536\) does not fit uint16"):
        writer.append(np.array([3, 65536], dtype=np.int32), np.array([0, 2]))
    with pytest.raises(ValueError, match=r"an id \(-1\) does not fit uint16"):
        writer.append(np.array([-1], dtype=np.int32), np.array([0, 1]))
    writer.abort()


def test_token_file_writer_a_failed_write_is_raised_by_the_next_call_and_abort_ignores_it(tmp_path):
    writer = TokenFileWriter(tmp_path, dtype="uint16", tokenizer={})
    writer._ids.close()  # the writing thread's write fails, as on a full disk
    writer.append(array("i", [1, 2]), array("q", [0, 2]))
    with pytest.raises(ValueError, match="closed file"):
        writer.close()
    writer = TokenFileWriter(tmp_path, dtype="uint16", tokenizer={})
    writer._ids.close()
    writer.append(array("i", [1]), array("q", [0, 1]))
    writer.abort()


# Issue 33.5: every offset is checked (vectorised), in both versions, and the index's counts are JSON ints >= 0: a
# damaged folder is a ValueError naming the file and what is wrong, never offsets returned as valid or numpy's bare
# "cannot mmap an empty file".
def _folder(tmp_path, name="t"):
    import json

    folder = tmp_path / name
    folder.mkdir()
    write_token_file(folder, [[[1, 2], [3], [], [4, 5, 6]]], dtype="uint16", tokenizer={})
    return folder, json.loads((folder / "tokens.json").read_text())


def _put(folder, index=None, offsets=None):
    import json

    if index is not None:
        (folder / "tokens.json").write_text(json.dumps(index))
    if offsets is not None:
        np.asarray(offsets, "<i8").tofile(folder / "offsets.bin")


@pytest.mark.parametrize(("offsets", "message"), [
    ([0, 2, 1, 3, 6], r"offsets.bin': its offsets decrease at entry 2 \(2 then 1\)"),
    ([0, 2, 9, 3, 6], r"decrease at entry 3 \(9 then 3\)"),  # out of range in the middle
    ([0, -1, 3, 3, 6], r"decrease at entry 1 \(0 then -1\)"),
    ([1, 2, 3, 3, 6], r"its offsets run from 1 to 6, not from 0 to the index's 6 tokens"),
])
def test_token_file_every_offset_is_checked(tmp_path, offsets, message):
    folder, _ = _folder(tmp_path)
    assert [list(read_token_file(folder)[1]["document_offsets"])] == [[0, 2, 3, 3, 6]]
    _put(folder, offsets=offsets)
    with pytest.raises(ValueError, match=message):
        read_token_file(folder)


@pytest.mark.parametrize(("field", "value"), [("documents", -1), ("documents", "4"), ("documents", True),
                                              ("tokens", 6.0), ("tokens", None)])
def test_token_file_index_counts_must_be_ints(tmp_path, field, value):
    folder, index = _folder(tmp_path)
    _put(folder, index={**index, field: value})
    with pytest.raises(ValueError, match=rf"tokens.json': '{field}' is .*, not a count \(an int >= 0\)"):
        read_token_file(folder)


@pytest.mark.parametrize(("offsets", "message"), [
    ([0, 2, 1, 6], r"tokens.json': its document_offsets decrease at entry 2 \(2 then 1\)"),
    ([0, 2, 9, 6], r"decrease at entry 3 \(9 then 6\)"),
    ([0, 2, 6], r"its document_offsets hold 3 offsets but the index says 3 documents"),
    ([0, 2, 3, 7], r"run from 0 to 7, not from 0 to the index's 6 tokens"),
    ([0, "2", 3, 6], r"'document_offsets' is .*, not a list of ints"),
    ({"0": 0}, r"'document_offsets' is .*, not a list of ints"),
    ([0, 2, 2**64, 6], r"'document_offsets' holds an int beyond int64"),
])
def test_token_file_version_1_offsets_are_checked(tmp_path, offsets, message):
    folder, index = _folder(tmp_path)
    (folder / "offsets.bin").unlink()
    v1 = {**index, "version": 1, "documents": 3, "document_offsets": [0, 2, 3, 6]}
    del v1["offsets"]
    _put(folder, index=v1)
    assert read_token_file(folder)[1]["document_offsets"] == [0, 2, 3, 6]
    _put(folder, index={**v1, "document_offsets": offsets})
    with pytest.raises(ValueError, match=message):
        read_token_file(folder)
