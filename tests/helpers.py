"""Helpers shared by several test modules (importable: pyproject's pytest pythonpath includes tests/)."""

from __future__ import annotations

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


def corpus_lines(path: Path, size: int) -> list[str]:
    """The whole lines of the first ``size`` bytes of a corpus file (a character cut at the end is dropped)."""
    text = path.read_bytes()[:size].decode("utf-8", "ignore")
    return text[: text.rfind("\n")].split("\n")


def corpus_sample(shared_data: Path, corpus: str, size: int) -> list[str]:
    """Lines of a ../shared/data corpus: ``en`` (the first ``size`` bytes), ``zh`` (of its first file) or ``multi``
    (``size`` bytes of each of its first 15 files)."""
    folder = shared_data / "corpora" / corpus
    if corpus == "multi":
        return [line for path in sorted(folder.rglob("*.txt"))[:15] for line in corpus_lines(path, size)]
    return corpus_lines(sorted(folder.glob("*.txt"))[0], size)
