"""The guide's claim (docs/guides/fair-multilingual.md, issue 35): on held-out parallel text, parity-aware BPE spreads
the token cost across languages less than plain BPE with the same number of ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import udhr

import hf_bpe

# Seven languages in five scripts (Latin, Cyrillic, Greek, Devanagari, Arabic, Han), as the guide cuts them.
LANGUAGES = ["eng", "fin", "rus", "ell_monotonic", "hin", "arb", "cmn_hans"]


def cut_udhr(shared_data: Path, folder: Path) -> dict[str, dict[str, Path]]:
    """Write each language's UDHR lines as train (first 60%), dev (next 15%) and held-out (the rest) files."""
    lines = udhr(shared_data, LANGUAGES)
    parts: dict[str, dict[str, Path]] = {"train": {}, "dev": {}, "held": {}}
    for code, mine in lines.items():
        train_end, dev_end = int(len(mine) * 0.6), int(len(mine) * 0.75)
        for part, chunk in (("train", mine[:train_end]), ("dev", mine[train_end:dev_end]), ("held", mine[dev_end:])):
            parts[part][code] = folder / f"{code}.{part}"
            parts[part][code].write_text("".join(chunk), encoding="utf-8")
    return parts


@pytest.mark.crossval
@pytest.mark.shared_data
def test_parity_bpe_is_fairer_than_plain_bpe_on_held_out_text(tmp_path, shared_data) -> None:
    parts = cut_udhr(shared_data, tmp_path)
    plain = hf_bpe.train(list(parts["train"].values()), vocab_size=256 + 800, show_progress=False)
    parity = hf_bpe.train_parity(parts["train"], dev=parts["dev"], num_merges=800, show_progress=False)
    assert plain.vocab_size == parity.vocab_size == 1056
    plain.save(tmp_path / "plain")
    parity.save(tmp_path / "parity")

    report = hf_bpe.evaluate({"plain": tmp_path / "plain", "parity": tmp_path / "parity"}, parts["held"],
                             reference="eng", out=tmp_path / "report")
    spread = {entry["name"]: entry["parity"] for entry in report["tokenizers"]}
    assert spread["parity"]["gini"] < spread["plain"]["gini"]
    assert spread["parity"]["max_over_min"] < spread["plain"]["max_over_min"]
    # The figures the guide shows (exact counts, so exact figures).
    assert {name: (round(s["gini"], 3), round(s["max_over_min"], 3)) for name, s in spread.items()} == {
        "plain": (0.126, 1.962), "parity": (0.043, 1.279)}
    # report.json says the same, and its token counts are the tokenizers' own, line by line.
    written = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert [entry["parity"] for entry in written["tokenizers"]] == [spread["plain"], spread["parity"]]
    from tokenizers import Tokenizer

    for row in report["rows"]:
        library = Tokenizer.from_file(str(tmp_path / row["tokenizer"] / "tokenizer.json"))
        lines = parts["held"][row["language"]].read_text(encoding="utf-8").splitlines(keepends=True)
        assert row["tokens"] == sum(len(library.encode(line, add_special_tokens=False).ids) for line in lines)
