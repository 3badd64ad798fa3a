"""Draw the benchmark charts of the docs site from the numbers committed beside them.

    python scripts/plot_benchmarks.py            # reads docs/benchmarks/data.json, writes docs/benchmarks/*.png

The numbers come from scripts/bench_train.py and scripts/bench_encode.py (each entry of data.json names its command
and date); this script only draws them, so the charts can be redrawn without rerunning anything. Needs matplotlib
(the ``docs`` extra).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
# One colour per peer across every chart; hf_bpe drawn last and thickest.
_STYLE = {"hf_bpe": ("#1f4e9c", 2.8), "gigabpe": ("#d95f02", 1.6), "rustbpe": ("#7570b3", 1.6),
          "tokenizers": ("#e7298a", 1.6), "sentencepiece": ("#66a61e", 1.6), "bpeasy": ("#a6761d", 1.6)}


def _figure(title: str, subtitle: str) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110, layout="constrained")
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(subtitle, fontsize=9, color="#555555")
    ax.grid(True, which="major", color="#dddddd")
    return fig, ax


def plot_training(data: dict[str, Any], key: str, label: str, out: Path, *, log_y: bool) -> None:
    """Draw one training measure against corpus size, one line per peer (log x; log y for times), into ``out``."""
    section = data["training_by_size"]
    fig, ax = _figure(f"Training byte-level BPE, vocab {section['vocab_size']:,}: {label}",
                      f"{data['machine']}; {section['date']}")
    sizes = section["sizes_mb"]
    for peer in sorted(section["peers"], key=lambda p: p == "hf_bpe"):
        values = section["peers"][peer][key]
        points = [(s, v) for s, v in zip(sizes, values, strict=True) if v is not None]
        colour, width = _STYLE.get(peer, ("#666666", 1.6))
        ax.plot([s for s, _ in points], [v for _, v in points], marker="o", color=colour, linewidth=width,
                label=peer)
    ax.set_xscale("log")
    if log_y:  # times span three decades; label them as numbers, not powers of ten
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_ylim(bottom=0)
    ax.set_xticks(sizes, [f"{s:,} MB" for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("corpus size (English text)")
    ax.set_ylabel(label)
    handles, labels = ax.get_legend_handles_labels()  # hf_bpe, drawn last, listed first
    ax.legend(handles[::-1], labels[::-1], frameon=False, fontsize=9)
    fig.savefig(out)


def plot_encoding(data: dict[str, Any], out: Path) -> None:
    """Draw the GPT-2 English encoding throughput of every peer in every cell (grouped bars) into ``out``."""
    import numpy as np

    section = data["encoding_gpt2_english"]
    fig, ax = _figure("Encoding with GPT-2's vocabulary, English: MB/s (higher is faster)",
                      f"{data['machine']}; {section['date']}")
    peers = list(section["peers"])
    cells = section["cells"]
    width = 0.8 / len(peers)
    for i, peer in enumerate(peers):
        values = [v if v is not None else 0 for v in section["peers"][peer]]
        colour = "#1f4e9c" if peer == "hf_bpe" else f"C{i + 1}"
        ax.bar(np.arange(len(cells)) + i * width, values, width, label=peer, color=colour)
    ax.set_xticks(np.arange(len(cells)) + 0.4 - width / 2, cells, fontsize=9)
    ax.set_ylabel("MB/s")
    ax.legend(frameon=False, fontsize=8, ncols=2)
    fig.savefig(out)


def main(argv: list[str] | None = None) -> int:
    """Draw every chart; return 0."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE / "data.json")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    plot_training(data, "training_s", "training time, s (lower is faster)", args.out / "training-time.png",
                  log_y=True)
    plot_training(data, "peak_mib", "peak memory, MiB (lower is smaller)", args.out / "training-memory.png",
                  log_y=False)
    plot_encoding(data, args.out / "encoding-gpt2-english.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
