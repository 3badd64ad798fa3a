"""Run transformers' own tokenizer test suite (``TokenizerTesterMixin``) on HFBPETokenizer and on GPT2Tokenizer.

Usage::

    python scripts/transformers_tokenizer_suite.py [--vocab ../shared/data/vocabs/gpt2] [--work DIR]

The mixin ships in transformers' source distribution, not in its wheel: this script downloads the sdist of the
installed transformers version from PyPI (``pip download --no-binary``), copies the mixin's files into a scratch
test tree (``--work``, default a temporary folder), writes a test module with two classes that differ only in
``tokenizer_class`` (both loading GPT-2's folder, no hub access), runs pytest on it and prints, test by test, where
HFBPETokenizer does not pass while GPT2Tokenizer does. The sdist has no ``fixtures/sample_text.txt``: the first
20 KB of the English corpus stand in for it. The mixin needs ``parameterized`` (``pip install parameterized``).
Not part of the test suite (it needs the network to PyPI).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
MIXIN_FILES = ("test_tokenization_common.py", "test_sentencepiece_backend_mixin.py",
               "test_tokenizers_backend_mixin.py")
TEST_MODULE = '''import unittest

from transformers import GPT2Tokenizer

from hf_bpe import HFBPETokenizer

from ...test_tokenization_common import TokenizerTesterMixin


class GPT2TokenizerTest(TokenizerTesterMixin, unittest.TestCase):
    tokenizer_class = GPT2Tokenizer
    from_pretrained_id = [{vocab!r}]
    test_seq2seq = False


class HFBPETokenizerTest(TokenizerTesterMixin, unittest.TestCase):
    tokenizer_class = HFBPETokenizer
    from_pretrained_id = [{vocab!r}]
    test_seq2seq = False
'''


def _sdist(version: str, into: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", f"transformers=={version}", "--no-binary", ":all:",
                    "--no-deps", "-q", "-d", str(into)], check=True)
    archive = next(into.glob(f"transformers-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"transformers-{version}" / "tests"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=Path, default=SHARED / "vocabs" / "gpt2")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    import importlib.util

    import transformers

    if importlib.util.find_spec("parameterized") is None:
        parser.error("transformers' test mixin needs the parameterized package: pip install parameterized")

    work = args.work or Path(tempfile.mkdtemp(prefix="hf_bpe-tf-suite-"))
    tests = _sdist(transformers.__version__, work / "sdist")
    suite = work / "suite" / "tests"
    (suite / "models" / "gpt2").mkdir(parents=True, exist_ok=True)
    (suite / "fixtures").mkdir(exist_ok=True)
    for name in MIXIN_FILES:
        shutil.copy(tests / name, suite / name)
    for package in (suite, suite / "models", suite / "models" / "gpt2"):
        (package / "__init__.py").touch()
    sample = (SHARED / "corpora" / "en" / "english_combined.txt").read_bytes()[:20000]
    (suite / "fixtures" / "sample_text.txt").write_bytes(sample[: sample.rindex(b"\n") + 1])
    module = suite / "models" / "gpt2" / "test_tokenization_hfbpe.py"
    module.write_text(TEST_MODULE.format(vocab=str(args.vocab.resolve())), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", str(module), "-q", "-rA", "-p", "no:cacheprovider"],
                         cwd=work / "suite", capture_output=True, text=True)
    results: dict[str, dict[str, str]] = {}
    for line in run.stdout.splitlines():
        match = re.match(r"^(PASSED|FAILED|ERROR) \S+::(\w+)::(\w+)", line)
        if match:
            results.setdefault(match.group(3), {})[match.group(2)] = match.group(1)
    theirs = {t for t, r in results.items() if r.get("GPT2TokenizerTest") == "PASSED"}
    ours = {t for t, r in results.items() if r.get("HFBPETokenizerTest") == "PASSED"}
    print(f"transformers {transformers.__version__}: GPT2Tokenizer passes {len(theirs)}, HFBPETokenizer passes "
          f"{len(ours)} (the rest skip: hub ids, torch, backend-specific tests)")
    for test in sorted(theirs - ours):
        print(f"  {test}: HFBPETokenizer {results[test].get('HFBPETokenizerTest', 'SKIPPED')}")
    print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
