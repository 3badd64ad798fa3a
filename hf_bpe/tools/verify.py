"""Check a tokenizer folder against its training manifest, and retrain from the corpus to prove it byte for byte.

:func:`verify` reads ``hf_bpe_manifest.json`` (:mod:`hf_bpe.formats.manifest`), checks every file's sha256, then,
given the corpus, checks its fingerprint and retrains with the recorded options: the retrained ``vocab.json`` and
``merges.txt`` (and the other files not edited after training) must be byte-identical.

>>> first_difference(b"a\\n", b"b\\n")
"line 1: 'a\\\\n' vs 'b\\\\n'"
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats import hf_config
from ..formats.manifest import (
    ORDERS,
    RUNTIME_OPTIONS,
    TRAINED_CONTENT,
    CorpusFingerprint,
    edited_files,
    is_file_table,
    is_plain_name,
    load_manifest,
    versions,
)
from ..training.bpe.trainer import train
from ..training.corpus import iter_texts
from ..training.held_out import HeldOutSplit

__all__ = ["VerifyReport", "first_difference", "verify"]


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`.

    Attributes:
        ok: True only when every check passed.
        problems: one line per failed check, naming the file (or the corpus) and the first difference.
        checked: one line per passed check.
        notes: facts that are not failures (versions that differ from the manifest's, skipped steps).
    """

    ok: bool
    problems: tuple[str, ...]
    checked: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def format(self) -> str:
        """Return the report as lines for a person: ``ok``, ``FAIL`` and ``note`` prefixes, then a verdict."""
        lines = [f"ok    {c}" for c in self.checked] + [f"FAIL  {p}" for p in self.problems]
        lines += [f"note  {n}" for n in self.notes]
        lines.append("verified: everything matches" if self.ok else f"NOT verified: {len(self.problems)} problem(s)")
        return "\n".join(lines) + "\n"


def _sha256_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def first_difference(expected: bytes, found: bytes) -> str:
    """Describe where two files first differ, by line (1-based), quoting both lines with their ``\\n``.

    >>> first_difference(b"a\\nb\\nc\\n", b"a\\nB\\nc\\n")
    "line 2: 'b\\\\n' vs 'B\\\\n'"
    >>> first_difference(b"a\\n", b"a\\nb\\n")
    "line 2: <end of file> vs 'b\\\\n'"
    """
    left, right = _lines(expected), _lines(found)
    for number, (a, b) in enumerate(zip(left, right), start=1):
        if a != b:
            return f"line {number}: {_quote(a)} vs {_quote(b)}"
    number = min(len(left), len(right)) + 1
    if len(left) < len(right):
        return f"line {number}: <end of file> vs {_quote(right[number - 1])}"
    if len(right) < len(left):
        return f"line {number}: {_quote(left[number - 1])} vs <end of file>"
    return "nowhere (identical)"


def _lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _quote(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def verify(
    directory: str | os.PathLike[str],
    *,
    corpus: Any = None,
    text_column: str = "text",
    workers: int | None = None,
    show_progress: bool = False,
) -> VerifyReport:
    """Check a tokenizer folder against its manifest; with the corpus, retrain and compare byte for byte.

    1. Every file the manifest lists must exist with the recorded size and sha256.
    2. With ``corpus``: its fingerprint (in the manifest's order mode) must equal the recorded one; if it does
       not, the folder was not trained on this corpus and step 3 is skipped.
    3. With ``corpus``: train again with the recorded options into a temporary folder and compare every listed
       file byte for byte with the folder's, naming the first differing line. A folder :func:`hf_bpe.extend` wrote
       is extended again from its recorded base, which must still be at the recorded path with the recorded
       sha256s (a problem says so when it moved or changed, or when the base was given as a model, not a path). Files that the manifest records
       as edited after training (``HFBPETokenizer.save_pretrained`` after e.g. setting ``pad_token``) are not
       compared, except ``vocab.json`` and ``merges.txt`` (:data:`TRAINED_CONTENT`); a note names them.

    Args:
        directory: the tokenizer folder.
        corpus: the training corpus, as :func:`hf_bpe.train` accepts it; it is read twice, so it must be
            re-iterable (a list, path(s) or a dataset, not a generator).
        text_column: the text column, for datasets.
        workers: processes for retraining (the output does not depend on it).
        show_progress: progress bars on stderr while retraining.

    Returns:
        A :class:`VerifyReport`; ``ok`` is True only when everything matches.

    Raises:
        FileNotFoundError: when the folder or its manifest does not exist.
        ValueError: for an unreadable manifest.
        TypeError: for a one-shot iterator as ``corpus``.
    """
    # 1. Files against the manifest.
    folder = Path(directory)
    manifest = load_manifest(folder)
    problems: list[str] = []
    checked: list[str] = []
    notes: list[str] = []
    recorded = manifest.get("versions") or {}
    current = versions()
    changed = [f"{k} {recorded.get(k)} -> {v}" for k, v in current.items() if k in recorded and recorded[k] != v]
    if changed:
        notes.append("versions differ from the manifest's: " + ", ".join(changed))
    for name, entry in sorted(manifest["files"].items()):
        if not is_plain_name(name):
            problems.append(f"{name!r}: not a plain file name; the manifest is corrupt")
            continue
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing from {os.fspath(folder)!r}")
            continue
        digest, size = _sha256_file(path)
        if digest != entry["sha256"] or size != entry["bytes"]:
            problems.append(
                f"{name}: sha256 differs from the manifest (recorded {entry['sha256'][:16]}... for "
                f"{entry['bytes']} bytes, found {digest[:16]}... for {size} bytes)"
            )
        else:
            checked.append(f"{name}: sha256 matches the manifest")
    # The manifest's own list is for people; recompute it from the two tables so that it cannot disagree.
    trained = manifest.get("trained")
    edited: list[str] = []
    if isinstance(trained, dict) and is_file_table(trained.get("files")):
        edited = edited_files(manifest["files"], trained["files"])
        if edited:
            kept = [name for name in TRAINED_CONTENT if name in trained["files"] and name not in edited]
            notes.append(
                f"edited after training (e.g. by save_pretrained): {', '.join(edited)}"
                + (f"; {' and '.join(kept)} are as trained" if kept else "")
            )
    if corpus is None:
        return VerifyReport(not problems, tuple(problems), tuple(checked), tuple(notes))

    # 2. The corpus fingerprint.
    if isinstance(corpus, Iterator):
        raise TypeError(
            f"corpus is a one-shot iterator ({type(corpus).__name__}); verify reads it twice (fingerprint, then "
            "training): pass a list, path(s) or a datasets Dataset"
        )
    recorded_corpus = manifest.get("corpus")
    options = manifest.get("options")
    held_out = options.get("held_out") if isinstance(options, dict) else None
    if isinstance(held_out, dict):  # extended on the training part of a split: cut the corpus given the same way
        try:
            corpus = HeldOutSplit.of_corpus(corpus, text_column=text_column, fraction=held_out.get("fraction"),
                                            seed=held_out.get("seed"))
        except (TypeError, ValueError) as exc:
            problems.append(f"options: the manifest's held_out {held_out!r:.80} cannot be replayed: {exc}")
            return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))
        checked.append(f"corpus: cut as when extended ({held_out.get('fraction')!r} held out, seed "
                       f"{held_out.get('seed')!r}); the held-out documents are left out")
    if not isinstance(recorded_corpus, dict) or recorded_corpus.get("order") not in ORDERS:
        problems.append("corpus: the manifest records no corpus fingerprint, so the corpus cannot be checked")
    else:
        fingerprint = CorpusFingerprint(order=recorded_corpus["order"])
        fingerprint.update(iter_texts(corpus, text_column=text_column))
        found = fingerprint.as_dict()
        keys = ("sha256", "documents", "bytes")
        if any(found[k] != recorded_corpus.get(k) for k in keys):
            same_size = all(found[k] == recorded_corpus.get(k) for k in ("documents", "bytes"))
            hint = ""
            if same_size and found["order"] == "sequence":
                hint = (" (same document and byte counts: a changed byte or a different order; hf_bpe's output does "
                        "not depend on order, so a reordered corpus still retrains to the same files)")
            problems.append(
                f"corpus fingerprint differs: the manifest records sha256 {recorded_corpus.get('sha256', '')[:16]}... "
                f"over {recorded_corpus.get('documents')} documents, {recorded_corpus.get('bytes')} bytes; the corpus "
                f"given has {found['sha256'][:16]}... over {found['documents']} documents, {found['bytes']} bytes{hint}"
            )
            notes.append("not retrained: the corpus given is not the one the manifest records")
            return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))
        checked.append(f"corpus: fingerprint matches ({found['order']}, {found['documents']} documents, "
                       f"{found['bytes']} bytes)")
    if not isinstance(options, dict):
        problems.append("options: the manifest records no training options, so the tokenizer cannot be retrained")
        return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))

    # 3. Retrain and compare byte for byte.
    replay = {k: v for k, v in options.items() if k not in RUNTIME_OPTIONS}
    with tempfile.TemporaryDirectory(prefix="hf_bpe_verify_") as tmp:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if "base" in replay:  # an extended tokenizer: extend its base again
                    model = _re_extend(replay, corpus, text_column, workers, show_progress, checked)
                elif replay.get("algorithm") == "superbpe":  # both stages again
                    from ..training.bpe.superbpe import replay_superbpe

                    model = replay_superbpe(corpus, replay, text_column=text_column, workers=workers,
                                            show_progress=show_progress)
                else:
                    model = train(corpus, **replay, text_column=text_column, workers=workers,
                                  show_progress=show_progress)
        except TypeError as exc:
            problems.append(f"options: this hf_bpe cannot replay the manifest's options {sorted(replay)!r}: {exc}")
            return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))
        except _BaseUnavailable as exc:
            problems.append(f"base: {exc}")
            notes.append("not re-extended: the base the manifest records is not available as it was")
            return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))
        notes.extend(f"retraining warned: {w.message}" for w in caught)
        # A folder saved for sharing names PreTrainedTokenizerFast: retrain into the same kind of folder.
        out = model.save(Path(tmp) / "retrained", tokenizer_class=hf_config.folder_tokenizer_class(folder))
        for name in sorted(manifest["files"]):
            ours, theirs = out / name, folder / name
            if not is_plain_name(name) or not theirs.is_file():
                continue  # already reported in step 1
            if name in edited and name not in TRAINED_CONTENT:
                notes.append(f"{name}: edited after training, so not compared with the retrained output")
                continue
            if not ours.is_file():
                notes.append(f"{name}: this hf_bpe version does not write it, so it was not compared")
                continue
            expected, found_bytes = ours.read_bytes(), theirs.read_bytes()
            if expected == found_bytes:
                checked.append(f"{name}: retrained output is byte-identical")
            else:
                problems.append(f"{name}: retrained output differs at {first_difference(expected, found_bytes)} "
                                "(retrained vs folder)")
    return VerifyReport(not problems, tuple(problems), tuple(checked), tuple(notes))


class _BaseUnavailable(Exception):
    """The base of an extended tokenizer moved, changed, or was never recorded as a path."""


def _re_extend(options: dict[str, Any], corpus: Any, text_column: str, workers: int | None, show_progress: bool,
               checked: list[str]) -> Any:
    """Extend the recorded base again with the recorded options (the base checked against its sha256s first)."""
    from .extend import base_files, load_base
    from ..training.bpe.extend import extend_model

    record = options["base"]
    path = record.get("path") if isinstance(record, dict) else None
    if not isinstance(path, str) or not isinstance(record.get("files"), dict):
        raise _BaseUnavailable("the base was given as a BPEModel, not a path, so the manifest cannot say where it is; "
                               "extend with hf_bpe.extend(PATH, ...) to make the folder verifiable")
    if not os.path.exists(path):
        raise _BaseUnavailable(f"the base {path!r} no longer exists (moved or deleted); put it back there")
    found = base_files(path)
    if found != record["files"]:
        changed = sorted(set(found) ^ set(record["files"]) | {n for n in found if found[n] != record["files"].get(n)})
        raise _BaseUnavailable(f"the base {path!r} changed since the extension: {', '.join(changed)} differ from the "
                               "sha256s the manifest records")
    checked.append(f"base: {path} matches the recorded sha256s ({len(found)} files)")
    try:  # the pattern the extension used: needed where the base's files do not say (Qwen2's, a .tiktoken file)
        base, _ = load_base(path, options.get("pattern"))
    except ValueError:
        base, _ = load_base(path)
    if base.digest() != options.get("base_digest"):
        raise _BaseUnavailable(f"the base {path!r} loads as a different tokenizer than when it was extended "
                               "(another hf_bpe version reads it differently)")
    return extend_model(base, corpus, vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                        max_token_length=options["max_token_length"], text_column=text_column, workers=workers,
                        show_progress=show_progress, base_record=record)


