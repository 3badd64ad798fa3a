"""subword-nmt's bpe.codes: written as learn-bpe writes it, read as apply-bpe reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hf_bpe.errors import InputError
from hf_bpe.formats.bpe_codes import dump_codes, load_codes, parse_codes


def test_bpe_codes_roundtrip(tmp_path: Path) -> None:
    merges = [("t", "h"), ("th", "e</w>"), ("ü", "ber</w>")]
    path = tmp_path / "bpe.codes"
    path.write_text(dump_codes(merges), encoding="utf-8")
    assert load_codes(path) == ((0, 2), merges)
    assert parse_codes(dump_codes(merges, version=(0, 1))) == ((0, 1), merges)


def test_bpe_codes_versions() -> None:
    assert parse_codes("a b\n")[0] == (0, 1)  # no header: version 0.1, as subword-nmt
    assert parse_codes("#version: 0.2.0\na b\n")[0] == (0, 2)
    with pytest.raises(InputError, match="unsupported codes version '#version: 0.3'"):
        parse_codes("#version: 0.3\na b\n")


def test_bpe_codes_bad_input() -> None:
    with pytest.raises(InputError, match=r"bpe.codes line 3: expected two symbols separated by one space, got 'a b c'"):
        parse_codes("#version: 0.2\na b\na b c\n")
    with pytest.raises(InputError, match="cannot be written to a codes file"):
        dump_codes([("a b", "c")])
    with pytest.raises(ValueError, match="version must be one of"):
        dump_codes([("a", "b")], version=(1, 0))


def test_bpe_codes_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bpe.codes"
    path.write_bytes(b"#version: 0.2\n\xff b\n")
    with pytest.raises(InputError, match="is not UTF-8"):
        load_codes(path)


def test_bpe_codes_symbols_with_inner_whitespace_round_trip_through_apply_bpe(tmp_path: Path) -> None:
    # Issue 22.19: learn-bpe splits words on spaces only and writes merges holding tabs, U+00A0, ...; apply-bpe
    # reads them back (each line .strip("\r\n ").split(" ")). Only a space, "\n" and "\r" cannot be written.
    import io

    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    merges = [("a\t", "b"), ("\t", "\t</w>"), ("\xa0c", "\u2028</w>"), ("\x0b", "\x1c\x85")]
    text = dump_codes(merges)
    path = tmp_path / "bpe.codes"
    path.write_bytes(text.encode("utf-8"))
    assert load_codes(path) == ((0, 2), merges)
    ranks = apply_bpe.BPE(io.StringIO(text)).bpe_codes
    assert sorted(ranks, key=ranks.get) == merges
    for bad in (("a b", "c"), ("a", "b\n"), ("a\r", "b"), ("", "b")):
        with pytest.raises(InputError, match=r"cannot be written to a codes file: .*no space, '\\n' or '\\r'"):
            dump_codes([bad])
    # A "\r" inside a line is kept on reading, as subword-nmt's reader keeps it (no newline translation).
    path.write_bytes(b"#version: 0.2\na\rb c\r\n")
    assert load_codes(path) == ((0, 2), [("a\rb", "c")])
