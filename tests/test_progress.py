"""hf_bpe.training.progress: a disabled bar costs nothing (tqdm is not imported), a shown one is tqdm's."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_progress_disabled_bar_does_not_import_tqdm():
    code = ("import sys; from hf_bpe.training.progress import progress_bar\n"
            "with progress_bar(False, desc='x', total=3) as bar:\n"
            "    bar.update(2); bar.set_postfix_str('y', refresh=False)\n"
            "print('tqdm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_progress_shown_bar_is_tqdm_on_stderr(capsys):
    from tqdm import tqdm

    from hf_bpe.training.progress import progress_bar

    with progress_bar(True, desc="merges", total=2) as bar:
        bar.update(2)
    assert isinstance(bar, tqdm)
    captured = capsys.readouterr()
    assert "merges" in captured.err and captured.out == ""


def test_progress_bar_is_erased_when_an_error_ends_its_phase(capsys):
    # Issue 33.12: an error found while a phase runs (a bad byte deep in a file) is not left under a dead bar.
    from hf_bpe.training.progress import progress_bar

    with progress_bar(True, desc="kept", total=2) as bar:
        bar.update(2)
    kept = capsys.readouterr().err
    assert "kept: 100%" in kept and kept.endswith("\n")
    with pytest.raises(ValueError), progress_bar(True, desc="erased", total=2) as bar:
        bar.update(1)
        raise ValueError("bad input")
    erased = capsys.readouterr().err
    assert "\n" not in erased and erased.endswith("\r")  # the line is blanked, the cursor back at its start
