"""SuperBPE against plain BPE at the same vocabulary: tokens per byte on held-out text, training time and memory.

For each corpus (English: ../shared/data/corpora/en; code: this interpreter's Python standard library sources;
Chinese: ../shared/data/corpora/zh), every 10th document is held out and the rest (up to --mb MB) trains plain
byte-level BPE at V ids and SuperBPE at V ids with several transitions T. Each training runs in its own child
process, so its wall time and peak resident memory are its own. Prints a Markdown table and draws the curve (fewer
tokens than plain BPE, in %, against T/V) to --png.

    python scripts/bench_superbpe.py --mb 5 --vocab 8000,32000 --fractions 0.5,0.75,0.9 --png superbpe_curve.png

The authors' figures (PythonNut/superbpe notebooks/superbpe_encoding_efficiency_analysis.ipynb, V=200k trained on
10 GB of OLMo 2 data): plain BPE 4.457 bytes/token; SuperBPE T=80k 6.634 (32.8% fewer tokens), T=180k 6.092 (26.8%).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
PAPER = {"V": 200_000, "bpe_bytes_per_token": 4.457, "superbpe": {80_000: 6.634, 180_000: 6.092}}


def documents(corpus: str, megabytes: float) -> tuple[list[str], list[str]]:
    """Return (training documents, held-out documents): every 10th document held out, up to ``megabytes`` in all."""
    limit = int(megabytes * 1_000_000 * 10 / 9)
    if corpus == "code":
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        docs, size = [], 0
        for path in sorted(stdlib.rglob("*.py")):
            if size >= limit:
                break
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            docs.append(text)
            size += len(text.encode("utf-8"))
    else:
        folder = SHARED / "corpora" / corpus
        text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt")))
        docs, size = [], 0
        for line in text.split("\n"):
            if size >= limit:
                break
            docs.append(line)
            size += len(line.encode("utf-8")) + 1
    return [d for i, d in enumerate(docs) if i % 10], [d for i, d in enumerate(docs) if i % 10 == 0]


def child(spec: dict) -> dict:
    """Train one tokenizer (in this process) and measure it on the held-out documents."""
    sys.path.insert(0, str(ROOT))
    import hf_bpe

    train, held = documents(spec["corpus"], spec["mb"])
    start = time.perf_counter()
    if spec["transition"] is None:
        model = hf_bpe.train(train, vocab_size=spec["vocab"], show_progress=False)
    else:
        model = hf_bpe.train_superbpe(train, vocab_size=spec["vocab"], transition=spec["transition"],
                                      show_progress=False)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tokens = sum(len(ids) for ids in model.encode_ordinary_batch(held))
    size = sum(len(d.encode("utf-8")) for d in held)
    return {**spec, "seconds": seconds, "peak_mib": peak, "tokens": tokens, "bytes": size,
            "ids": model.vocab_size}


def run(spec: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def draw(rows: list[dict], png: str, megabytes: float) -> None:
    """Draw fewer tokens than BPE (%) against T/V, one line per corpus and V, beside the paper's points."""
    try:
        import matplotlib
    except ImportError:
        sys.exit("bench_superbpe: error: --png needs matplotlib (pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for corpus, vocab in dict.fromkeys((r["corpus"], r["V"]) for r in rows):
        mine = [r for r in rows if r["corpus"] == corpus and r["V"] == vocab]
        ax.plot([r["T"] / vocab for r in mine], [100 * r["fewer"] for r in mine], marker="o",
                label=f"{corpus}, V={vocab // 1000}k ({megabytes:g} MB)")
    ax.plot([t / PAPER["V"] for t in PAPER["superbpe"]],
            [100 * (1 - PAPER["bpe_bytes_per_token"] / b) for b in PAPER["superbpe"].values()], "k--", marker="s",
            label="paper: OLMo 2, V=200k, 10 GB")
    ax.set_xlabel("transition T / vocabulary size V")
    ax.set_ylabel("fewer tokens than BPE at V (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=5.0, help="MB of each corpus (training + held out)")
    parser.add_argument("--corpora", default="en,code,zh")
    parser.add_argument("--vocab", default="8000,32000", help="vocabulary sizes V")
    parser.add_argument("--fractions", default="0.5,0.75,0.9", help="transitions T as fractions of V")
    parser.add_argument("--png", default=None, help="draw the curve to this PNG (needs matplotlib)")
    parser.add_argument("--json", default=None, help="write the rows to this JSON file")
    parser.add_argument("--from-json", default=None, help="draw --png from the rows of an earlier --json, no training")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    if args.from_json is not None:
        draw(json.loads(Path(args.from_json).read_text(encoding="utf-8")), args.png or "superbpe_curve.png", args.mb)
        return 0
    rows = []
    print("| corpus | V | T | tokens/byte BPE | tokens/byte SuperBPE | fewer tokens | train s BPE | train s SuperBPE "
          "| peak MiB BPE | peak MiB SuperBPE |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for corpus in args.corpora.split(","):
        for vocab in map(int, args.vocab.split(",")):
            plain = run({"corpus": corpus, "mb": args.mb, "vocab": vocab, "transition": None})
            for fraction in map(float, args.fractions.split(",")):
                sb = run({"corpus": corpus, "mb": args.mb, "vocab": vocab, "transition": int(vocab * fraction)})
                fewer = 1 - sb["tokens"] / plain["tokens"]
                rows.append({"corpus": corpus, "V": vocab, "T": sb["transition"], "plain": plain, "superbpe": sb,
                             "fewer": fewer})
                print(f"| {corpus} | {vocab} | {sb['transition']} | {plain['tokens'] / plain['bytes']:.4f} | "
                      f"{sb['tokens'] / sb['bytes']:.4f} | {100 * fewer:.1f}% | {plain['seconds']:.1f} | "
                      f"{sb['seconds']:.1f} | {plain['peak_mib']:.0f} | {sb['peak_mib']:.0f} |", flush=True)
    for t, bpt in PAPER["superbpe"].items():
        print(f"| paper (OLMo 2, 10 GB) | {PAPER['V']} | {t} | {1 / PAPER['bpe_bytes_per_token']:.4f} | "
              f"{1 / bpt:.4f} | {100 * (1 - PAPER['bpe_bytes_per_token'] / bpt):.1f}% | | | | |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if args.png:
        draw(rows, args.png, args.mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
