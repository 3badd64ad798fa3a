"""Record how a tokenizer was made, and check a folder against that record.

A training manifest (``hf_bpe_manifest.json``) sits next to every tokenizer hf_bpe writes. It holds:

- ``schema_version`` (this module's :data:`SCHEMA_VERSION`);
- ``versions``: hf_bpe, Python and the dependencies that touch tokenizers (``None`` when not installed);
- ``options``: every training option, as passed to :func:`hf_bpe.train`;
- ``corpus``: the corpus fingerprint (see below);
- ``files``: ``{name: {"sha256": hex, "bytes": size}}`` for each file written beside it.

A manifest that ``HFBPETokenizer.save_pretrained`` writes for a trained tokenizer (e.g. after setting
``pad_token``) carries the training's ``options`` and ``corpus`` over, lists the files as written now in ``files``
and adds:

- ``trained``: ``{"files": ..., "versions": ...}``, the file table and versions of the training's manifest;
- ``edited_after_training``: the files whose content differs from ``trained["files"]`` (or that training did not
  write), sorted; :func:`verify` does not compare them with a retrained output, except :data:`TRAINED_CONTENT`
  (``vocab.json``, ``merges.txt``), which adding tokens or changing roles never touches and which are always
  compared;
- ``note``: one sentence for a person saying whether the trained content is unchanged.

It has no timestamp and no path on purpose: the same corpus and options give a byte-identical manifest.

The corpus fingerprint
----------------------
``order="sequence"`` (the default) is ``sha256`` over, for each text in order, its UTF-8 length as 8 bytes
little-endian followed by its UTF-8 bytes. The length prefix makes the framing unambiguous (``["ab", "c"]`` and
``["a", "bc"]`` differ). ``order="multiset"`` is the sum, modulo ``2**256``, of the ``sha256`` of each text (as
a big-endian integer), written as 64 hex digits: reordering the texts (e.g. the rows of a sharded dataset read in
another order) does not change it. It catches accidental changes, not an adversary (additive hashes can be forged).
Both record the number of documents and of UTF-8 bytes, and both are computed in one streaming pass in O(1) memory.

Determinism
-----------
hf_bpe's output depends only on the multiset of training texts and the options: pre-token counts are sums, and
the merge loop breaks ties by token ids, never by hash or arrival order. So the number of worker processes,
``PYTHONHASHSEED`` and the order of the rows never change ``vocab.json`` or ``merges.txt``; no training option
makes order matter. Only the ``"sequence"`` fingerprint depends on order; declare a corpus whose row order is not
fixed a multiset (``order="multiset"``) so that :func:`verify` accepts it in any order.

>>> fp = CorpusFingerprint()
>>> fp.update(["hello\\n", "world\\n"])
>>> fp.as_dict()["documents"], fp.as_dict()["bytes"]
(2, 12)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "MANIFEST_NAME",
    "SCHEMA_VERSION",
    "CorpusFingerprint",
    "VerifyReport",
    "TRAINED_CONTENT",
    "build_manifest",
    "dump_manifest",
    "first_difference",
    "load_manifest",
    "training_record",
    "verify",
    "cli_verify",
]

MANIFEST_NAME = "hf_bpe_manifest.json"
SCHEMA_VERSION = 1

# Libraries whose version can change what a tokenizer folder means or how it loads. Read through
# importlib.metadata, which never imports them (transformers alone takes over a second to import).
DEPENDENCIES = ("tokenizers", "transformers", "datasets", "sentencepiece", "regex")

# Options that change how training runs but never its output; verify() does not replay them.
RUNTIME_OPTIONS = frozenset({"workers", "show_progress", "text_column"})

# The files that hold what training learned. Editing a tokenizer's roles or added tokens rewrites the config files
# and tokenizer.json, never these, so verify() compares them with a retrained output even when a manifest says
# they were edited after training.
TRAINED_CONTENT = ("vocab.json", "merges.txt")

_ORDERS = ("sequence", "multiset")
_MODULUS = 1 << 256


class CorpusFingerprint:
    """Fingerprint a stream of training texts: sha256 plus document and byte counts, in O(1) memory.

    Args:
        order: ``"sequence"`` (the exact sequence of texts) or ``"multiset"`` (the texts in any order).

    >>> a, b = CorpusFingerprint(order="multiset"), CorpusFingerprint(order="multiset")
    >>> a.update(["x", "y"]); b.update(["y", "x"])
    >>> a.as_dict() == b.as_dict()
    True
    >>> s = CorpusFingerprint(); s.update(["ab", "c"]); t = CorpusFingerprint(); t.update(["a", "bc"])
    >>> s.as_dict()["sha256"] == t.as_dict()["sha256"]
    False
    """

    __slots__ = ("_order", "_hash", "_sum", "_documents", "_bytes")

    def __init__(self, *, order: Literal["sequence", "multiset"] = "sequence") -> None:
        if order not in _ORDERS:
            raise ValueError(f"order must be 'sequence' or 'multiset', got {order!r}")
        self._order = order
        self._hash = hashlib.sha256()
        self._sum = 0
        self._documents = 0
        self._bytes = 0

    @property
    def order(self) -> str:
        """``"sequence"`` or ``"multiset"``."""
        return self._order

    def update(self, texts: Iterable[str]) -> None:
        """Add texts to the fingerprint, in order.

        Raises:
            TypeError: for a single str (wrap it in a list) or a non-str item.
        """
        if isinstance(texts, str | bytes):
            raise TypeError(f"texts must be an iterable of str, got one {type(texts).__name__} {texts[:40]!r}; "
                            "wrap it in a list")
        batch = texts if isinstance(texts, list) else list(texts)
        try:
            # surrogatepass: a lone surrogate from a Python iterable is hashed, not an error.
            datas = [text.encode("utf-8", "surrogatepass") for text in batch]
        except AttributeError:
            bad = next(text for text in batch if not isinstance(text, str))
            raise TypeError(f"each text must be str, got {type(bad).__name__} {bad!r:.60}") from None
        self._documents += len(datas)
        self._bytes += sum(map(len, datas))
        if self._order == "sequence":
            # The same framing as _wrap (8-byte length, then the bytes), joined in C: one hash update per batch.
            parts: list[bytes] = [b""] * (2 * len(datas))
            parts[0::2] = [len(data).to_bytes(8, "little") for data in datas]
            parts[1::2] = datas
            self._hash.update(b"".join(parts))
        else:
            total = self._sum
            for data in datas:
                total += int.from_bytes(hashlib.sha256(data).digest(), "big")
            self._sum = total % _MODULUS

    def wrap(self, texts: Iterable[str]) -> Iterator[str]:
        """Yield the texts unchanged while adding them to the fingerprint (fingerprint while training reads).

        >>> fp = CorpusFingerprint()
        >>> list(fp.wrap(["a", "b"])), fp.as_dict()["documents"]
        (['a', 'b'], 2)
        """
        if isinstance(texts, str | bytes):
            raise TypeError(f"texts must be an iterable of str, got one {type(texts).__name__} {texts[:40]!r}; "
                            "wrap it in a list")
        return self._wrap(texts)

    def _wrap(self, texts: Iterable[str]) -> Iterator[str]:
        update = self._hash.update
        sequence = self._order == "sequence"
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"each text must be str, got {type(text).__name__} {text!r:.60}")
            # surrogatepass: a lone surrogate from a Python iterable is hashed, not an error.
            data = text.encode("utf-8", "surrogatepass")
            if sequence:
                update(len(data).to_bytes(8, "little"))
                update(data)
            else:
                self._sum = (self._sum + int.from_bytes(hashlib.sha256(data).digest(), "big")) % _MODULUS
            self._documents += 1
            self._bytes += len(data)
            yield text

    def as_dict(self) -> dict[str, object]:
        """Return ``{"order", "sha256", "documents", "bytes"}`` (the manifest's ``corpus`` entry)."""
        digest = self._hash.hexdigest() if self._order == "sequence" else f"{self._sum:064x}"
        return {"order": self._order, "sha256": digest, "documents": self._documents, "bytes": self._bytes}

    def __repr__(self) -> str:
        d = self.as_dict()
        return f"CorpusFingerprint(order={d['order']!r}, sha256={d['sha256'][:16]!r}..., documents={d['documents']})"


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    from . import __version__

    versions: dict[str, str | None] = {"hf_bpe": __version__, "python": platform.python_version()}
    for name in DEPENDENCIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _json_value(key: str, value: object) -> object:
    """Return ``value`` as JSON data (tuples become lists), or raise TypeError naming the option."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_value(key, v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _json_value(key, v) for k, v in value.items()}
    raise TypeError(
        f"option {key!r} = {value!r} cannot be recorded in a manifest (expected None, bool, int, float, str or a "
        "list of them)"
    )


def _digest(data: bytes | str) -> dict[str, object]:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}


def build_manifest(
    files: Mapping[str, bytes | str],
    *,
    options: Mapping[str, object],
    corpus: Mapping[str, object] | None,
    trained: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the manifest of a tokenizer folder.

    Args:
        files: file name -> content, exactly as written (``str`` is written as UTF-8).
        options: every training option (name -> value).
        corpus: the corpus fingerprint (:meth:`CorpusFingerprint.as_dict`, optionally with more keys), or
            ``None`` when the model was not trained here (e.g. loaded from files).
        trained: for files rewritten after training (``save_pretrained``), the ``"trained"`` entry of
            :func:`training_record`: ``{"files": table, "versions": ...}`` as the training wrote them. The
            manifest then also gets ``trained``, ``edited_after_training`` and ``note``.

    Returns:
        The manifest; write it with :func:`dump_manifest`.

    >>> m = build_manifest({"merges.txt": "#version: 0.2\\n"}, options={"vocab_size": 256}, corpus=None)
    >>> m["files"]["merges.txt"]["bytes"], m["options"], m["schema_version"]
    (14, {'vocab_size': 256}, 1)
    >>> later = build_manifest({"merges.txt": "#version: 0.2\\n", "tokenizer_config.json": "{}"},
    ...                        options={"vocab_size": 256}, corpus=None, trained={"files": m["files"]})
    >>> later["edited_after_training"]
    ['tokenizer_config.json']
    """
    if not isinstance(files, Mapping):
        raise TypeError(f"files must be a mapping of file name to bytes or str, got {type(files).__name__}")
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of option name to value, got {type(options).__name__}")
    if corpus is not None and not isinstance(corpus, Mapping):
        raise TypeError(f"corpus must be a fingerprint mapping (CorpusFingerprint.as_dict()) or None, got {corpus!r}")
    entries = {}
    for name, data in files.items():
        if not isinstance(name, str) or not _is_plain_name(name):
            raise ValueError(f"file name {name!r} must be a plain file name (no folder, not '.' or '..')")
        if name == MANIFEST_NAME:
            raise ValueError(f"files must not include the manifest itself ({MANIFEST_NAME!r})")
        if not isinstance(data, bytes | str):
            raise TypeError(f"content of {name!r} must be bytes or str, got {type(data).__name__}")
        entries[name] = _digest(data)
    if corpus is not None:
        missing = {"order", "sha256", "documents", "bytes"} - set(corpus)
        if missing:
            raise ValueError(f"corpus fingerprint lacks {sorted(missing)!r}; pass CorpusFingerprint(...).as_dict()")
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "versions": _versions(),
        "options": {str(k): _json_value(str(k), v) for k, v in options.items()},
        "corpus": None if corpus is None else {str(k): _json_value(str(k), v) for k, v in corpus.items()},
        "files": entries,
    }
    if trained is not None:
        if not isinstance(trained, Mapping) or not _is_file_table(trained.get("files")):
            raise TypeError(f"trained must be {{'files': {{name: {{sha256, bytes}}}}, 'versions': ...}} as "
                            f"training_record() returns it, got {trained!r:.200}")
        trained_files = {str(k): {"sha256": v["sha256"], "bytes": v["bytes"]} for k, v in trained["files"].items()}
        edited = _edited(entries, trained_files)
        manifest["trained"] = {"files": trained_files, "versions": _json_value("versions", trained.get("versions"))}
        manifest["edited_after_training"] = edited
        manifest["note"] = _edit_note(edited)
    return manifest


def _is_file_table(files: object) -> bool:
    return isinstance(files, dict) and all(
        isinstance(e, dict) and isinstance(e.get("sha256"), str) and isinstance(e.get("bytes"), int)
        for e in files.values()
    )


def _edited(files: Mapping[str, Mapping[str, object]], trained_files: Mapping[str, Mapping[str, object]]) -> list[str]:
    """Name the files whose (sha256, size) differs from the training's, or that training did not write."""
    def key(entry: Mapping[str, object] | None) -> tuple[object, object] | None:
        return None if entry is None else (entry.get("sha256"), entry.get("bytes"))

    return sorted(name for name, entry in files.items() if key(entry) != key(trained_files.get(name)))


def _edit_note(edited: Sequence[str]) -> str:
    changed = [name for name in TRAINED_CONTENT if name in edited]
    if not changed:
        return (f"{' and '.join(TRAINED_CONTENT)} (the trained content) are as trained; the files in "
                "edited_after_training were rewritten after training (e.g. by save_pretrained) and verify does not "
                "compare them with a retrained output")
    verb, pronoun = ("differs", "it") if len(changed) == 1 else ("differ", "them")
    return (f"{' and '.join(changed)} {verb} from what training wrote: the trained content was changed after "
            f"training, so verify with the corpus will report {pronoun}")


def training_record(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return what a manifest says about training, to carry into the manifest of files rewritten later.

    Returns:
        ``{"options", "corpus", "trained": {"files", "versions"}}``: a manifest that already has a ``trained``
        entry (written after training) passes it on unchanged, so that saving again compares with the training's
        files, not with the previous save's. ``None`` when the manifest records no training (empty ``options``
        and no ``corpus``, as ``BPEModel.save`` of a model loaded from files writes).

    >>> trained = build_manifest({"vocab.json": "{}"}, options={"vocab_size": 256}, corpus=None)
    >>> sorted(training_record(trained)), training_record(build_manifest({}, options={}, corpus=None))
    (['corpus', 'options', 'trained'], None)
    """
    if not isinstance(manifest, Mapping):
        raise TypeError(f"manifest must be a mapping as load_manifest returns it, got {type(manifest).__name__}")
    options = manifest.get("options")
    corpus = manifest.get("corpus")
    options = options if isinstance(options, dict) else {}
    corpus = corpus if isinstance(corpus, dict) else None
    trained = manifest.get("trained")
    if isinstance(trained, dict) and _is_file_table(trained.get("files")):
        record = {"files": trained["files"], "versions": trained.get("versions")}
    elif options or corpus is not None:
        if not _is_file_table(manifest.get("files")):
            return None
        record = {"files": manifest["files"], "versions": manifest.get("versions")}
    else:
        return None
    return {"options": options, "corpus": corpus, "trained": record}


def dump_manifest(manifest: Mapping[str, Any]) -> str:
    """Serialise a manifest: keys sorted, indent 2, UTF-8 text, trailing newline (byte-stable).

    >>> dump_manifest({"b": 1, "a": [1, 2]})
    '{\\n  "a": [\\n    1,\\n    2\\n  ],\\n  "b": 1\\n}\\n'
    """
    return json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _is_plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def load_manifest(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check the manifest of a tokenizer folder.

    Raises:
        FileNotFoundError: when the folder or its manifest does not exist.
        ValueError: when the manifest is not valid JSON, has another schema, or lacks its ``files`` table.
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise FileNotFoundError(f"{os.fspath(directory)!r} is not a folder; expected a tokenizer folder written "
                                "by hf_bpe")
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{os.fspath(directory)!r} has no {MANIFEST_NAME}; it was not written by hf_bpe's trainer (or the "
            "manifest was deleted): retrain with hf_bpe to get one"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{os.fspath(path)!r} is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{os.fspath(path)!r} must hold a JSON object, got {type(manifest).__name__}")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
        raise ValueError(
            f"{os.fspath(path)!r} has schema_version {version!r}; this hf_bpe reads versions 1..{SCHEMA_VERSION}: "
            "upgrade hf_bpe to verify it"
        )
    if not _is_file_table(manifest.get("files")):
        raise ValueError(f"{os.fspath(path)!r} has no valid 'files' table ({{name: {{sha256, bytes}}}})")
    return manifest


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
       file byte for byte with the folder's, naming the first differing line. Files that the manifest records
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
    current = _versions()
    changed = [f"{k} {recorded.get(k)} -> {v}" for k, v in current.items() if k in recorded and recorded[k] != v]
    if changed:
        notes.append("versions differ from the manifest's: " + ", ".join(changed))
    for name, entry in sorted(manifest["files"].items()):
        if not _is_plain_name(name):
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
    if isinstance(trained, dict) and _is_file_table(trained.get("files")):
        edited = _edited(manifest["files"], trained["files"])
        if edited:
            kept = [name for name in TRAINED_CONTENT if name in trained["files"] and name not in edited]
            notes.append(
                f"edited after training (e.g. by save_pretrained): {', '.join(edited)}"
                + (f"; {' and '.join(kept)} are as trained" if kept else "")
            )
    if corpus is None:
        return VerifyReport(not problems, tuple(problems), tuple(checked), tuple(notes))

    # 2. The corpus fingerprint.
    from .corpus import iter_texts

    if isinstance(corpus, Iterator):
        raise TypeError(
            f"corpus is a one-shot iterator ({type(corpus).__name__}); verify reads it twice (fingerprint, then "
            "training): pass a list, path(s) or a datasets Dataset"
        )
    recorded_corpus = manifest.get("corpus")
    options = manifest.get("options")
    if not isinstance(recorded_corpus, dict) or recorded_corpus.get("order") not in _ORDERS:
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
    from .trainer import train

    replay = {k: v for k, v in options.items() if k not in RUNTIME_OPTIONS}
    with tempfile.TemporaryDirectory(prefix="hf_bpe_verify_") as tmp:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = train(corpus, **replay, text_column=text_column, workers=workers, show_progress=show_progress)
        except TypeError as exc:
            problems.append(f"options: this hf_bpe cannot replay the manifest's options {sorted(replay)!r}: {exc}")
            return VerifyReport(False, tuple(problems), tuple(checked), tuple(notes))
        notes.extend(f"retraining warned: {w.message}" for w in caught)
        out = model.save(Path(tmp) / "retrained")
        for name in sorted(manifest["files"]):
            ours, theirs = out / name, folder / name
            if not _is_plain_name(name) or not theirs.is_file():
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


def cli_verify(argv: Sequence[str]) -> int:
    """Run ``hf-bpe verify DIR [--corpus FILE ...] [--dataset PATH ...]``; return the exit status.

    Prints one line per check on stdout; exit status 0 when everything matches, 1 when a check fails, 2 for a
    user error (printed as ``hf-bpe: error: ...`` on stderr).
    """
    parser = argparse.ArgumentParser(
        prog="hf-bpe verify",
        description="Check a tokenizer folder against its hf_bpe_manifest.json; with the corpus, retrain and "
        "confirm the output is byte-identical. Exit status 0 only when everything matches.",
        epilog="examples:\n  hf-bpe verify my-tok\n  hf-bpe verify my-tok --corpus corpus.txt\n"
        "  hf-bpe verify my-tok --dataset ./my_dataset --split train --text-column text",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", metavar="DIR", help="a tokenizer folder written by hf-bpe train")
    parser.add_argument("--corpus", nargs="+", metavar="FILE", help="the training text files, in the same order")
    parser.add_argument("--dataset", metavar="PATH_OR_NAME", help="the training dataset (save_to_disk folder or "
                        "local dataset)")
    parser.add_argument("--split", default="train", metavar="S", help="dataset split (default train)")
    parser.add_argument("--text-column", default="text", metavar="C", help="dataset text column (default text)")
    parser.add_argument("--workers", type=int, default=None, metavar="N", help="processes for retraining")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    from .cli import UserError, _load_dataset

    try:
        if args.corpus and args.dataset:
            raise UserError("give either --corpus FILE ... or --dataset, not both")
        corpus: Any = None
        if args.corpus:
            corpus = [Path(f) for f in args.corpus]
        elif args.dataset:
            corpus = _load_dataset(args.dataset, args.split)
        report = verify(args.directory, corpus=corpus, text_column=args.text_column, workers=args.workers,
                        show_progress=not args.quiet)
    except (UserError, TypeError, ValueError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        print(f"hf-bpe: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(report.format())
    return 0 if report.ok else 1
