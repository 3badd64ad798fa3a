"""hf_bpe.training.progress: a disabled bar costs nothing (tqdm is not imported), a shown one is tqdm's."""

from __future__ import annotations

import subprocess
import sys


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
