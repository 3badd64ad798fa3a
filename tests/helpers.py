"""Helpers shared by several test modules (importable: pyproject's pytest pythonpath includes tests/)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def tiktoken_pat_str(encoding: str) -> str:
    """Return the ``pat_str`` of one of tiktoken's OpenAI encodings, read from tiktoken's own source.

    Calling ``tiktoken_ext.openai_public.<encoding>()`` would download its ranks, so the function's source is read
    instead: an independent oracle for hf_bpe's PATTERNS. Skips the test when tiktoken is absent.
    """
    import ast

    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    tree = ast.parse(Path(openai_public.__file__).read_text(encoding="utf-8"))
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == encoding)
    assigned = {t.id: n.value for n in ast.walk(function) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    value = next(n.values[i] for n in ast.walk(function) if isinstance(n, ast.Dict)
                 for i, k in enumerate(n.keys) if isinstance(k, ast.Constant) and k.value == "pat_str")
    if isinstance(value, ast.Name):
        value = assigned[value.id]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "join":
        return ast.literal_eval(value.func.value).join(ast.literal_eval(value.args[0]))
    return ast.literal_eval(value)


def transformers_major() -> int:
    """The installed transformers' major version (the suite runs under 5.x and, in CI's second venv, 4.x)."""
    import transformers

    return int(transformers.__version__.split(".")[0])


# Behaviours that only transformers 5 has; under 4.x the tests that check them skip, saying which.
def needs_transformers_5(why: str):
    """Skip under transformers 4, where the fast tokenizer (or transformers itself) does what ``why`` says."""
    return pytest.mark.skipif(transformers_major() < 5, reason=f"transformers 4: {why}")


def fast_fields(ours: object, fast: object) -> dict:
    """The fast tokenizer's output as a dict, comparable with ``HFBPETokenizer``'s under both majors.

    transformers 4's generic ``PreTrainedTokenizerFast`` lists ``token_type_ids`` among its model inputs (4.x's
    ``GPT2TokenizerFast`` and 5.x do not); ``HFBPETokenizer`` returns what ``GPT2TokenizerFast`` returns.
    """
    fields = dict(fast)  # type: ignore[call-overload]
    if transformers_major() < 5 and "token_type_ids" not in ours and "token_type_ids" in fields:  # type: ignore[operator]
        del fields["token_type_ids"]
    return fields


def chi2_isf(p: float, dof: int) -> float:
    """Return x with P(X > x) = p for X chi-square with ``dof`` degrees of freedom (scipy's ``chi2.isf``, without
    scipy): bisection on the regularized upper incomplete gamma function Q(dof/2, x/2)."""
    a = dof / 2

    def upper(x: float) -> float:  # Q(a, x): series for P below a + 1, Lentz's continued fraction above
        log_front = -x + a * math.log(x) - math.lgamma(a)
        if x < a + 1:
            term = total = 1.0 / a
            n = a
            while abs(term) > abs(total) * 1e-17:
                n += 1
                term *= x / n
                total += term
            return 1.0 - total * math.exp(log_front)
        b, c, d = x + 1.0 - a, 1e300, 1.0 / (x + 1.0 - a)
        h = d
        for i in range(1, 100_000):
            an = -i * (i - a)
            b += 2.0
            d = an * d + b
            d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
            c = b + an / c
            c = c if abs(c) > 1e-300 else 1e-300
            h *= d * c
            if abs(d * c - 1.0) < 1e-15:
                break
        return math.exp(log_front) * h

    low, high = 1e-9, 10.0 * dof + 1000.0
    for _ in range(200):  # Q decreases in x: halve the interval that holds p
        middle = (low + high) / 2
        low, high = (middle, high) if upper(middle / 2) > p else (low, middle)
    return (low + high) / 2


def corpus_lines(path: Path, size: int) -> list[str]:
    """The whole lines of the first ``size`` bytes of a corpus file (a character cut at the end is dropped)."""
    text = path.read_bytes()[:size].decode("utf-8", "ignore")
    return text[: text.rfind("\n")].split("\n")


def first_lines(path: Path, count: int) -> list[str]:
    """The first ``count`` of ``path.read_text(encoding="utf-8").splitlines()``, reading only the bytes they need.

    Whole-corpus reads in tests that keep a few hundred lines cost a second of CPU each: this reads 64 KiB, then
    twice as much, until more than ``count`` lines are seen.
    """
    size = 1 << 16
    with open(path, "rb") as file:
        data = b""
        while True:
            chunk = file.read(size)
            data += chunk
            lines = data[: data.rfind(b"\n") + 1 if chunk else len(data)].decode("utf-8").splitlines()
            if len(lines) > count or not chunk:
                return lines[:count]
            size *= 2


def corpus_sample(shared_data: Path, corpus: str, size: int) -> list[str]:
    """Lines of a ../shared/data corpus: ``en`` (the first ``size`` bytes), ``zh`` (of its first file) or ``multi``
    (``size`` bytes of each of its first 15 files)."""
    folder = shared_data / "corpora" / corpus
    if corpus == "multi":
        return [line for path in sorted(folder.rglob("*.txt"))[:15] for line in corpus_lines(path, size)]
    return corpus_lines(sorted(folder.glob("*.txt"))[0], size)


def whole_corpus(shared_data: Path, corpus: str) -> list[Path]:
    """Every file of a ../shared/data corpus (``en``, ``zh``, ``multi`` with its subfolders), in name order."""
    return sorted(path for path in (shared_data / "corpora" / corpus).rglob("*") if path.is_file())


def spm_unigram(**options):
    """Train ``spm_train --model_type=unigram`` in-process (``input=`` files or ``sentence_iterator=`` lines, with
    any trainer options) and return its model as hf_bpe's ``SentencePieceModel``; raises sentencepiece's
    RuntimeError when spm_train refuses."""
    import io

    import sentencepiece as spm

    from hf_bpe.formats.sentencepiece_model import SentencePieceModel

    written = io.BytesIO()
    spm.SentencePieceTrainer.train(model_writer=written, model_type="unigram", minloglevel=2, **options)
    return SentencePieceModel.from_bytes(written.getvalue())


def piece_triples(model) -> list[tuple[str, str, int]]:
    """A SentencePiece model's pieces as (piece, score as its float32 bits in hex, type): equal lists mean equal
    models piece for piece, bit for bit."""
    import struct

    return [(p.piece, struct.pack("<f", p.score).hex(), p.type) for p in model.pieces]


def first_difference(ours: list, theirs: list) -> str:
    """Say where two piece lists first differ (index, then a few entries of each), for assertion messages."""
    first = next((i for i, (x, y) in enumerate(zip(ours, theirs)) if x != y), min(len(ours), len(theirs)))
    return (f"first difference at id {first} (ours {len(ours)} pieces, spm {len(theirs)}): "
            f"ours {ours[first:first + 3]}, spm {theirs[first:first + 3]}")


def udhr(shared_data: Path, codes: list[str]) -> dict[str, list[str]]:
    """The UDHR lines of each language code (``../shared/data/corpora/multi``), each with its newline."""
    lines: dict[str, list[str]] = {code: [] for code in codes}
    with open(shared_data / "corpora" / "multi" / "udhr2_all_lang_tab_line.tsv", encoding="utf-8") as f:
        for line in f:
            code, _, text = line.partition("\t")
            if code in lines:
                lines[code].append(text)
    return lines


# A child interpreter in which hf_bpe cannot be imported (-I drops PYTHONPATH; the meta-path entry also hides an
# installed or editable hf_bpe), loading a folder through AutoTokenizer as someone without hf_bpe would.
WITHOUT_HF_BPE = textwrap.dedent("""
    import json, sys

    class _NoHfBpe:
        def find_spec(self, name, path=None, target=None):
            if name == "hf_bpe" or name.startswith("hf_bpe."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, _NoHfBpe())
    try:
        import hf_bpe
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("hf_bpe is importable in the child")
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    tok = AutoTokenizer.from_pretrained(sys.argv[1])
    texts = json.loads(sys.stdin.read())
    ids = [tok(text)["input_ids"] for text in texts]
    fast = PreTrainedTokenizerFast.from_pretrained(sys.argv[1])
    print(json.dumps({"ids": ids, "decoded": [tok.decode(i) for i in ids], "eos": tok.eos_token,
                      "pad": tok.pad_token, "class": type(tok).__name__,
                      "fast_ids": [fast(text)["input_ids"] for text in texts]}))
""")


def load_without_hf_bpe(folder: Path, texts: list[str]) -> subprocess.CompletedProcess:
    """Load ``folder`` with AutoTokenizer and PreTrainedTokenizerFast in a child that cannot import hf_bpe; its
    last stdout line is JSON: ids (and fast_ids, decoded, eos, pad, class) of ``texts`` (sent on stdin)."""
    return subprocess.run([sys.executable, "-I", "-c", WITHOUT_HF_BPE, str(folder)], input=json.dumps(texts),
                          capture_output=True, text=True, encoding="utf-8", check=False)
