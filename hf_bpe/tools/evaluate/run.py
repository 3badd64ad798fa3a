"""``evaluate``: every tokenizer on every named text, measured, and the report files written."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import measures
from .subjects import Subject, load_subject

__all__ = ["REPORT_FILES", "SCHEMA_VERSION", "evaluate", "measure"]

SCHEMA_VERSION = 1
REPORT_FILES = ("report.json", "report.md", "report.png", "report.html")
_EXAMPLES = 8


def _names_of(tokenizers: Any) -> dict[str, Any]:
    """``{name: source}`` from a mapping, or from a sequence of paths (named after their file or folder)."""
    if isinstance(tokenizers, Mapping):
        named = dict(tokenizers)
    elif isinstance(tokenizers, (str, os.PathLike)) or not isinstance(tokenizers, Sequence):
        raise TypeError("tokenizers must be a mapping {name: path or BPEModel} or a list of paths, got "
                        f"{type(tokenizers).__name__} {tokenizers!r:.80}")
    else:
        named = {}
        for source in tokenizers:
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError(f"a list of tokenizers holds paths; got {type(source).__name__} {source!r:.80} (pass "
                                "a mapping {name: model} to evaluate a BPEModel)")
            path = Path(source)
            base = path.parent.name if path.name == "tokenizer.json" else path.stem if path.is_file() else path.name
            name, k = base or "tokenizer", 2
            while name in named:
                name, k = f"{base}-{k}", k + 1
            named[name] = source
    if not named:
        raise ValueError("no tokenizer given; pass at least one (a folder, tokenizer.json, .tiktoken or .model)")
    for name in named:
        if not isinstance(name, str) or not name:
            raise TypeError(f"tokenizer names must be non-empty str, got {name!r:.80}")
    return named


def _texts_of(texts: Any) -> dict[str, Path]:
    if not isinstance(texts, Mapping):
        raise TypeError(f"texts must be a mapping {{name: path of a UTF-8 text file}}, got {type(texts).__name__} "
                        f"{texts!r:.80}")
    if not texts:
        raise ValueError("no text given; pass texts={'en': 'english.txt', ...}")
    out: dict[str, Path] = {}
    for name, path in texts.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"text names must be non-empty str, got {name!r:.80}")
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"text {name!r} must be a path (str or os.PathLike), got {type(path).__name__} "
                            f"{path!r:.80}")
        if not Path(path).is_file():
            raise FileNotFoundError(f"text {name!r}: {os.fspath(path)!r} is not a file; give a UTF-8 text file")
        out[name] = Path(path)
    return out


def _read_text(name: str, path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"text {name!r}: {os.fspath(path)!r} is not UTF-8 (byte {exc.start}: "
                         f"{data[exc.start : exc.start + 8]!r}); convert it first, e.g. iconv -f latin1 -t utf-8") from None


def _shown(token: bytes) -> str:
    return token.decode("utf-8", "backslashreplace")


def _unused(subject: Subject, produced: set[int]) -> tuple[int, list[dict[str, Any]]]:
    """The count of the vocabulary's ids never produced, and a few of them spread over the id range."""
    unused = sorted(subject.ids - produced)
    if len(unused) <= _EXAMPLES:
        picked = unused
    else:
        picked = sorted({unused[k * (len(unused) - 1) // (_EXAMPLES - 1)] for k in range(_EXAMPLES)})
    return len(unused), [{"id": i, "token": _shown(subject.token_bytes(i))} for i in picked]


def measure(subject: Subject, name: str, text: str, *, order: float = measures.DEFAULT_ORDER) -> tuple[dict[str, Any],
                                                                                                     Counter[int]]:
    """Return the row of one tokenizer on one text, and the count of each id it produced."""
    documents = measures.split_documents(text)
    counts: Counter[int] = Counter()
    for ids in subject.encode_documents(documents):
        counts.update(ids)
    n_bytes, characters, words = measures.text_sizes(text)
    tokens = sum(counts.values())
    vocabulary = subject.ids | set(counts)
    unused, examples = _unused(subject, set(counts))
    row = {
        "tokenizer": subject.name, "language": name, "documents": len(documents), "bytes": n_bytes,
        "characters": characters, "words": words, "tokens": tokens,
        "bytes_per_token": measures.rate(n_bytes, tokens), "characters_per_token": measures.rate(characters, tokens),
        "tokens_per_word": measures.rate(tokens, words),
        "renyi_efficiency": measures.renyi_efficiency(counts.values(), vocab_size=len(vocabulary), order=order),
        "renyi_efficiency_observed": measures.renyi_efficiency(counts.values(), vocab_size=max(1, len(counts)),
                                                               order=order),
        "vocab_size": len(vocabulary), "vocab_used": len(counts),
        "vocab_used_share": measures.rate(len(counts), len(vocabulary)),
        "unused_ids": unused, "unused_examples": examples,
    }
    return row, counts


def evaluate(
    tokenizers: Mapping[str, Any] | Sequence[str | os.PathLike[str]],
    texts: Mapping[str, str | os.PathLike[str]],
    *,
    reference: str | None = None,
    out: str | os.PathLike[str] | None = None,
    force: bool = False,
    sample_lines: int = 5,
    pattern: str | None = None,
    order: float = measures.DEFAULT_ORDER,
) -> dict[str, Any]:
    """Measure tokenizers on named texts: sizes, tokens, fertility, Rényi efficiency, vocabulary use, parity.

    Each text (a UTF-8 file) is cut after each ``\\n``; each line is encoded on its own (special tokens in it
    recognised, nothing added) by the tokenizer's reader (see :mod:`hf_bpe.tools.evaluate.subjects`), and the counts
    add up over the lines. The measures are defined in :mod:`hf_bpe.tools.evaluate.measures`.

    Args:
        tokenizers: ``{name: source}`` or a list of sources (named after their file or folder). A source is an
            hf_bpe or Hugging Face folder, a ``tokenizer.json``, a ``.tiktoken`` file, a SentencePiece ``.model``, or
            a ``BPEModel``.
        texts: ``{name: path}``; the names are the report's ``language`` column.
        reference: the text each text's token count is divided by for parity (default: the first text).
        out: a folder to write ``report.json``, ``report.md``, ``report.html`` and ``report.png`` (with matplotlib)
            into, all-or-nothing; None writes nothing.
        force: replace report files already in ``out``.
        sample_lines: lines of each text shown split into tokens in ``report.html`` (the first non-blank ones).
        pattern: the pre-tokenizer of a ``.tiktoken`` file that does not say (see ``hf_bpe.tools.convert.load_any``).
        order: the order of the Rényi entropy (2.5, as Zouhar et al. 2023).

    Returns:
        The report: ``rows`` (one per tokenizer and text: ``tokenizer``, ``language``, ``bytes``, ``characters``,
        ``words``, ``tokens``, ``bytes_per_token``, ``tokens_per_word``, ``renyi_efficiency``, ``vocab_used_share``,
        ``unused_ids``, ``parity_ratio``, ...), ``tokenizers`` (per tokenizer: vocabulary use over all texts and
        ``parity``: ratios and their Gini), ``texts`` and ``options``.

    Raises:
        TypeError: on arguments of the wrong type.
        FileNotFoundError: when a tokenizer or text does not exist.
        ValueError: on an unknown reference, a text that is not UTF-8, a tokenizer that cannot be read.
        FileExistsError: when ``out`` holds report files and ``force`` is false (checked before any work).

    >>> import tempfile, pathlib, hf_bpe
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "en.txt").write_text("the cat sat\\n"), (folder / "de.txt").write_text("die Katze sass\\n")
    >>> report = hf_bpe.evaluate({"bytes": hf_bpe.BPEModel.bytes_only()},
    ...                          {"en": folder / "en.txt", "de": folder / "de.txt"})
    >>> [(r["language"], r["tokens"], r["words"]) for r in report["rows"]]
    [('en', 12, 3), ('de', 15, 3)]
    >>> report["tokenizers"][0]["parity"]["ratios"]
    {'en': 1.0, 'de': 1.25}
    """
    from ...formats import atomic

    named = _names_of(tokenizers)
    paths = _texts_of(texts)
    if reference is None:
        reference = next(iter(paths))
    if not isinstance(reference, str) or reference not in paths:
        raise ValueError(f"reference must name one of the texts {list(paths)!r}, got {reference!r:.80}")
    if not isinstance(sample_lines, int) or isinstance(sample_lines, bool) or sample_lines < 0:
        raise ValueError(f"sample_lines must be an integer >= 0, got {sample_lines!r}")
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, got {type(force).__name__} {force!r}")
    folder = None if out is None else Path(out)
    if folder is not None:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
        existing = [n for n in REPORT_FILES if (folder / n).exists()]
        if existing and not force:
            raise FileExistsError(f"{os.fspath(out)!r} already holds {', '.join(existing)}; pass force=True (CLI: "
                                  "--force) to replace the report")
    measures.renyi_entropy([1], order=order)  # checks the order

    subjects = [load_subject(name, source, pattern=pattern) for name, source in named.items()]
    contents = {name: _read_text(name, path) for name, path in paths.items()}
    rows: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    for subject in subjects:
        produced: set[int] = set()
        mine = []
        for name, text in contents.items():
            row, counts = measure(subject, name, text, order=order)
            produced.update(counts)
            mine.append(row)
        ratios = measures.parity_ratios({r["language"]: r["tokens"] for r in mine}, reference)
        for row in mine:
            row["parity_ratio"] = ratios[row["language"]]
        rows.extend(mine)
        unused, examples = _unused(subject, produced)
        known = [r for r in ratios.values() if r is not None]
        entries.append({
            "name": subject.name, "path": subject.path, "library": subject.library,
            "vocab_size": len(subject.ids | produced), "vocab_used": len(produced),
            "vocab_used_share": measures.rate(len(produced), len(subject.ids | produced)),
            "unused_ids": unused, "unused_examples": examples,
            "parity": {"reference": reference, "ratios": ratios, "gini": measures.gini(known) if known else None,
                       "max_over_min": measures.rate(max(known), min(known)) if known else None},
        })
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "options": {"reference": reference, "order": order, "sample_lines": sample_lines},
        "texts": [{"name": name, "path": os.fspath(paths[name]), "documents": len(measures.split_documents(text)),
                   **dict(zip(("bytes", "characters", "words"), measures.text_sizes(text)))}
                  for name, text in contents.items()],
        "tokenizers": entries,
        "rows": rows,
        "files": None,
    }
    if folder is not None:
        from .. import plotting
        from .chart import render_chart
        from .html import render_html
        from .markdown import render_markdown

        drawn = plotting.available()
        report["files"] = {"json": "report.json", "markdown": "report.md", "html": "report.html",
                           "chart": "report.png" if drawn else None}
        samples = {name: _sample(text, sample_lines) for name, text in contents.items()}
        files: dict[str, str | bytes] = {
            "report.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
            "report.md": render_markdown(report),
            "report.html": render_html(report, subjects, samples),
        }
        if drawn:
            files["report.png"] = render_chart(report)
        atomic.write_files(folder, files, force=force)
    return report


def _sample(text: str, count: int, limit: int = 300) -> list[str]:
    """The first ``count`` non-blank lines of ``text`` (without their line end), each cut to ``limit`` characters."""
    lines = []
    for line in text.split("\n"):
        if len(lines) == count:
            break
        if line.strip():
            lines.append(line.rstrip("\r")[:limit])
    return lines
