"""Run a comparison: split the corpus, train every tokenizer in its own process, measure, write the report."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..peers import (
    sentencepiece_options,
    sentencepiece_unigram_options,
    tokenizers_description,
    unigram_tokenizers_description,
)
from .chart import render_chart
from .evaluated import (
    LOADERS,
    UNIGRAM_LOADERS,
    Evaluated,
    EvaluatedHFBPE,
    EvaluatedSentencePiece,
    EvaluatedTokenizers,
)
from .markdown import render_markdown
from .metrics import UNIGRAM_CONVENTION, merge_metrics, metrics, vs_sentencepiece, vs_statistics, vs_tokenizers
from .schema import ALGORITHMS, MEMORY_MEASURE, PEERS, REPORT_SCHEMA_VERSION
from .split import split_corpus

__all__ = ["compare"]

# What the child runs. `python -I` (isolated) puts neither the working directory nor PYTHONPATH on sys.path, so a
# `tokenizers.py` in the folder where compare runs is never imported; the child then takes this process's sys.path
# (argv[1]: this very hf_bpe first, then the same libraries, the working directory left out) and runs child.main.
_CHILD_BOOTSTRAP = (f"import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
                    f"from {__package__}.child import main; main(sys.argv[2])")
PEER_TIMEOUT = 3600.0  # seconds: the default time limit of each trainer's process


def _child_path() -> list[str]:
    """Return the sys.path for a child: the folder holding hf_bpe/, then this process's path without the cwd."""
    package_root = os.fspath(Path(__file__).resolve().parents[3])
    cwd = os.path.realpath(os.getcwd())
    kept = [p for p in sys.path if p and os.path.realpath(p) != cwd and p != package_root]
    return [package_root, *kept]


def train_in_child(peer: str, spec: dict[str, Any], folder: Path, *, timeout: float = PEER_TIMEOUT
                   ) -> dict[str, Any]:
    """Train one tokenizer in a fresh, isolated Python process; return the child's result record.

    The child (and any worker it starts) runs in a process group of its own, killed whole after ``timeout``
    seconds or when this process is interrupted; a time-out is the record ``{"ok": False, "timed_out": True}``.
    """
    spec_path = folder / f"{peer}.spec.json"
    result_path = folder / f"{peer}.result.json"
    spec = {**spec, "peer": peer, "result": os.fspath(result_path)}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    command = [sys.executable, "-I", "-c", _CHILD_BOOTSTRAP, json.dumps(_child_path()), os.fspath(spec_path)]
    # stdout belongs to the command's data: the child's stdout goes to stderr with its progress bars.
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return {"ok": False, "timed_out": True,
                "error": f"timed out: still training after {timeout:g} s (the peer's time limit; raise it with "
                         "peer_timeout=, CLI --peer-timeout SECONDS)"}
    except BaseException:
        _kill_group(process)  # Ctrl-C: the child's group does not get the terminal's SIGINT, so end it here
        raise
    _kill_group(process)  # workers the child left behind
    if result_path.is_file():
        return json.loads(result_path.read_text(encoding="utf-8"))
    return {"ok": False, "error": f"the training process died with exit status {returncode}"}


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group (the child and its workers) and reap the child."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone
    process.wait()


def _versions() -> dict[str, str | None]:
    from ...formats.manifest import versions as manifest_versions

    return manifest_versions()


def _check_args(
    vocab_size: object, against: object, heldout_fraction: object, heldout_seed: object, models: object,
    workers: object, peer_timeout: object, algorithm: object = "bpe", num_threads: object = 16,
    byte_level: tuple[object, object] = (0, "gpt2"),
) -> tuple[list[str], dict[str, Path]]:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(f"num_threads must be an int >= 1, got {num_threads!r}; e.g. 16, spm_train's default")
    if algorithm == "unigram" and byte_level != (0, "gpt2"):
        raise ValueError(f"min_frequency and pattern are byte-level BPE options, got {byte_level!r} with "
                         "algorithm='unigram'; leave them at their defaults (0, 'gpt2') for a unigram comparison")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if isinstance(against, str):
        against = [a.strip() for a in against.split(",") if a.strip()]
    if not isinstance(against, Sequence | set | frozenset):
        raise TypeError(f"against must be a list of peer names (from {list(PEERS)!r}), got {against!r}")
    peers = []
    for name in against:
        if name not in PEERS:
            raise ValueError(f"unknown peer {name!r} in against; known peers are {', '.join(PEERS)} "
                             "(e.g. against=('tokenizers', 'sentencepiece'))")
        if name not in peers:
            peers.append(name)
    if isinstance(heldout_fraction, bool) or not isinstance(heldout_fraction, int | float) \
            or not 0 <= heldout_fraction < 1:
        raise ValueError(f"heldout_fraction must be a number in [0, 1), got {heldout_fraction!r}; e.g. 0.1 holds out "
                         "about one document in ten")
    if isinstance(heldout_seed, bool) or not isinstance(heldout_seed, int) or heldout_seed < 0:
        raise ValueError(f"heldout_seed must be an int >= 0, got {heldout_seed!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
    if isinstance(peer_timeout, bool) or not isinstance(peer_timeout, int | float) or not peer_timeout > 0:
        raise ValueError(f"peer_timeout must be a number of seconds > 0, got {peer_timeout!r}; e.g. 7200 gives each "
                         "trainer two hours")
    if not isinstance(models, Mapping):
        raise TypeError(f"models must be a mapping of tokenizer name to path, got {models!r}")
    paths: dict[str, Path] = {}
    for name, path in models.items():
        if name != "hf_bpe" and name not in peers:
            raise ValueError(f"models names {name!r}, which is not compared; names are 'hf_bpe' and the peers in "
                             f"against ({', '.join(peers) or 'none'})")
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"models[{name!r}] must be a path, got {path!r}")
        if not Path(path).exists():
            raise FileNotFoundError(f"models[{name!r}] = {os.fspath(path)!r} does not exist")
        paths[name] = Path(path)
    return peers, paths


def _describe(corpus: Any) -> list[str]:
    if isinstance(corpus, os.PathLike):
        return [os.fspath(corpus)]
    if isinstance(corpus, list | tuple) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        return [os.fspath(p) for p in corpus]
    return [f"{type(corpus).__module__}.{type(corpus).__qualname__}"]


def _say(message: str, show: bool) -> None:
    if show:
        print(f"hf-bpe: {message}", file=sys.stderr, flush=True)


def compare(
    corpus: Any,
    *,
    vocab_size: int,
    out: str | os.PathLike[str],
    against: Sequence[str] = PEERS,
    heldout_fraction: float = 0.1,
    heldout_seed: int = 0,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    pattern: str = "gpt2",
    text_column: str = "text",
    models: Mapping[str, str | os.PathLike[str]] = MappingProxyType({}),
    workers: int | None = None,
    peer_timeout: float = PEER_TIMEOUT,
    algorithm: str = "bpe",
    num_threads: int = 16,
    show_progress: bool = True,
    force: bool = False,
) -> dict[str, Any]:
    """Train hf_bpe and its peers on one training split, compare them on the held-out split, write the report.

    Args:
        corpus: what :func:`hf_bpe.train` accepts (texts, a ``datasets`` Dataset, path(s) of text files). With
            files, each file is a held-out subset of its own in the report and the chart.
        vocab_size: the vocabulary size of every tokenizer (specials and the 256 bytes included).
        out: the report folder (created): ``report.json``, ``report.md``, ``report.png`` and ``models/NAME``.
        against: peers to compare with: ``"tokenizers"``, ``"sentencepiece"`` (a list or a comma-separated str).
        heldout_fraction: share of documents held out (by :func:`is_heldout`); 0 holds out none.
        heldout_seed: seed of the held-out choice.
        special_tokens: special tokens for every tokenizer.
        min_frequency: hf_bpe's and tokenizers' ``min_frequency`` (SentencePiece has none).
        pattern: hf_bpe's pre-tokenizer pattern; `tokenizers` gets the equivalent ``Split`` + ``ByteLevel``.
        text_column: the text column, for datasets.
        models: already-trained models to load instead of training: ``{"hf_bpe": folder, "tokenizers":
            tokenizer.json or its folder, "sentencepiece": .model file or its folder}``.
        workers: hf_bpe's counting processes (default: as ``hf_bpe.train`` chooses for the split's size).
        algorithm: ``"bpe"`` (byte-level BPE: equal to tokenizers, metrics against SentencePiece BPE) or
            ``"unigram"``: hf_bpe's ``train_unigram(...)`` and spm_train's unigram on the same
            options (spm_train's defaults, every sentence kept:
            :func:`hf_bpe.tools.peers.sentencepiece_unigram_options`)
            must be identical (pieces, float32 score bits, types, held-out ids), and `tokenizers`' ``UnigramTrainer``
            is compared by metrics. The peers keep their names; ``min_frequency`` and ``pattern`` must stay default.
        num_threads: with ``"unigram"``, hf_bpe's and spm_train's ``num_threads`` (default 16, spm_train's: the
            model depends on it).
        peer_timeout: seconds each trainer's process may run (hf_bpe's too); one still running then is killed and
            reported with status ``"timed out"``, and the report covers the others.
        show_progress: progress and steps on stderr.
        force: replace an existing report in ``out``.

    Returns:
        The report (the content of ``report.json``; see the module docstring for its schema).

    Raises:
        TypeError, ValueError: for bad options (an unknown peer name, a fraction outside [0, 1), ...), or a
            training split that is empty.
        FileExistsError: when ``out`` holds a report and ``force`` is false.

    >>> import tempfile
    >>> texts = ["low lower lowest\\n", "new newer newest\\n"] * 50
    >>> report = compare(texts, vocab_size=270, out=tempfile.mkdtemp(), against=(), show_progress=False)
    >>> report["tokenizers"]["hf_bpe"]["status"], report["corpus"]["documents"], report["vs_tokenizers"]["status"]
    ('trained', 100, 'not requested')
    """
    # 1. Check the options before reading anything.
    from ...core.pretokenize import Pretokenizer
    from ...training.bpe.trainer import check_options

    peers, model_paths = _check_args(vocab_size, against, heldout_fraction, heldout_seed, models, workers,
                                     peer_timeout, algorithm, num_threads, (min_frequency, pattern))
    unigram = algorithm == "unigram"
    specials = check_options(vocab_size, min_frequency, special_tokens, None, workers)
    pretokenizer = Pretokenizer(pattern)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    existing = [n for n in ("report.json", "report.md", "report.png") if (folder / n).exists()]
    if existing and not force:
        raise FileExistsError(f"{os.fspath(out)!r} already holds {', '.join(existing)}; pass force=True "
                              "(CLI: --force) to replace the report")
    folder.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "versions": _versions(),
        "options": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                    "pattern": pattern, "against": peers, "heldout_fraction": heldout_fraction,
                    "heldout_seed": heldout_seed, "workers": workers, "algorithm": algorithm,
                    "num_threads": num_threads if unigram else None},
        "memory_measure": MEMORY_MEASURE,
        "notes": notes,
    }

    with tempfile.TemporaryDirectory(prefix="hf_bpe_compare_") as tmp_name:
        tmp = Path(tmp_name)
        # 2. One streaming pass: training split to a file, held-out split in memory, per subset.
        _say("splitting the corpus into training and held-out documents", show_progress)
        split = split_corpus(corpus, text_column=text_column, fraction=heldout_fraction, seed=heldout_seed,
                              folder=tmp, show_progress=show_progress)
        heldout_docs = sum(s.documents for s in split.subsets)
        report["corpus"] = {
            "source": _describe(corpus), "fingerprint": split.fingerprint, "documents": split.documents,
            "bytes": split.bytes, "characters": split.characters,
            "train": {"documents": split.train_documents, "bytes": split.train_bytes,
                      "characters": split.train_characters},
            "heldout": {"documents": heldout_docs, "bytes": sum(s.bytes for s in split.subsets),
                        "characters": sum(s.characters for s in split.subsets)},
            "subsets": [{"name": s.name, "documents": s.documents, "bytes": s.bytes, "characters": s.characters}
                        for s in split.subsets],
        }
        if split.train_documents == 0 or split.train_bytes == 0:
            raise ValueError(
                f"the training split is empty ({split.documents} documents, {split.train_documents} for training, "
                f"{split.train_bytes} bytes): give a larger corpus or a smaller heldout_fraction "
                f"(now {heldout_fraction!r})"
            )
        if heldout_docs == 0:
            notes.append(f"the held-out split is empty (heldout_fraction={heldout_fraction!r}): no encoding metrics")

        # 3. Train (or load) each tokenizer.
        if workers is None:
            from ...training.counts import choose_workers

            workers = choose_workers(pretokenizer, split.train_bytes)
        spec = {
            "train_file": os.fspath(split.train_path),
            "show_progress": show_progress,
            "options": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                        "pattern": pattern, "workers": workers,
                        "sentencepiece": sentencepiece_options(vocab_size=vocab_size, special_tokens=specials,
                                                               longest=split.longest_train_bytes)},
        }
        if unigram:
            spm_unigram = sentencepiece_unigram_options(vocab_size=vocab_size, special_tokens=specials,
                                                        longest=split.longest_train_bytes, num_threads=num_threads)
            spec["options"] = {"algorithm": "unigram", "vocab_size": vocab_size, "special_tokens": specials,
                               "sentencepiece": spm_unigram}
        configurations = {
            "hf_bpe": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                       "pattern": pattern, "workers": workers},
            "tokenizers": tokenizers_description(vocab_size=vocab_size, min_frequency=min_frequency,
                                                 special_tokens=specials, pattern=pattern),
            "sentencepiece": spec["options"]["sentencepiece"],
        }
        if unigram:
            configurations = {"hf_bpe": {"train_sentencepiece": spm_unigram},
                              "tokenizers": unigram_tokenizers_description(vocab_size=vocab_size,
                                                                           special_tokens=specials),
                              "sentencepiece": spm_unigram}
        loaders = UNIGRAM_LOADERS if unigram else LOADERS
        entries: dict[str, dict[str, Any]] = {}
        loaded: dict[str, Evaluated] = {}
        models_folder = folder / "models"
        for name in ("hf_bpe", *PEERS):
            entry: dict[str, Any] = {"status": "not requested", "version": report["versions"].get(name),
                                     "path": None, "vocab_size": None, "configuration": None, "warnings": [],
                                     "error": None, "training": None}
            entries[name] = entry
            if name != "hf_bpe" and name not in peers:
                continue
            if name != "hf_bpe" and not _installed(name):
                entry["status"] = "not installed"
                entry["error"] = f"{name} is not installed (pip install {name}); the report covers the others"
                _say(f"{name} is not installed: skipped", show_progress)
                continue
            if name in model_paths:
                path = model_paths[name]
                entry["status"] = "loaded"
            else:
                path = models_folder / name
                if path.exists():
                    shutil.rmtree(path)
                _say(f"training {name} (vocab_size={vocab_size}) on {split.train_documents:,} documents",
                     show_progress)
                result = train_in_child(name, {**spec, "out": os.fspath(path)}, tmp, timeout=peer_timeout)
                entry["warnings"] = result.get("warnings", [])
                if not result.get("ok"):
                    entry["status"] = "timed out" if result.get("timed_out") else "failed"
                    entry["error"] = _explain_failure(name, result.get("error", "unknown error"), vocab_size)
                    _say(f"{name} failed: {entry['error']}", show_progress)
                    continue
                entry["status"] = "trained"
                entry["configuration"] = configurations[name]
                entry["training"] = {k: result.get(k) for k in ("seconds", "peak_rss_bytes", "baseline_rss_bytes")}
            entry["path"] = os.fspath(path)
            try:
                loaded[name] = loaders[name](path)
            except Exception as exc:  # noqa: BLE001 - a peer's own loader may raise anything; report it
                entry["status"] = "failed"
                entry["error"] = f"cannot load {os.fspath(path)!r}: {type(exc).__name__}: {exc}"
                continue
            entry["vocab_size"] = _vocab_size(loaded[name])
            if entry["vocab_size"] is not None and entry["vocab_size"] < vocab_size:
                message = (f"{name} has {entry['vocab_size']} tokens, not the {vocab_size} asked for: the training "
                           "split ran out of pairs to merge (or of pieces); give a larger corpus or a smaller "
                           "vocab_size")
                notes.append(message)
                _say(f"warning: {message}", show_progress)
        report["tokenizers"] = entries

        # 4. Encode the held-out split with every tokenizer, per subset.
        encoded: dict[str, dict[str, list[list[int]]]] = {}
        heldout: dict[str, Any] = {}
        for name, tok in loaded.items():
            _say(f"encoding {heldout_docs:,} held-out documents with {name}", show_progress and heldout_docs > 0)
            encoded[name] = {}
            per_subset = {}
            for subset in split.subsets:
                ids = tok.encode_batch(subset.heldout)
                encoded[name][subset.name] = ids
                per_subset[subset.name] = metrics(tok, subset.heldout, ids)
            heldout[name] = {"all": merge_metrics(list(per_subset.values())), "subsets": per_subset}
        report["heldout"] = heldout

        if unigram:
            notes.append("unigram models normalize the text (spm_train's nmt_nfkc: NFKC, control characters and line "
                         "ends to spaces, spaces folded and stripped), so decoding gives the normalized text and the "
                         "round-trip rate counts only documents normalization leaves unchanged")
            report.update(_unigram_sections(peers, entries, loaded, encoded, split))
        # 5. hf_bpe vs tokenizers: equality.
        else:
            report["vs_tokenizers"] = vs_tokenizers(loaded, entries, encoded, split, pretokenizer, specials,
                                                 vocab_size, min_frequency, workers)
        # 6. hf_bpe vs SentencePiece: metrics.
            report["vs_sentencepiece"] = vs_sentencepiece(loaded, entries, encoded, split)
        # 7. hf_bpe in SentencePiece mode vs SentencePiece: equality, on the peer's own options.
        if "sentencepiece" in peers and not unigram:
            from .child import load_documents
            from .spm_exact import sentencepiece_exact

            _say("training hf_bpe in SentencePiece mode with the peer's options", show_progress)
            report["vs_sentencepiece_exact"] = sentencepiece_exact(
                entries, load_documents(os.fspath(split.train_path)),
                [doc for subset in split.subsets for doc in subset.heldout],
                {**spec["options"]["sentencepiece"], "vocab_size": vocab_size})
    from .. import plotting

    drawn = plotting.available()
    if not drawn:
        notes.append(f"report.png was not drawn: matplotlib is not installed ({plotting.INSTALL_HINT})")
    report["files"] = {"json": "report.json", "markdown": "report.md", "chart": "report.png" if drawn else None,
                       "models": {n: e["path"] for n, e in entries.items() if e["path"]}}

    # 8. Write the report files together.
    from ...formats import atomic

    files: dict[str, str | bytes] = {
        "report.json": json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        "report.md": render_markdown(report),
    }
    if drawn:
        files["report.png"] = render_chart(report)
    atomic.write_files(folder, files, force=True)
    return report


def _unigram_sections(peers: list[str], entries: dict[str, dict[str, Any]], loaded: dict[str, Evaluated],
                      encoded: dict[str, dict[str, list[list[int]]]], split: Any) -> dict[str, Any]:
    """Return the sections of a unigram report: exact against spm_train, metrics against tokenizers."""
    from .spm_exact import unigram_exact

    bpe_only = {"status": "not requested", "error": "a byte-level BPE comparison; this report is algorithm='unigram'"}
    sections: dict[str, Any] = {"vs_tokenizers": bpe_only, "vs_sentencepiece": dict(bpe_only)}
    if "sentencepiece" in peers:
        own_ids = [ids for subset in split.subsets for ids in encoded["hf_bpe"][subset.name]] \
            if "hf_bpe" in encoded else None  # hf_bpe's UnigramModel encoded the held-out split already
        sections["vs_sentencepiece_exact"] = unigram_exact(
            entries, [doc for subset in split.subsets for doc in subset.heldout], own_ids)
    sections["vs_tokenizers_unigram"] = vs_statistics(loaded, entries, encoded, split, peer="tokenizers",
                                                      convention=UNIGRAM_CONVENTION)
    return sections


def _installed(name: str) -> bool:
    """Whether a peer library can be imported (without importing it)."""
    return importlib.util.find_spec(name) is not None


def _vocab_size(tok: Evaluated) -> int | None:
    if isinstance(tok, EvaluatedHFBPE):
        return len(tok.model.vocab) + len(tok.model.special_tokens)
    if isinstance(tok, EvaluatedTokenizers):
        return tok.tokenizer.get_vocab_size(with_added_tokens=True)
    if isinstance(tok, EvaluatedSentencePiece):
        return tok.sp.get_piece_size()
    return None


def _explain_failure(name: str, error: str, vocab_size: int) -> str:
    """Turn a trainer's failure into a message that says what to change."""
    if name != "sentencepiece":
        return error
    required = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", error)
    if required:
        return (f"vocab_size={vocab_size} is too small for SentencePiece: with character_coverage=1.0 every distinct "
                f"character of the training split needs its own piece ({required.group(2)} with the meta pieces); "
                f"use a vocab_size above {required.group(2)} [SentencePiece: {error}]")
    too_high = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", error)
    if too_high:
        return (f"the training split is too small for SentencePiece to reach vocab_size={vocab_size}: it can make "
                f"at most {too_high.group(2)} pieces; give a larger corpus or a smaller vocab_size "
                f"[SentencePiece: {error}]")
    return error
