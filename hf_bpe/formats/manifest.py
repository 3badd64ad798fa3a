"""Record how a tokenizer was made: the training manifest and the corpus fingerprint.

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

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ..core._tally import Sha256, frame_lines, frame_utf8, sha_extensions, sum_digests, sum_line_digests
from ..core.fragment import Fragment

# json and gpt2 (with the compiled _spelling) are imported where a manifest is written or read: training needs
# only the fingerprint (CorpusFingerprint) until the model is saved.

__all__ = [
    "MANIFEST_NAME",
    "SCHEMA_VERSION",
    "CorpusFingerprint",
    "TRAINED_CONTENT",
    "build_manifest",
    "combine_fingerprints",
    "dump_manifest",
    "load_manifest",
    "training_record",
    "versions",
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

ORDERS = ("sequence", "multiset")
_MODULUS = 1 << 256


def _stream_hash() -> Any:
    """Return a SHA-256 hasher for the whole corpus stream: the compiled one where the CPU has SHA extensions (as
    fast as OpenSSL's, and hashlib's OpenSSL, 3.6 MiB resident, is not loaded), else hashlib's (OpenSSL's vector code
    takes ~0.55x the instructions of portable rounds, which matters at a GB)."""
    if sha_extensions():
        return Sha256()
    import hashlib

    return hashlib.sha256()


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

    __slots__ = ("_order", "_hash", "_sum", "_documents", "_bytes", "_line")

    def __init__(self, *, order: Literal["sequence", "multiset"] = "sequence") -> None:
        if order not in ORDERS:
            raise ValueError(f"order must be 'sequence' or 'multiset', got {order!r}")
        self._order = order
        self._hash = _stream_hash() if order == "sequence" else Sha256()
        self._sum = 0
        self._documents = 0
        self._bytes = 0
        self._line = Sha256()

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
        if self._order == "sequence" and Fragment not in set(map(type, batch)):
            # The framing built in compiled code (one buffer, no bytes object per ASCII text).
            framed = frame_utf8(batch)
            self._bytes += len(framed) - 8 * len(batch)
            self._documents += len(batch)
            self._hash.update(framed)
            return
        try:
            # surrogatepass: a lone surrogate from a Python iterable is hashed, not an error.
            datas = [text.encode("utf-8", "surrogatepass") for text in batch]
        except AttributeError:
            bad = next(text for text in batch if not isinstance(text, str))
            raise TypeError(f"each text must be str, got {type(bad).__name__} {bad!r:.60}") from None
        self._bytes += sum(map(len, datas))
        if any(type(text) is Fragment for text in batch):
            self._update_fragments(batch, datas)
            return
        self._documents += len(datas)
        if self._order == "sequence":
            # The same framing as _wrap (8-byte length, then the bytes), joined in C: one hash update per batch.
            parts: list[bytes] = [b""] * (2 * len(datas))
            parts[0::2] = [len(data).to_bytes(8, "little") for data in datas]
            parts[1::2] = datas
            self._hash.update(b"".join(parts))
        else:
            self._sum = (self._sum + int.from_bytes(sum_digests(datas), "big")) % _MODULUS

    def update_lines(self, raw: bytes, lines: int) -> None:
        """Add the lines of ``raw`` (UTF-8 text, each line ending with "\\n"), as :meth:`update` adds them decoded.

        How a text file read in blocks is fingerprinted: no str or bytes object per line.

        >>> a = CorpusFingerprint(); a.update(["a\\n", "bc\\n"]); b = CorpusFingerprint(); b.update_lines(b"a\\nbc\\n", 2)
        >>> a.as_dict() == b.as_dict()
        True
        """
        if self._order == "sequence":
            if type(self._hash) is Sha256:
                self._hash.update_framed_lines(raw)  # no framed copy of the block
            else:
                self._hash.update(frame_lines(raw))
        else:
            total, _ = sum_line_digests(raw)  # each line hashed in compiled code (per line in Python: ~8 s/GB)
            self._sum = (self._sum + int.from_bytes(total, "big")) % _MODULUS
        self._bytes += len(raw)
        self._documents += lines

    def _update_fragments(self, batch: list[str], datas: list[bytes]) -> None:
        # A line read in parts (hf_bpe.core.fragment) hashes exactly like the whole line: framed by its full size
        # in "sequence" order, one sha256 across its parts in "multiset" order.
        for text, data in zip(batch, datas):
            fragment = text if type(text) is Fragment else None
            first = fragment is None or fragment.start
            last = fragment is None or fragment.end
            if first:
                self._documents += 1
                if self._order == "multiset":
                    self._line = Sha256()
            if self._order == "sequence":
                self._hash.update((len(data) if fragment is None else fragment.line_bytes).to_bytes(8, "little")
                                  if first else b"")
                self._hash.update(data)
                continue
            self._line.update(data)
            if last:
                self._sum = (self._sum + int.from_bytes(self._line.digest(), "big")) % _MODULUS

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
                self._sum = (self._sum + int.from_bytes(Sha256(data).digest(), "big")) % _MODULUS
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


def combine_fingerprints(
    a: Mapping[str, object] | None, b: Mapping[str, object] | None
) -> dict[str, object] | None:
    """Return the fingerprint of two corpora together, or None when it cannot be known without the texts.

    A ``"multiset"`` fingerprint is a sum, so two of them add up to the fingerprint of the union; a ``"sequence"``
    one is a hash of the ordered stream, which no two digests can give.

    >>> x, y = CorpusFingerprint(order="multiset"), CorpusFingerprint(order="multiset")
    >>> x.update(["a"]); y.update(["b"])
    >>> both = CorpusFingerprint(order="multiset"); both.update(["b", "a"])
    >>> combine_fingerprints(x.as_dict(), y.as_dict()) == both.as_dict()
    True
    """
    if a is None or b is None or a.get("order") != "multiset" or b.get("order") != "multiset":
        return None
    total = (int(str(a["sha256"]), 16) + int(str(b["sha256"]), 16)) % _MODULUS
    return {"order": "multiset", "sha256": f"{total:064x}", "documents": int(a["documents"]) + int(b["documents"]),
            "bytes": int(a["bytes"]) + int(b["bytes"])}  # type: ignore[call-overload]


def versions() -> dict[str, str | None]:
    """Return the versions of hf_bpe, Python and :data:`DEPENDENCIES` (None: not installed), as importlib.metadata.

    >>> versions()["regex"] is not None
    True
    """
    from .._version import __version__

    versions: dict[str, str | None] = {"hf_bpe": __version__, "python": _python_version()}
    found = _installed_versions(DEPENDENCIES)
    for name in DEPENDENCIES:
        if name not in found:
            from importlib import metadata

            try:
                found[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                found[name] = None
        versions[name] = found[name]
    return versions


def _python_version() -> str:
    """Return ``platform.python_version()`` without importing ``platform`` (0.3 MiB, 3 ms of every training run).

    The same parse of ``sys.version``: its leading version word, ``x.y`` padded to ``x.y.0``.

    >>> import platform; _python_version() == platform.python_version()
    True
    """
    import re
    import sys

    found = re.match(r"[\w.+]+", sys.version)
    parts = (found.group() if found else "").split(".")
    return ".".join(parts + ["0"] if len(parts) == 2 else parts)


def _installed_versions(names: Sequence[str]) -> dict[str, str | None]:
    """Return the version of each of ``names`` that importlib.metadata would find in a directory of ``sys.path``.

    importlib.metadata's own lookup imports ``email`` to read one header: ~3 MB and ~25 ms of every training run.
    This is the same search (the first ``sys.path`` entry holding a ``.dist-info``/``.egg-info`` directory of the
    normalized name, in ``os.listdir`` order; its ``Version`` header): a name is left out, for importlib.metadata to
    answer, when the search could differ from it (another distribution finder on ``sys.meta_path``, a zip entry on
    ``sys.path``, an unreadable metadata file) or finds nothing.
    """
    import importlib.machinery
    import re
    import sys

    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if finders != [importlib.machinery.PathFinder]:
        return {}
    wanted = {re.sub(r"[-_.]+", "-", name).lower().replace("-", "_"): name for name in names}
    found: dict[str, str | None] = {}
    for entry in sys.path:
        root = entry or "."
        if os.path.isfile(root):
            return {}  # a zip on sys.path: importlib.metadata reads inside it
        try:
            children = os.listdir(root)
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            name = wanted.get(re.sub(r"[-_.]+", "-", low.rpartition(".")[0].partition("-")[0]).replace("-", "_"))
            if name is None or name in found:
                continue
            version = _version_header(os.path.join(root, child))
            if version is None:
                return found  # left to importlib.metadata from here on, in the same order
            found[name] = version
    return found


def _version_header(info: str) -> str | None:
    """Return the ``Version`` header of a ``.dist-info``/``.egg-info`` directory's metadata, or None."""
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info, file), encoding="utf-8", newline="") as handle:
                version = None
                for line in handle:
                    if version is not None:
                        # A folded header goes on with a line that starts with blanks: left to the email parser.
                        return None if line[:1] in (" ", "\t") else version
                    if line in ("\n", "\r\n", "\r"):
                        return None  # the end of the headers
                    key, colon, value = line.partition(":")
                    if colon and key.lower() == "version":
                        # As email's compat32 policy reads it: blanks after the colon and the line end dropped.
                        version = value.lstrip(" \t").rstrip("\r\n")
                return version
        except (OSError, UnicodeDecodeError):
            continue
    return None


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
    return {"sha256": Sha256(raw).hexdigest(), "bytes": len(raw)}


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
        if not isinstance(name, str) or not is_plain_name(name):
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
        "versions": versions(),
        "options": {str(k): _json_value(str(k), v) for k, v in options.items()},
        "corpus": None if corpus is None else {str(k): _json_value(str(k), v) for k, v in corpus.items()},
        "files": entries,
    }
    if trained is not None:
        if not isinstance(trained, Mapping) or not is_file_table(trained.get("files")):
            raise TypeError(f"trained must be {{'files': {{name: {{sha256, bytes}}}}, 'versions': ...}} as "
                            f"training_record() returns it, got {trained!r:.200}")
        trained_files = {str(k): {"sha256": v["sha256"], "bytes": v["bytes"]} for k, v in trained["files"].items()}
        edited = edited_files(entries, trained_files)
        manifest["trained"] = {"files": trained_files, "versions": _json_value("versions", trained.get("versions"))}
        manifest["edited_after_training"] = edited
        manifest["note"] = _edit_note(edited)
    return manifest


def is_file_table(files: object) -> bool:
    return isinstance(files, dict) and all(
        isinstance(e, dict) and isinstance(e.get("sha256"), str) and isinstance(e.get("bytes"), int)
        for e in files.values()
    )


def edited_files(files: Mapping[str, Mapping[str, object]], trained_files: Mapping[str, Mapping[str, object]]) -> list[str]:
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
    if isinstance(trained, dict) and is_file_table(trained.get("files")):
        record = {"files": trained["files"], "versions": trained.get("versions")}
    elif options or corpus is not None:
        if not is_file_table(manifest.get("files")):
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
    import json

    return json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def is_plain_name(name: str) -> bool:
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
    from .gpt2 import read_json

    manifest = read_json(path, unique_keys=False)[1]
    if not isinstance(manifest, dict):
        raise ValueError(f"{os.fspath(path)!r} must hold a JSON object, got {type(manifest).__name__}")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
        raise ValueError(
            f"{os.fspath(path)!r} has schema_version {version!r}; this hf_bpe reads versions 1..{SCHEMA_VERSION}: "
            "upgrade hf_bpe to verify it"
        )
    if not is_file_table(manifest.get("files")):
        raise ValueError(f"{os.fspath(path)!r} has no valid 'files' table ({{name: {{sha256, bytes}}}})")
    return manifest
