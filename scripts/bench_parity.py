"""Benchmark parity-aware BPE: hf_bpe's ``train_parity`` against `tokenizers`' ``ParityBpeTrainer``, one run.

Usage::

    python scripts/bench_parity.py [--sizes 0.5,2,8] [--num-merges 8000] [--variant base|window]
                                   [--balance dev|ratio] [--repeat 1] [--markdown]

Three languages in three scripts from ../shared/data: English (``corpora/en``), Chinese (``corpora/zh``, the Tang
poems) and Japanese (``corpora/multi``, a novel of 1.1 MB, so it stops growing past that size). For each size S
(MB per language), each language's first S MB of whole lines is training text and its last 100 KB the dev set
(with ``--balance dev``); ``--balance ratio`` gives rates 1 : 1.5 : 1.5 instead. The files are written once, before
any timing. Every run is a fresh child process (``_bench_common.run_child``): its peak RSS is that trainer's alone.
Timings (wall, and CPU of all the process's threads: ``tokenizers`` counts on every core, hf_bpe's merge loop is
one thread) cover reading the texts and training (not the interpreter start, the imports or writing the result):
hf_bpe reads the files (``train_parity`` with ``Path``s, as ``hf-bpe train --algorithm parity`` does);
``tokenizers`` gets each file's lines (``readlines()``, its users' way: it takes Python iterators only). Both use
GPT-2's pre-tokenizer without a prefix space. The ``same`` column checks that both wrote the same merges.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))
sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))

from _bench_common import ROOT, SHARED_DATA, fmt, format_table, machine_lines, median, run_child  # noqa: E402

LANGUAGES = {
    "en": "corpora/en/english_combined.txt",
    "zh": "corpora/zh/zh_quantangshi_traditional.txt",
    "ja": "corpora/multi/ja_wagahaiwa_nekodearu.txt",
}
RATIOS = {"en": 1.0, "zh": 1.5, "ja": 1.5}
DEV_BYTES = 100_000


def _whole_lines(data: bytes) -> bytes:
    """Cut at the last newline, and drop a character cut at the start (a dev slice from a file's end)."""
    data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8", "ignore").encode("utf-8")


def write_inputs(folder: Path, size_mb: float) -> dict[str, dict[str, str]]:
    """Write each language's training prefix and dev tail; return name -> {"train": path, "dev": path}."""
    out = {}
    for name, relative in LANGUAGES.items():
        data = (SHARED_DATA / relative).read_bytes()
        train = _whole_lines(data[: min(int(size_mb * 1e6), len(data) - DEV_BYTES)])
        dev = _whole_lines(data[-DEV_BYTES:])
        dev = dev[dev.find(b"\n") + 1:]
        paths = {"train": folder / f"{name}-{size_mb}.txt", "dev": folder / f"{name}-dev.txt"}
        paths["train"].write_bytes(train)
        paths["dev"].write_bytes(dev)
        out[name] = {k: os.fspath(v) for k, v in paths.items()}
    return out


def child(args: argparse.Namespace) -> None:
    """Train one peer on the inputs described in ``--inputs`` and write the timing and a digest of the merges."""
    inputs = json.loads(Path(args.inputs).read_text())
    options = {"num_merges": args.num_merges, "variant": args.variant}
    if args.peer == "hf_bpe":
        import hf_bpe

        started, cpu = time.perf_counter(), time.process_time()
        model = hf_bpe.train_parity(
            {n: Path(p["train"]) for n, p in inputs.items()},
            dev={n: Path(p["dev"]) for n, p in inputs.items()} if args.balance == "dev" else None,
            ratio=RATIOS if args.balance == "ratio" else None, show_progress=False, **options)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        merges = [(a + b).hex() for a, b in model.merges]
    else:
        from hf_bpe.core.bytelevel import str_to_token
        from hf_bpe.tools.peers import train_tokenizers_parity

        started, cpu = time.perf_counter(), time.process_time()
        lines = [Path(p["train"]).open(encoding="utf-8").readlines() for p in inputs.values()]
        dev = ([Path(p["dev"]).open(encoding="utf-8").readlines() for p in inputs.values()]
               if args.balance == "dev" else None)
        tokenizer = train_tokenizers_parity(lines, dev=dev, ratio=list(RATIOS.values()) if args.balance == "ratio"
                                            else None, **options)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        pairs = json.loads(tokenizer.to_str())["model"]["merges"]
        merges = [(str_to_token(a) + str_to_token(b)).hex() for a, b in pairs]
    digest = hashlib.sha256("\n".join(merges).encode()).hexdigest()
    Path(args.result).write_text(json.dumps({"seconds": seconds, "cpu": cpu, "merges": len(merges), "digest": digest}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="0.5,2,8", help="MB of training text per language (comma-separated)")
    parser.add_argument("--num-merges", type=int, default=8000)
    parser.add_argument("--variant", choices=("base", "window"), default="base")
    parser.add_argument("--balance", choices=("dev", "ratio"), default="dev")
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell (the table shows the median time)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", dest="peer", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        child(args)
        return
    if not (SHARED_DATA / LANGUAGES["en"]).is_file():
        sys.exit(f"bench_parity: the shared data is not at {SHARED_DATA} (set HF_BPE_SHARED_DATA)")
    print("\n".join(machine_lines(["hf_bpe", "tokenizers"])))
    print(f"command: python scripts/bench_parity.py --sizes {args.sizes} --num-merges {args.num_merges} "
          f"--variant {args.variant} --balance {args.balance} --repeat {args.repeat}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for size in (float(s) for s in args.sizes.split(",")):
            inputs = write_inputs(folder, size)
            (folder / "inputs.json").write_text(json.dumps(inputs))
            total_mb = sum(Path(p["train"]).stat().st_size for p in inputs.values()) / 1e6
            found = {}
            for peer in ("hf_bpe", "tokenizers"):
                runs = []
                for _ in range(args.repeat):
                    result = run_child(
                        [sys.executable, os.fspath(Path(__file__).resolve()), "--child", peer,
                         "--inputs", os.fspath(folder / "inputs.json"), "--result", os.fspath(folder / "r.json"),
                         "--num-merges", str(args.num_merges), "--variant", args.variant, "--balance", args.balance],
                        folder / "r.json", folder / "log.txt", env={**os.environ, "PYTHONPATH": os.fspath(ROOT)})
                    if result.status != 0:
                        sys.exit(f"bench_parity: {peer} failed:\n{result.log_tail}")
                    runs.append(result)
                found[peer] = (median([r.payload["seconds"] for r in runs]), max(r.peak_rss_mb for r in runs),
                               runs[0].payload, median([r.payload["cpu"] for r in runs]))
            same = "yes" if found["hf_bpe"][2]["digest"] == found["tokenizers"][2]["digest"] else "NO"
            ours, theirs = found["hf_bpe"], found["tokenizers"]
            rows.append([f"{size:g}", f"{total_mb:.1f}", str(ours[2]["merges"]), fmt(ours[0]), fmt(theirs[0]),
                         f"{theirs[0] / ours[0]:.1f}x", fmt(ours[3]), fmt(theirs[3]), f"{theirs[3] / ours[3]:.1f}x",
                         f"{ours[1]:.0f}", f"{theirs[1]:.0f}", same])
            print(f"  {size:g} MB per language done", file=sys.stderr)
    header = ["MB/lang", "MB total", "merges", "hf_bpe s", "tokenizers s", "speed-up", "hf_bpe CPU s",
              "tokenizers CPU s", "CPU ratio", "hf_bpe peak MB", "tokenizers peak MB", "same merges"]
    print(format_table(header, rows, markdown=args.markdown))


if __name__ == "__main__":
    main()
