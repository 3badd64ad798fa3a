"""Benchmark the whole ``hf-bpe train`` command with 1 and N workers, runs alternating, as a user runs it.

Usage::

    python scripts/bench_workers.py [--corpus PATH] [--times 7] [--vocab-size 32000] [--workers 2] [--rounds 10]
                                    [--baseline CHECKOUT] [--markdown]

Each round runs ``hf-bpe train`` (a fresh interpreter: start-up, imports, reading, counting, the merge loop and
writing the files all count) once with ``--workers 1`` and once with ``--workers N``, and, with ``--baseline``, the
same two with the ``hf_bpe`` of another checkout (built in place), so that every side sees the same machine
load: on a noisy machine only alternating runs give a ratio that means something. The corpus is ``--corpus``
concatenated ``--times`` times into a temporary file (the issue's 160 MB of English: english_combined.txt 7×).
The table shows each side's median wall time and the 1-worker / N-worker ratio; the files written with 1 and N
workers are checked byte-identical.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))

from _bench_common import format_table, load_average, machine_lines, median  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "corpora" / "en" / "english_combined.txt"
_RUN = "import sys; sys.path.insert(0, sys.argv[1]); from hf_bpe.cli import main; sys.exit(main(sys.argv[2:]))"


def _train(checkout: Path, corpus: Path, out: Path, workers: int, vocab_size: int) -> float:
    argv = [sys.executable, "-c", _RUN, os.fspath(checkout), "train", os.fspath(corpus), "--vocab-size",
            str(vocab_size), "--out", os.fspath(out), "--force", "--workers", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench_workers: {' '.join(argv[3:])} failed:\n{done.stderr[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--times", type=int, default=7, help="concatenate the corpus this many times")
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--workers", type=int, default=2, help="the N compared with 1")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline", type=Path, help="another checkout whose hf_bpe runs alternating too")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        parser.error(f"--corpus {os.fspath(args.corpus)!r} is not a file")
    sides = [("HEAD", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    times: dict[tuple[str, int], list[float]] = {(name, w): [] for name, _ in sides for w in (1, args.workers)}
    print("\n".join(f"- {line}" for line in machine_lines(["hf_bpe"])))
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch) / "corpus.txt"
        data = args.corpus.read_bytes()
        corpus.write_bytes(data * args.times)
        print(f"- corpus: {args.corpus.name} x{args.times}, {len(data) * args.times / 1e6:.1f} MB; "
              f"{args.rounds} rounds, the runs alternating")
        for _ in range(args.rounds):
            for name, checkout in sides:
                for workers in (1, args.workers):
                    out = Path(scratch) / f"{name}-{workers}"
                    times[name, workers].append(_train(checkout, corpus, out, workers, args.vocab_size))
        for name, _ in sides:
            for file in ("vocab.json", "merges.txt", "tokenizer.json"):
                one, many = Path(scratch) / f"{name}-1" / file, Path(scratch) / f"{name}-{args.workers}" / file
                if not filecmp.cmp(one, many, shallow=False):
                    raise SystemExit(f"bench_workers: {name}: {file} differs between 1 and {args.workers} workers")
    rows = []
    for name, checkout in sides:
        one, many = median(times[name, 1]), median(times[name, args.workers])
        rows.append([f"{name} ({os.fspath(checkout)})", f"{one:.3f}", f"{many:.3f}", f"{one / many:.3f}"])
    print()
    print(format_table(["code", "median s, --workers 1", f"median s, --workers {args.workers}", "ratio"], rows,
                       markdown=args.markdown))
    print(f"- files identical for 1 and {args.workers} workers: yes")
    print(f"- load average (1/5/15 min) at end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
