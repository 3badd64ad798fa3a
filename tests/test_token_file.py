"""TokenFileWriter (formats/token_file.py): the encoder's int32 buffers packed in C equal numpy's packing of any
integers, ids that do not fit refused, and a failed write raised in the caller's thread."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from hf_bpe.formats.token_file import TokenFileWriter, read_token_file


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
