"""Benchmark BPE training: hf_bpe against every peer installed here, on the same corpus, in one run.

Usage::

    python scripts/bench_train.py [--corpus PATH ...] [--vocab-size 32000] [--repeat 3] [--peers all|a,b]
                                  [--scale 1,2,4] [--prefix-mb 1,10] [--markdown]

Peers: ``hf_bpe``, ``tokenizers`` (BpeTrainer, ByteLevel, initial alphabet, ``train(files)``), ``sentencepiece``
(BPE, byte fallback), ``rustbpe``, ``bpeasy``, ``gigabpe`` (``train_bpe(files)``, ByteLevel), and the opt-in
``python`` (regex counting + the pure-Python reference merge loop; very slow, so not part of ``all``). A peer that
is not installed is skipped and the reason printed. Every timing runs in a fresh child process, so the peak memory
is that peer's alone; each is repeated ``--repeat`` times and the table shows the median. Timings cover training
only: not the interpreter start, the imports, or writing the result (a peer whose result is compared writes it in
one more run, which is not measured). Peers that take an iterator of strings
(rustbpe, bpeasy, python) read the files line by line in Python, as their users do; hf_bpe, tokenizers,
SentencePiece and gigabpe take the file paths.

All byte-level peers use GPT-2's pre-tokenizer regex and ask for ``--vocab-size`` tokens (256 bytes + merges);
SentencePiece counts its own specials and byte pieces in ``vocab_size``, which is kept as is. gigabpe has no
256-byte initial alphabet: its vocabulary is the bytes the corpus holds plus its merges, so it is asked for
``--vocab-size - 256 + (distinct bytes in the corpus)`` tokens (counted before the runs, not timed): exactly
`tokenizers`' number of merges, so that both do the same work and their merge lists can be compared (the table's
``vocab`` column shows gigabpe's smaller vocabulary).

Unigram (``--peers unigram``, or any of its rows by name): ``hf_bpe-unigram`` (``train_unigram(files,
num_threads=16)``), ``sentencepiece-unigram`` (``spm_train --model_type=unigram`` with all its
defaults, ``num_threads=16`` included) and ``tokenizers-unigram`` (``UnigramTrainer`` as
:func:`hf_bpe.tools.peers.train_tokenizers_unigram` sets it up, ``train(files)``), each asked for ``--vocab-size``
pieces. hf_bpe's row is shown only when its model is spm_train's: pieces, float32 score bits and types, and the ids
sentencepiece gives with each model on the corpus's first lines; their ratio column is against hf_bpe-unigram.

The same run checks that hf_bpe's and gigabpe's merges equal `tokenizers`' (``merges identical: yes/no``), splits
hf_bpe's time into counting pre-tokens and the merge loop, and with ``--scale 1,2,4`` trains hf_bpe and
`tokenizers` (and gigabpe when it runs) on the corpus concatenated k times to show that time per MB stays flat.
``--prefix-mb 1,10`` gives one table per prefix of the corpus instead (the small sizes, where interpreter start,
imports and fixed-size buffers weigh): its ``process s``, ``process CPU s`` and ``peak RSS MB`` columns are each
child's whole life, as ``hf-bpe train`` or a script that trains is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))
sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))

from _bench_common import (  # noqa: E402
    GPT2_PATTERN,
    ChildResult,
    fmt,
    format_table,
    load_average,
    machine_lines,
    median,
    missing_reason,
    run_child,
)

# peer -> (module that must be importable, distribution name for the version line).
PEERS: dict[str, tuple[str, str]] = {
    "hf_bpe": ("hf_bpe", "hf_bpe"),
    "hf_bpe-1thread": ("hf_bpe", "hf_bpe"),
    "hf_bpe-spark": ("pyspark", "pyspark"),
    "tokenizers": ("tokenizers", "tokenizers"),
    "sentencepiece": ("sentencepiece", "sentencepiece"),
    "sentencepiece-defaults": ("sentencepiece", "sentencepiece"),
    "hf_bpe-sentencepiece": ("sentencepiece", "sentencepiece"),
    "rustbpe": ("rustbpe", "rustbpe"),
    "bpeasy": ("bpeasy", "bpeasy"),
    "gigabpe": ("gigabpe", "gigabpe"),
    "python": ("regex", "regex"),
    "hf_bpe-unigram": ("sentencepiece", "hf_bpe"),  # sentencepiece: to check the model against spm_train
    "sentencepiece-unigram": ("sentencepiece", "sentencepiece"),
    "tokenizers-unigram": ("tokenizers", "tokenizers"),
}
# --peers unigram: hf_bpe's unigram, spm_train's (its defaults, num_threads=16) and tokenizers' UnigramTrainer.
UNIGRAM_PEERS = ("hf_bpe-unigram", "sentencepiece-unigram", "tokenizers-unigram")
# Lines of the corpus whose ids both unigram models must give alike (by sentencepiece) before the row is shown.
UNIGRAM_CHECK_LINES = 5000
DEFAULT_PEERS = ("hf_bpe", "hf_bpe-1thread", "tokenizers", "gigabpe", "sentencepiece", "rustbpe", "bpeasy")
# bpeasy has no "unlimited" max_token_length; no pre-token of a real corpus comes near this many bytes.
BPEASY_MAX_TOKEN_LENGTH = 1 << 20


# ---------------------------------------------------------------------------------------------- child side


def _lines(files: Sequence[str]) -> Iterator[str]:
    # Split on b"\n" only and keep it, as tokenizers' and hf_bpe's file readers do, so every peer sees the
    # same sequences.
    for name in files:
        with open(name, "rb") as handle:
            for line in handle:
                yield line.decode("utf-8")


def _train_hf_bpe(spec: dict[str, Any]) -> dict[str, Any]:
    import hf_bpe
    import hf_bpe.core._core as core
    import hf_bpe.training.counts as counting

    # Time the two phases inside the very run that is measured: wrap the two functions `train` calls.
    split = {"count": 0.0, "merge": 0.0, "count_calls": 0, "merge_calls": 0}

    def timing(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                split[name] += time.perf_counter() - start
                split[name + "_calls"] += 1

        return wrapper

    counting._count_words = timing("count", counting._count_words)  # from_corpus's counting (count_words's body)
    core.train_merges = timing("merge", core.train_merges)
    core.train_merges_flat = timing("merge", core.train_merges_flat)  # train()'s own counts, as the tally left them
    files = [Path(f) for f in spec["files"]]
    start = time.perf_counter()
    # Default workers: every usable CPU (counting threads); the "hf_bpe-1thread" row counts on one.
    model = hf_bpe.train(files, vocab_size=spec["vocab_size"], show_progress=False, workers=spec.get("workers"))
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {"seconds": seconds, "vocab": len(model)}
    if split["count_calls"] and split["merge_calls"]:
        result["split"] = {"count": split["count"], "merge": split["merge"]}
    if spec.get("save"):
        result["merges"] = os.fspath(model.save(Path(spec["out_dir"]) / "hf_bpe") / "merges.txt")
    return result


def _train_hf_bpe_spark(spec: dict[str, Any]) -> dict[str, Any]:
    """Count with Spark local[2] (session start included), merge on the driver: Spark's overhead on one machine."""
    import hf_bpe
    from hf_bpe.spark import count_words_spark, spark_session

    start = time.perf_counter()
    session = spark_session("local[2]")
    started = time.perf_counter()
    counts = count_words_spark([os.fspath(Path(f).resolve()) for f in spec["files"]], spark=session)
    counted = time.perf_counter()
    model = hf_bpe.train_from_counts(counts, vocab_size=spec["vocab_size"], show_progress=False)
    seconds = time.perf_counter() - start
    session.stop()
    result: dict[str, Any] = {"seconds": seconds, "vocab": len(model),
                              "split": {"count": counted - start, "merge": seconds - (counted - start)},
                              "spark_start": started - start}
    if spec.get("save"):
        result["merges"] = os.fspath(model.save(Path(spec["out_dir"]) / "hf_bpe_spark") / "merges.txt")
    return result


def _train_tokenizers(spec: dict[str, Any]) -> dict[str, Any]:
    from hf_bpe.tools.peers import tokenizers_tokenizer, tokenizers_trainer

    tokenizer = tokenizers_tokenizer()
    trainer = tokenizers_trainer(vocab_size=spec["vocab_size"])
    start = time.perf_counter()
    tokenizer.train(spec["files"], trainer)
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {"seconds": seconds, "vocab": tokenizer.get_vocab_size()}
    if spec.get("save"):
        out = Path(spec["out_dir"]) / "tokenizers"
        out.mkdir(parents=True, exist_ok=True)
        tokenizer.model.save(os.fspath(out))
        result["merges"] = os.fspath(out / "merges.txt")
    return result


def _train_sentencepiece(spec: dict[str, Any]) -> dict[str, Any]:
    import sentencepiece as spm

    from hf_bpe.tools.peers import sentencepiece_options

    out = Path(spec["out_dir"]) / "sentencepiece"
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    options = sentencepiece_options(vocab_size=spec["vocab_size"], longest=(1 << 20) - 1)
    spm.SentencePieceTrainer.train(input=",".join(spec["files"]), model_prefix=os.fspath(out / "spm"), **options)
    seconds = time.perf_counter() - start
    processor = spm.SentencePieceProcessor(model_file=os.fspath(out / "spm.model"))
    return {"seconds": seconds, "vocab": processor.get_piece_size()}


def _train_sentencepiece_defaults(spec: dict[str, Any]) -> dict[str, Any]:
    # spm_train --model_type=bpe with its own defaults (nmt_nfkc, coverage 0.9995): what the SentencePiece-mode
    # row of hf_bpe reproduces piece for piece.
    import sentencepiece as spm

    out = Path(spec["out_dir"]) / "sentencepiece-defaults"
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    spm.SentencePieceTrainer.train(input=",".join(spec["files"]), model_prefix=os.fspath(out / "spm"),
                                   model_type="bpe", vocab_size=spec["vocab_size"], minloglevel=2)
    seconds = time.perf_counter() - start
    processor = spm.SentencePieceProcessor(model_file=os.fspath(out / "spm.model"))
    return {"seconds": seconds, "vocab": processor.get_piece_size()}


def _train_hf_bpe_sentencepiece(spec: dict[str, Any]) -> dict[str, Any]:
    # hf_bpe's SentencePiece mode (the compiled trainer) with spm_train's defaults: the same pieces as
    # sentencepiece-defaults.
    from hf_bpe.training.sentencepiece.trainer import train_sentencepiece

    start = time.perf_counter()
    model = train_sentencepiece([Path(f) for f in spec["files"]], vocab_size=spec["vocab_size"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vocab": len(model.pieces)}


def _train_hf_bpe_unigram(spec: dict[str, Any]) -> dict[str, Any]:
    # hf_bpe's unigram trainer (compiled) with spm_train's defaults, num_threads=16 included: the same model as
    # sentencepiece-unigram, checked piece for piece and id for id before its row is shown.
    from hf_bpe.training.unigram.train import train_unigram

    start = time.perf_counter()
    model = train_unigram([Path(f) for f in spec["files"]], vocab_size=spec["vocab_size"], num_threads=16)
    seconds = time.perf_counter() - start
    out = Path(spec["out_dir"]) / "hf_bpe-unigram.model"
    out.write_bytes(model.to_bytes())
    return {"seconds": seconds, "vocab": len(model.pieces), "model": os.fspath(out)}


def _train_sentencepiece_unigram(spec: dict[str, Any]) -> dict[str, Any]:
    # spm_train --model_type=unigram with all its defaults (num_threads=16, nmt_nfkc, coverage 0.9995).
    import sentencepiece as spm

    out = Path(spec["out_dir"]) / "sentencepiece-unigram"
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    spm.SentencePieceTrainer.train(input=",".join(spec["files"]), model_prefix=os.fspath(out / "spm"),
                                   model_type="unigram", vocab_size=spec["vocab_size"], minloglevel=2)
    seconds = time.perf_counter() - start
    processor = spm.SentencePieceProcessor(model_file=os.fspath(out / "spm.model"))
    return {"seconds": seconds, "vocab": processor.get_piece_size(), "model": os.fspath(out / "spm.model")}


def _train_tokenizers_unigram(spec: dict[str, Any]) -> dict[str, Any]:
    # tokenizers' UnigramTrainer as its SentencePieceUnigramTokenizer sets it up (hf_bpe.tools.peers).
    from hf_bpe.tools.peers import train_tokenizers_unigram

    start = time.perf_counter()
    tokenizer = train_tokenizers_unigram(files=spec["files"], vocab_size=spec["vocab_size"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vocab": tokenizer.get_vocab_size()}


def _train_rustbpe(spec: dict[str, Any]) -> dict[str, Any]:
    import rustbpe

    tokenizer = rustbpe.Tokenizer()
    start = time.perf_counter()
    tokenizer.train_from_iterator(_lines(spec["files"]), vocab_size=spec["vocab_size"], pattern=GPT2_PATTERN)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vocab": tokenizer.vocab_size}


def _train_bpeasy(spec: dict[str, Any]) -> dict[str, Any]:
    import bpeasy

    start = time.perf_counter()
    vocab = bpeasy.train_bpe(_lines(spec["files"]), GPT2_PATTERN, BPEASY_MAX_TOKEN_LENGTH, spec["vocab_size"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vocab": len(vocab)}


def _train_gigabpe(spec: dict[str, Any]) -> dict[str, Any]:
    import gigabpe

    start = time.perf_counter()
    vocab, merges = gigabpe.train_bpe(spec["files"], spec["gigabpe_vocab_size"], pretokenizer="bytelevel")
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {"seconds": seconds, "vocab": len(vocab)}
    if spec.get("save"):
        out = Path(spec["out_dir"]) / "gigabpe"
        out.mkdir(parents=True, exist_ok=True)
        # Its merges are (left, right) in tokenizers' ByteLevel spelling: written as merges.txt lines.
        (out / "merges.txt").write_text("".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
        result["merges"] = os.fspath(out / "merges.txt")
    return result


def _train_python(spec: dict[str, Any]) -> dict[str, Any]:
    # A straightforward pure-Python trainer: `regex` pre-tokenization into a dict, then the reference merge
    # loop of hf_bpe (heap + pair index, no compiled code of ours).
    import regex

    from hf_bpe.core import _reference

    pattern = regex.compile(GPT2_PATTERN)
    start = time.perf_counter()
    counts: dict[bytes, int] = {}
    for line in _lines(spec["files"]):
        for piece in pattern.findall(line):
            word = piece.encode("utf-8")
            counts[word] = counts.get(word, 0) + 1
    words = list(counts)
    vocab, _merges = _reference.train_merges(words, [counts[w] for w in words], vocab_size=spec["vocab_size"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vocab": len(vocab)}


TRAINERS = {
    "hf_bpe": _train_hf_bpe,
    "hf_bpe-1thread": lambda spec: _train_hf_bpe({**spec, "workers": 1}),
    "hf_bpe-spark": lambda spec: _train_hf_bpe_spark(spec),
    "tokenizers": _train_tokenizers,
    "sentencepiece": _train_sentencepiece,
    "sentencepiece-defaults": _train_sentencepiece_defaults,
    "hf_bpe-sentencepiece": _train_hf_bpe_sentencepiece,
    "rustbpe": _train_rustbpe,
    "bpeasy": _train_bpeasy,
    "gigabpe": _train_gigabpe,
    "python": _train_python,
    "hf_bpe-unigram": _train_hf_bpe_unigram,
    "sentencepiece-unigram": _train_sentencepiece_unigram,
    "tokenizers-unigram": _train_tokenizers_unigram,
}


def _own_peak_mb() -> float | None:
    """This process's peak resident set (VmHWM), or None where /proc is absent.

    Unlike ``wait4``'s ``ru_maxrss`` seen by the parent, it is this child's own: a process started by posix_spawn
    starts with the parent's high-water mark, which hid every small peer's peak behind the parent's.
    """
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def _child_main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    result = TRAINERS[spec["peer"]](spec)
    result["hwm_mb"] = _own_peak_mb()
    Path(spec["result"]).write_text(json.dumps(result))
    return 0


# --------------------------------------------------------------------------------------------- parent side


class PeerRuns:
    """The repeated runs of one peer on one corpus."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.seconds: list[float] = []
        self.peak_rss: list[float] = []
        self.process_seconds: list[float] = []
        self.cpu_seconds: list[float] = []
        self.tree_rss: list[float] = []
        self.splits: list[dict[str, float]] = []
        self.vocab: int | None = None
        self.merges: str | None = None
        self.model: str | None = None  # a unigram tokenizer.model, for the identity check
        self.error: str | None = None

    @property
    def median_seconds(self) -> float | None:
        return median(self.seconds) if self.seconds else None


def _distinct_bytes(files: Sequence[str]) -> int:
    """Count the distinct byte values in ``files`` (read in bounded blocks)."""
    seen = bytearray(256)
    for name in files:
        with open(name, "rb") as handle:
            while block := handle.read(1 << 24):
                # Deleting the bytes already seen leaves only new ones: each pass over a block is one C call.
                for value in set(block.translate(None, bytes(i for i in range(256) if seen[i]))):
                    seen[value] = 1
    return sum(seen)


def _child_env() -> dict[str, str]:
    """The children's environment: this one, but free to cache bytecode, as an installed package has it.

    With PYTHONDONTWRITEBYTECODE set (and no __pycache__ yet), every child compiled each imported module from source
    again: about a quarter of the instructions of a 1 MB hf_bpe run, a cost no pip-installed package pays.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run_peer(peer: str, files: Sequence[str], vocab_size: int, repeat: int, work: Path, *,
              save: bool) -> PeerRuns:
    runs = PeerRuns(peer)
    # gigabpe: the same number of merges as tokenizers (it has no 256-byte initial alphabet).
    gigabpe_size = vocab_size - 256 + _distinct_bytes(files) if peer == "gigabpe" else None
    # A peer that saves its result does so in one more run, after the measured ones: writing differs from peer to
    # peer (hf_bpe's files and manifest, gigabpe's merges from Python) and is not training.
    for index in range(repeat + (1 if save else 0)):
        measured = index < repeat
        run_dir = work / f"{peer}-{index}"
        run_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "peer": peer,
            "files": list(files),
            "vocab_size": vocab_size,
            "gigabpe_vocab_size": gigabpe_size,
            "out_dir": os.fspath(run_dir),
            "result": os.fspath(run_dir / "result.json"),
            "save": not measured,
        }
        spec_path = run_dir / "spec.json"
        spec_path.write_text(json.dumps(spec))
        child: ChildResult = run_child(
            [sys.executable, os.fspath(Path(__file__).resolve()), "--child", os.fspath(spec_path)],
            run_dir / "result.json",
            run_dir / "log.txt",
            env=_child_env(),
        )
        if child.status != 0 or "seconds" not in child.payload:
            runs.error = f"failed (exit status {child.status}): {child.log_tail.strip()[-600:]}"
            return runs
        payload = child.payload
        runs.merges = payload.get("merges", runs.merges)
        runs.model = payload.get("model", runs.model)
        if not measured:
            continue
        runs.seconds.append(payload["seconds"])
        # The child's own VmHWM when it could read it (ru_maxrss starts at the parent's peak: see _own_peak_mb).
        runs.peak_rss.append(payload.get("hwm_mb") or child.peak_rss_mb)
        if child.wall_seconds is not None and child.cpu_seconds is not None:
            runs.process_seconds.append(child.wall_seconds)
            runs.cpu_seconds.append(child.cpu_seconds)
        if child.tree_rss_mb is not None:
            runs.tree_rss.append(child.tree_rss_mb)
        if "split" in payload:
            runs.splits.append(payload["split"])
        runs.vocab = payload.get("vocab")
        print(f"  {peer} run {index + 1}/{repeat}: {payload['seconds']:.2f} s, peak RSS {runs.peak_rss[-1]:.0f} MB",
              file=sys.stderr, flush=True)
    return runs


def _read_merges(path: str) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    # Only a FIRST line starting with "#version" is a header; later "#" lines are merges.
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    return lines


def _merges_identical(hf: PeerRuns | None, tk: PeerRuns | None) -> str:
    if hf is None or tk is None or hf.merges is None or tk.merges is None:
        return f"n/a (needs successful {hf.peer if hf else 'hf_bpe'} and tokenizers runs)"
    ours, theirs = _read_merges(hf.merges), _read_merges(tk.merges)
    if ours == theirs:
        return f"yes ({len(ours)} merges)"
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return (f"no: {len(ours)} vs {len(theirs)} merges, first difference at rank {first}: "
            f"{ours[first] if first < len(ours) else None!r} vs {theirs[first] if first < len(theirs) else None!r}")


def _unigram_identical(ours: PeerRuns | None, spm_runs: PeerRuns | None, files: Sequence[str]) -> str:
    """Say whether hf_bpe's unigram model is spm_train's: pieces, float32 score bits, types, and the ids
    sentencepiece gives with each on the corpus's first lines; "yes ..." or "no: ..." (the row is then withheld)."""
    if ours is None or spm_runs is None or ours.model is None or spm_runs.model is None:
        return "n/a (needs successful hf_bpe-unigram and sentencepiece-unigram runs)"
    import struct

    import sentencepiece as spm

    from hf_bpe.formats.sentencepiece_model import SentencePieceModel

    a, b = SentencePieceModel.load(ours.model).pieces, SentencePieceModel.load(spm_runs.model).pieces
    key = [(p.piece, struct.pack("<f", p.score), p.type) for p in a]
    other = [(p.piece, struct.pack("<f", p.score), p.type) for p in b]
    if key != other:
        first = next((i for i, (x, y) in enumerate(zip(key, other)) if x != y), min(len(key), len(other)))
        return (f"no: {len(key)} vs {len(other)} pieces, first difference at id {first}: "
                f"{key[first] if first < len(key) else None!r} vs {other[first] if first < len(other) else None!r}")
    lines = []
    for line in _lines(files):
        lines.append(line)
        if len(lines) == UNIGRAM_CHECK_LINES:
            break
    mine = spm.SentencePieceProcessor(model_file=ours.model).encode(lines)
    theirs = spm.SentencePieceProcessor(model_file=spm_runs.model).encode(lines)
    if mine != theirs:
        return f"no: pieces equal but ids differ on {sum(x != y for x, y in zip(mine, theirs))} of {len(lines)} lines"
    return (f"yes ({len(key)} pieces, scores as float32 bits and types identical; ids identical on the first "
            f"{len(lines):,} lines)")


def _corpus_files(paths: Sequence[str] | None) -> tuple[list[str], str]:
    if paths:
        files = [os.fspath(Path(p).resolve()) for p in paths]
        for name in files:
            if not Path(name).is_file():
                raise SystemExit(f"--corpus {name!r} is not a file; pass existing text files")
        return files, ", ".join(Path(f).name for f in files)
    from hf_bpe.training.corpus import default_corpus_files, describe_default_corpus

    return [os.fspath(p) for p in default_corpus_files()], "embedded default: " + describe_default_corpus()


def _parse_peers(text: str, parser: argparse.ArgumentParser) -> list[str]:
    peers: list[str] = []
    for name in (p.strip() for p in text.split(",")):
        group = DEFAULT_PEERS if name == "all" else UNIGRAM_PEERS if name == "unigram" else [name] if name else []
        for peer in group:
            if peer not in peers:
                peers.append(peer)
    unknown = [p for p in peers if p not in PEERS]
    if unknown or not peers:
        parser.error(f"--peers: unknown peer(s) {unknown!r}; choose 'all' or a comma list of {sorted(PEERS)}")
    return peers


def _parse_numbers(text: str, parser: argparse.ArgumentParser, number: type, what: str) -> list[Any]:
    """The comma list ``text`` of positive ``number``s, or a usage error saying ``what`` was expected."""
    try:
        values = [number(s) for s in text.split(",") if s.strip()]
    except ValueError:
        values = []
    if not values or any(v <= 0 for v in values):
        parser.error(f"{what}, got {text!r}")
    return values


def _parse_scale(text: str, parser: argparse.ArgumentParser) -> list[int]:
    return _parse_numbers(text, parser, int, "--scale must be a comma list of positive integers such as 1,2,4")


def _main_table(results: list[PeerRuns], size_mb: float, markdown: bool) -> str:
    base = next((r.median_seconds for r in results if r.peer == "hf_bpe" and r.seconds), None)
    # Unigram rows are set against hf_bpe's unigram trainer.
    unigram_base = next((r.median_seconds for r in results if r.peer == "hf_bpe-unigram" and r.seconds), None)
    header = ["peer", "median wall s", "MB/s", "process s", "process CPU s", "peak RSS MB", "tree RSS MB", "vocab",
              "ratio to hf_bpe"]
    rows = []
    for r in results:
        if r.error:
            continue
        m = r.median_seconds
        rows.append([
            r.peer,
            fmt(m),
            fmt(size_mb / m if m else None),
            fmt(median(r.process_seconds) if r.process_seconds else None),
            fmt(median(r.cpu_seconds) if r.cpu_seconds else None),
            fmt(max(r.peak_rss) if r.peak_rss else None, 0),
            fmt(max(r.tree_rss) if r.tree_rss else None, 0),
            str(r.vocab) if r.vocab is not None else "n/a",
            fmt(m / (unigram_base if r.peer in UNIGRAM_PEERS else base)
                if m and (unigram_base if r.peer in UNIGRAM_PEERS else base) else None),
        ])
    return format_table(header, rows, markdown=markdown)


def _split_line(hf: PeerRuns | None) -> str:
    if hf is None or not hf.splits:
        return "hf_bpe time split: n/a (hf_bpe did not run, or train() no longer calls _count_words/train_merges_flat)"
    count = median([s["count"] for s in hf.splits])
    merge = median([s["merge"] for s in hf.splits])
    total = hf.median_seconds or 0.0
    other = max(0.0, total - count - merge)
    return (f"hf_bpe time split (medians): counting pre-tokens {count:.2f} s, merge loop {merge:.2f} s, "
            f"other {other:.2f} s (of {total:.2f} s)")


def _scale_section(files: Sequence[str], scales: Sequence[int], peers: Sequence[str], args: argparse.Namespace,
                   work: Path) -> str:
    work.mkdir(parents=True, exist_ok=True)
    blob = b"".join(Path(f).read_bytes() for f in files)
    if blob and not blob.endswith(b"\n"):
        blob += b"\n"
    header = ["peer", "k", "MB", "median wall s", "s per MB", "s per MB vs 1st", "count s", "merge s",
              "peak RSS MB", "merges identical"]
    rows = []
    for k in scales:
        path = work / f"corpus_x{k}.txt"
        with open(path, "wb") as handle:
            for _ in range(k):
                handle.write(blob)
        size_mb = path.stat().st_size / 1e6
        print(f"scale {k}x ({size_mb:.1f} MB)", file=sys.stderr, flush=True)
        runs = {p: _run_peer(p, [os.fspath(path)], args.vocab_size, args.repeat, work / f"scale{k}", save=True)
                for p in peers}
        same = {p: _merges_identical(runs.get(p), runs.get("tokenizers")).split(" ")[0] for p in ("hf_bpe", "gigabpe")}
        for peer, r in runs.items():
            if r.error:
                rows.append([peer, str(k), fmt(size_mb), "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", r.error[:60]])
                continue
            per_mb = r.median_seconds / size_mb
            count = fmt(median([x["count"] for x in r.splits])) if r.splits else "-"
            merge = fmt(median([x["merge"] for x in r.splits])) if r.splits else "-"
            rss = fmt(max(r.peak_rss), 0) if r.peak_rss else "n/a"
            rows.append([peer, str(k), fmt(size_mb), fmt(r.median_seconds), fmt(per_mb, 3), "", count, merge, rss,
                         same.get(peer, same["hf_bpe"])])
        path.unlink()
    # Time per MB relative to the smallest scale: 1.00 means linear growth, < 1 sub-linear.
    first: dict[str, float] = {}
    for row in rows:
        if row[4] != "n/a":
            first.setdefault(row[0], float(row[4]))
            row[5] = fmt(float(row[4]) / first[row[0]] if first[row[0]] else None)
        else:
            row[5] = "n/a"
    return format_table(header, rows, markdown=args.markdown)


def _report(args: argparse.Namespace, peers: Sequence[str], scales: Sequence[int], files: list[str],
            description: str) -> list[str]:
    """Run every peer on ``files`` and return the lines of the table and its notes (and the scaling section)."""
    size_mb = sum(Path(f).stat().st_size for f in files) / 1e6
    out: list[str] = []
    out.append(f"{'- ' if args.markdown else ''}corpus: {description}; {len(files)} file(s), {size_mb:.2f} MB")
    out.append("")

    results: list[PeerRuns] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        work = Path(tmp)
        for peer in peers:
            reason = missing_reason(PEERS[peer][0])
            if reason:
                skipped.append(f"{peer}: skipped, {reason}")
                continue
            print(f"training with {peer} ({size_mb:.1f} MB, vocab {args.vocab_size})", file=sys.stderr, flush=True)
            runs = _run_peer(peer, files, args.vocab_size, args.repeat, work / "main",
                             save=peer in ("hf_bpe", "tokenizers", "gigabpe"))
            if runs.error:
                skipped.append(f"{peer}: {runs.error}")
            results.append(runs)
        by_peer = {r.peer: r for r in results if not r.error}
        kinds = {p in UNIGRAM_PEERS for p in peers}
        unigram_check = None
        if "hf_bpe-unigram" in by_peer:
            unigram_check = _unigram_identical(by_peer["hf_bpe-unigram"], by_peer.get("sentencepiece-unigram"), files)
            if not unigram_check.startswith("yes"):  # a model that is not spm_train's gets no row
                by_peer["hf_bpe-unigram"].error = f"not identical to spm_train's model: {unigram_check}"
                skipped.append(f"hf_bpe-unigram: row withheld, {unigram_check}")
        out.append(_main_table(results, size_mb, args.markdown))
        out.append("")
        for line in skipped:
            out.append(f"{'- ' if args.markdown else ''}{line}")
        if False in kinds:  # byte-level BPE peers ran
            out.append(f"{'- ' if args.markdown else ''}{_split_line(by_peer.get('hf_bpe'))}")
            out.append(f"{'- ' if args.markdown else ''}merges identical: "
                       f"{_merges_identical(by_peer.get('hf_bpe'), by_peer.get('tokenizers'))}")
        if unigram_check is not None:
            out.append(f"{'- ' if args.markdown else ''}unigram model identical to spm_train's (num_threads=16, "
                       f"its defaults): {unigram_check}")
        if "gigabpe" in by_peer:
            out.append(f"{'- ' if args.markdown else ''}gigabpe merges identical to tokenizers': "
                       f"{_merges_identical(by_peer.get('gigabpe'), by_peer.get('tokenizers'))} (its vocabulary "
                       "has no 256-byte initial alphabet: only the bytes the corpus holds, plus the same merges)")
        out.append(f"{'- ' if args.markdown else ''}ratio = peer time / hf_bpe time (> 1: hf_bpe is faster); "
                   "median wall s = training alone; process s / process CPU s = the child's whole life, interpreter "
                   "start and imports included (wall / user+system CPU); peak RSS = the child's own high-water mark "
                   "(VmHWM; wait4's ru_maxrss where /proc is absent); tree RSS = largest sampled sum over the "
                   "process and its workers")
        if scales:
            scale_peers = [p for p in ("hf_bpe", "tokenizers", "gigabpe") if p in by_peer]
            out += ["", f"## Scaling: corpus concatenated k times ({', '.join(scale_peers)})", ""]
            out.append(_scale_section(files, scales, scale_peers, args, work / "scale") if scale_peers
                       else "n/a: needs hf_bpe or tokenizers")
    return out


def _parse_prefix_mb(text: str, parser: argparse.ArgumentParser) -> list[float]:
    return _parse_numbers(text, parser, float, "--prefix-mb must be a comma list of sizes in MB such as 1,10")


def _prefix_file(files: Sequence[str], mb: float, work: Path) -> str:
    """Write the first ``mb`` MB of the files, end to end, cut after the last line end within them, to ``work``."""
    limit = int(mb * 1e6)
    parts: list[bytes] = []
    size = 0
    for name in files:
        with open(name, "rb") as handle:
            parts.append(handle.read(limit - size))
        size += len(parts[-1])
        if size >= limit:
            break
    blob = b"".join(parts)
    cut = blob.rfind(b"\n", 0, limit) + 1 if len(blob) >= limit else len(blob)
    path = work / f"prefix_{mb:g}MB.txt"
    path.write_bytes(blob[:cut] if cut else blob[:limit])
    return os.fspath(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the training benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", metavar="PATH", help="text file(s); default: the embedded default")
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per peer (median reported)")
    parser.add_argument("--peers", default="all",
                        help=f"comma list of {','.join(PEERS)}; 'all' stands for {','.join(DEFAULT_PEERS)}, "
                        f"'unigram' for {','.join(UNIGRAM_PEERS)}")
    parser.add_argument("--scale", default=None, metavar="K,K,...",
                        help="also train hf_bpe, tokenizers and gigabpe on the corpus concatenated K times, e.g. 1,2,4")
    parser.add_argument("--prefix-mb", default=None, metavar="MB,MB,...",
                        help="instead of the whole corpus, one table per prefix of it of about this many MB (cut at "
                        "a line end), e.g. 1,10: the small sizes, where start-up and fixed costs weigh")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument("--recipes", default=None, metavar="NAMES",
                        help="also time these named recipes ('all' or a comma list) against the implementations "
                        "they reproduce, on the first --corpus file (default english_combined); bench_recipes.py")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main(args.child)
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    if args.vocab_size < 257:
        parser.error(f"--vocab-size must be > 256 (the byte alphabet), got {args.vocab_size}")
    peers = _parse_peers(args.peers, parser)
    scales = _parse_scale(args.scale, parser) if args.scale else []

    files, description = _corpus_files(args.corpus)
    kinds = {p in UNIGRAM_PEERS for p in peers}
    title = "BPE and unigram" if kinds == {True, False} else "Unigram" if True in kinds else "BPE"
    out = [f"# {title} training benchmark (vocab_size={args.vocab_size}, repeat={args.repeat}, median of runs)", ""]
    out += [f"- {line}" if args.markdown else line for line in machine_lines([PEERS[p][1] for p in peers])]
    if args.prefix_mb:
        with tempfile.TemporaryDirectory(prefix="bench_train_prefix_") as tmp:
            for mb in _parse_prefix_mb(args.prefix_mb, parser):
                prefix = _prefix_file(files, mb, Path(tmp))
                out += ["", f"## First {mb:g} MB of the corpus", ""]
                out += _report(args, peers, scales, [prefix], f"the first {mb:g} MB of {description}, cut at a line end")
    else:
        out += _report(args, peers, scales, files, description)
    out += ["", f"{'- ' if args.markdown else ''}load average (1/5/15 min) at end: {load_average()}"]
    print("\n".join(out))
    if args.recipes:
        import bench_recipes

        print("\n# Named recipes against the implementations they reproduce\n")
        bench_recipes.main(["--recipes", args.recipes, *(["--corpus", files[0]] if args.corpus else []),
                            *(["--markdown"] if args.markdown else [])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
