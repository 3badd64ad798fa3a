"""Run transformers' own tokenizer test suite (``TokenizerTesterMixin``) on HFBPETokenizer and on GPT2Tokenizer.

Usage::

    python scripts/transformers_tokenizer_suite.py [--vocab ../shared/data/vocabs/gpt2] [--work DIR]

The mixin ships in transformers' source distribution, not in its wheel: this script downloads the sdist of the
installed transformers version from PyPI (``pip download --no-binary``), copies the mixin's files into a scratch
test tree (``--work``, default a temporary folder), writes a test module with two classes that differ only in
``tokenizer_class`` (both loading GPT-2's folder, no hub access), runs pytest on it and prints, test by test, where
HFBPETokenizer does not pass while GPT2Tokenizer does, and every test that skips for HFBPETokenizer only (with its
reason: most skip for any backend but ``tokenizers``). The sdist has no ``fixtures/sample_text.txt``: the first
20 KB of the English corpus (``../shared/data`` or ``HF_BPE_SHARED_DATA``) stand in for it. The mixin needs
``parameterized``, and its chat-template tests jinja2 (``pip install parameterized jinja2``). Not part of the test
suite (it needs the network to PyPI).

Outcomes are read from pytest's JUnit XML, not from ``-rA`` lines: a test whose only subtest skips (the mixin's
``with self.subTest(...): self.skipTest(...)``) prints ``PASSED`` there, but is a skip, not a pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HF_BPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
CLASSES = ("GPT2TokenizerTest", "HFBPETokenizerTest")
MIXIN_FILES = ("test_tokenization_common.py", "test_sentencepiece_backend_mixin.py",
               "test_tokenizers_backend_mixin.py")
# The mixin's integration tests (test_integration, test_integration_from_extractor) need expected tokens, which
# transformers keeps in each model's test file (not in the sdist): `tokenizers` on the folder's tokenizer.json gives
# them, for both classes alike.
TEST_MODULE = '''import os
import unittest

from tokenizers import Tokenizer
from transformers import GPT2Tokenizer

from hf_bpe import HFBPETokenizer

from ...test_tokenization_common import TokenizerTesterMixin

_REFERENCE = Tokenizer.from_file(os.path.join({vocab!r}, "tokenizer.json"))
_ENCODING = _REFERENCE.encode(TokenizerTesterMixin.integration_test_input_string, add_special_tokens=False)


class _Integration:
    integration_expected_tokens = _ENCODING.tokens
    integration_expected_token_ids = _ENCODING.ids
    integration_expected_decoded_text = _REFERENCE.decode(_ENCODING.ids, skip_special_tokens=False)


class GPT2TokenizerTest(_Integration, TokenizerTesterMixin, unittest.TestCase):
    tokenizer_class = GPT2Tokenizer
    from_pretrained_id = [{vocab!r}]
    test_seq2seq = False


class HFBPETokenizerTest(_Integration, TokenizerTesterMixin, unittest.TestCase):
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

    for package in ("parameterized", "jinja2"):  # without jinja2 the chat-template tests skip for both classes
        if importlib.util.find_spec(package) is None:
            parser.error(f"transformers' test mixin needs the {package} package: pip install {package}")

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
    junit = work / "junit.xml"
    run = subprocess.run([sys.executable, "-m", "pytest", str(module), "-q", "-p", "no:cacheprovider",
                          f"--junitxml={junit}"], cwd=work / "suite", capture_output=True, text=True)
    if not junit.is_file():
        print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
        return 1
    results = outcomes(junit)
    theirs = {t for t, r in results.items() if r.get("GPT2TokenizerTest", ("",))[0] == "passed"}
    ours = {t for t, r in results.items() if r.get("HFBPETokenizerTest", ("",))[0] == "passed"}
    print(f"transformers {transformers.__version__}: GPT2Tokenizer passes {len(theirs)}, HFBPETokenizer passes "
          f"{len(ours)} of {len(results)} tests (counted from JUnit XML; a test whose every subtest skipped is a skip)")
    print("GPT2Tokenizer passes, HFBPETokenizer does not:")
    for test in sorted(theirs - ours):
        status, reason = results[test].get("HFBPETokenizerTest", ("missing", ""))
        print(f"  {test}: {status}{': ' + reason if reason else ''}")
    print("skipped for HFBPETokenizer only (GPT2Tokenizer runs them):")
    for test in sorted(results):
        status, reason = results[test].get("HFBPETokenizerTest", ("missing", ""))
        if status == "skipped" and results[test].get("GPT2TokenizerTest", ("",))[0] != "skipped":
            print(f"  {test}: {reason}")
    print("skip for every backend but tokenizers (the mixin's source; HFBPETokenizer.backend is 'custom'):")
    for test in backend_only_tests(suite / MIXIN_FILES[0]):
        status, reason = results.get(test, {}).get("HFBPETokenizerTest", ("missing", ""))
        print(f"  {test}: here {status}{': ' + reason if reason else ''}")
    print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:])
    return 0


def backend_only_tests(mixin: Path) -> list[str]:
    """Name the mixin's tests that skip unless ``tokenizer.backend == "tokenizers"`` (some only inside a subtest,
    and some only after another skip, e.g. for PyTorch, so a run alone does not show them all)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(mixin.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for test in ast.walk(node):
                if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Attribute)
                        and test.left.attr == "backend" and isinstance(test.ops[0], ast.NotEq)
                        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "tokenizers"):
                    found.append(node.name)
                    break
    return sorted(found)


def outcomes(junit: Path) -> dict[str, dict[str, tuple[str, str]]]:
    """Read test -> class -> (passed | failed | error | skipped, reason) from pytest's JUnit XML.

    A test may have several <testcase> records (one per subtest): it passes only when none failed, erred or
    skipped; when some skipped and none failed, it is a skip (with the first reason).
    """
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    results: dict[str, dict[str, tuple[str, str]]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        if cls not in CLASSES:
            continue
        status, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": "failed"}.get(child.tag, child.tag)
                reason = (child.get("message") or "").strip().splitlines()[0][:160] if child.get("message") else ""
                break
        name = case.get("name", "").split("[", 1)[0]
        previous = results.setdefault(name, {}).get(cls)
        if previous is None or rank[status] > rank[previous[0]]:
            results[name][cls] = (status, reason)
    return results


if __name__ == "__main__":
    raise SystemExit(main())
