"""Every fenced code block of README.md and of every docs page (docs/**/*.md) runs, page by page in document order,
each page in its own temporary folder.

```bash blocks run line by line through bash, with an ``hf-bpe`` on ``PATH`` that is this interpreter running the
console entry (``hf_bpe._entry.run``), so pipes such as ``cat lines.txt | hf-bpe encode ...`` work as a user's shell
runs them. ```python blocks run through this interpreter, all in one namespace, with the folder as working directory.
```text blocks are listings (output, file contents) and are not run; a block fenced otherwise fails the test, so no
example can hide from it. Each page's folder sits beside a ``shared/data`` link to the real reference data, so the pages'
``../shared/data/...`` paths resolve; blocks that need it (or Spark) skip with a reason when it is absent.

Each block is one test (``README.md:line57-python``, ``docs/guides/unigram.md:line12-bash``); a test first runs the
blocks of its page before it that have not run yet, so ``-k`` on one block works.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_data_path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The pages whose blocks run: the README, then every Markdown page of the docs site, except design notes (they
# describe plans, not commands to run) and the compare reports (written by `hf-bpe compare`, no code blocks).
PAGES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md")
                         if p.relative_to(ROOT / "docs").parts[0] not in ("design",))]

# Page lines the runner must not run as written, and why. Each key must still be a line of a bash block of some
# page (a test checks it), so the table cannot drift from the pages.
REPLACED = {
    "pip install -e . && hf-bpe train --out my-tokenizer": (
        "hf-bpe train --out my-tokenizer",
        "the hf_bpe under test is already installed; pip would reinstall it into the test interpreter",
    ),
}
SKIPPED = {
    "pip install -e '.[test]' && python -m pytest -n auto --maxprocesses 4 --dist loadfile": "this is the test suite itself: running it here would recurse",
    "python -m pytest -n auto --maxprocesses 4 --dist loadfile -m corpus": "the second test step: it would recurse",
    "pip install -e .": "the hf_bpe under test is already installed; pip would reinstall it into the test interpreter",
    "pip install -e '.[docs]' && mkdocs build --strict": "tests/test_docs_site.py builds the site (marked docs)",
}
LISTING = "text"  # the fence of blocks that are not commands (output, file contents)
_RUN = ("bash", "python")

_FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, its language, the line of its opening fence, and its text."""

    language: str
    line: int
    text: str
    page: Path = README

    @property
    def where(self) -> str:
        return self.page.relative_to(ROOT).as_posix()

    @property
    def id(self) -> str:
        return f"{self.where}:line{self.line}-{self.language or 'unfenced'}"


def readme_blocks(text: str, page: Path = README) -> list[Block]:
    """Return the fenced code blocks of a Markdown text, in order (an unclosed fence is an error)."""
    blocks: list[Block] = []
    opened: tuple[str, int] | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if opened is None:
            if match:
                opened, body = (match.group(1), number), []
        elif line.strip() == "```":
            blocks.append(Block(opened[0], opened[1], "\n".join(body) + "\n", page))
            opened = None
        else:
            body.append(line)
    if opened is not None:
        raise ValueError(f"{page.name} line {opened[1]}: a code fence is never closed")
    return blocks


def bash_commands(block: Block) -> list[str]:
    """The commands of a bash block: one per line (``\\`` continues a line), comments and blank lines left out."""
    commands: list[str] = []
    pending = ""
    for line in block.text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def _spark_missing() -> str | None:
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'hf_bpe[spark]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Spark needs a Java runtime (java on PATH or JAVA_HOME)"
    return None


def _uses_spark(block: Block) -> bool:
    return "--spark" in block.text or "hf_bpe.spark" in block.text


def skip_reason(block: Block) -> str | None:
    """Why a block cannot run on this machine (what it needs is absent), or None."""
    if "../shared/data" in block.text and shared_data_path() is None:
        return "the block reads ../shared/data, which is absent (set HF_BPE_SHARED_DATA to its path)"
    if _uses_spark(block):
        return _spark_missing()
    if "import torch" in block.text and importlib.util.find_spec("torch") is None:
        return "the block uses PyTorch, which is not installed (pip install torch)"
    return None


BLOCKS = [block for page in PAGES for block in readme_blocks(page.read_text(encoding="utf-8"), page)]
RUNNABLE = [b for b in BLOCKS if b.language in _RUN]


@dataclass
class ReadmeRun:
    """The state of one run through a page: its folder, the Python namespace, what each block gave."""

    folder: Path
    env: dict[str, str]
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__readme__"})
    outcome: dict[int, str] = field(default_factory=dict)  # block line -> "passed" / "skipped: ..." / "failed: ..."

    def run_up_to(self, block: Block) -> None:
        """Run the blocks before ``block`` that have not run yet; fail if one of them fails.

        Blocks marked ``spark``, ``shared_data`` or ``corpus`` are left out of this catching up: they are leaves (no
        later block reads what they write), so ``-m "not spark"`` does not start Spark through a later block, nor
        the default run a whole-corpus block.
        """
        for earlier in RUNNABLE:
            if earlier.page != block.page:
                continue
            if earlier.line >= block.line:
                return
            if earlier.line not in self.outcome and not _marks(earlier):
                try:
                    self.run(earlier)
                except pytest.skip.Exception:  # recorded; an absent need of an earlier block does not skip this one
                    pass
            if self.outcome.get(earlier.line, "").startswith("failed"):
                pytest.skip(f"the block at {earlier.where} line {earlier.line} failed before this one")

    def run(self, block: Block) -> None:
        """Run one block, recording its outcome (a skip or a failure is raised after being recorded)."""
        reason = skip_reason(block)
        if reason is not None:
            self.outcome[block.line] = f"skipped: {reason}"
            pytest.skip(reason)
        try:
            if block.language == "bash":
                for command in bash_commands(block):
                    self._bash(block, command)
            else:
                self._python(block)
        except BaseException as exc:
            self.outcome[block.line] = f"failed: {exc}"
            raise
        self.outcome[block.line] = "passed"

    def _bash(self, block: Block, command: str) -> None:
        if command in SKIPPED:
            return
        if command in REPLACED:
            command = REPLACED[command][0]
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=self.folder, env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (f"{block.where} block at line {block.line}: `{command}` exited {done.returncode}"
                                      f"\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-4000:]}")

    def _python(self, block: Block) -> None:
        code = compile("\n" * block.line + block.text, str(block.page), "exec")  # tracebacks give the page's lines
        before = Path.cwd()
        os.chdir(self.folder)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                exec(code, self.namespace)  # noqa: S102 - the README's own example code is what is tested
        finally:
            os.chdir(before)


def _package_parent() -> Path:
    """The folder this interpreter imports hf_bpe from (the checkout, or site-packages): the shim runs that one."""
    import hf_bpe

    return Path(hf_bpe.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, ReadmeRun]:
    """One run per page, made when the page's first block runs (module-wide, so pages run once each)."""
    return {}


def _new_run(tmp_path_factory: pytest.TempPathFactory, page: Path) -> ReadmeRun:
    base = tmp_path_factory.mktemp(re.sub(r"\W+", "-", page.relative_to(ROOT).as_posix()))
    folder = base / "work"
    folder.mkdir()
    shared = shared_data_path()
    if shared is not None:  # ../shared/data from the folder, as from a clone beside the data
        (base / "shared").mkdir()
        (base / "shared" / "data").symlink_to(shared.resolve(), target_is_directory=True)
    shims = base / "bin"
    shims.mkdir()
    # `hf-bpe` as the installed console script runs it, with this interpreter and this checkout.
    (shims / "hf-bpe").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "from hf_bpe._entry import run; run()" "$@"\n', encoding="utf-8")
    (shims / "hf-bpe").chmod(0o755)
    # `python` as a script, not a link: a link to a virtual environment's interpreter, called from elsewhere, does
    # not find the environment (its pyvenv.cfg is looked up beside the link).
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (shims / "python").chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(shims), os.environ.get("PATH", "")]),
           "PYTHONPATH": os.pathsep.join(p for p in (str(_package_parent()), os.environ.get("PYTHONPATH", "")) if p)}
    return ReadmeRun(folder, env)


def test_readme_fences_every_block_as_bash_python_or_text():
    wrong = [f"{b.where} line {b.line}: ```{b.language}" for b in BLOCKS if b.language not in (*_RUN, LISTING)]
    assert not wrong, f"fence commands as bash or python and listings as {LISTING}: {wrong}"
    assert len([b for b in RUNNABLE if b.page == README]) >= 5
    assert len([b for b in RUNNABLE if b.page != README]) >= 20, "the docs pages hold at least 20 runnable blocks"


def test_readme_replaced_and_skipped_lines_are_still_in_the_readme():
    lines = {command for b in BLOCKS if b.language == "bash" for command in bash_commands(b)}
    for command in [*REPLACED, *SKIPPED]:
        assert command in lines, f"{command!r} is no longer a command of any page: update REPLACED/SKIPPED"


# Blocks that read a whole corpus of ../shared/data (the 23.5 MB English, the 22 MB Chinese) or start Spark run in
# the second test step (marker corpus, `-m corpus`): together they took ~350 s of the docs' ~465 s under load.
WHOLE_CORPORA = ("corpora/en/english_combined.txt", "corpora/zh/")


def _marks(block: Block) -> list[Any]:
    marks = []
    if "../shared/data" in block.text:
        marks.append(pytest.mark.shared_data)
    if _uses_spark(block):
        marks.append(pytest.mark.spark)
    if _uses_spark(block) or any(corpus in block.text for corpus in WHOLE_CORPORA):
        marks.append(pytest.mark.corpus)
    return marks


@pytest.mark.slow
@pytest.mark.parametrize("block", [pytest.param(b, id=b.id, marks=_marks(b)) for b in RUNNABLE])
def test_readme_block_runs(page_runs, tmp_path_factory, block):
    run = page_runs.get(block.page)
    if run is None:
        run = page_runs[block.page] = _new_run(tmp_path_factory, block.page)
    run.run_up_to(block)
    run.run(block)
