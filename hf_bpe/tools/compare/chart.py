"""Draw a comparison report as a PNG chart (``report.png``) with matplotlib (the optional extra ``plot``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import plotting
from .markdown import ordered, summary

__all__ = ["render_chart"]

_MUTED = "#787878"


def _color(name: str) -> str:
    """hf_bpe, tokenizers and sentencepiece keep one colour each, whatever the report holds."""
    known = ("hf_bpe", "tokenizers", "sentencepiece")
    return plotting.color_of(known.index(name)) if name in known else _MUTED


def _held_out_panel(axes: Any, report: Mapping[str, Any], names: list[str], groups: list[str]) -> None:
    """Grouped bars: held-out tokens per byte, per subset (and all subsets), one bar per tokenizer."""
    held = report["corpus"]["heldout"]
    axes.set_title(f"tokens per byte on {held['documents']:,} held-out documents (lower is better)", loc="left")

    def value_of(name: str, group: str) -> float | None:
        metrics = report["heldout"][name]
        return (metrics["all"] if group == "all" else metrics["subsets"][group])["tokens_per_byte"]

    values = {(n, g): value_of(n, g) for n in names for g in groups}
    if not names or not any(values.values()):
        axes.text(0.5, 0.5, "no held-out documents encoded", color=_MUTED, ha="center", va="center",
                  transform=axes.transAxes)
        axes.set_xticks([])
        axes.set_yticks([])
        return
    width = 0.8 / len(names)
    for ni, name in enumerate(names):
        xs = [gi - 0.4 + width * (ni + 0.5) for gi, g in enumerate(groups) if values[name, g] is not None]
        ys = [values[name, g] for g in groups if values[name, g] is not None]
        bars = axes.bar(xs, ys, width * 0.92, color=_color(name), label=name)
        axes.bar_label(bars, labels=[f"{y:.3f}" for y in ys], padding=2, fontsize=8)
    axes.set_xticks(range(len(groups)), [g.removesuffix(".txt") for g in groups])
    axes.set_ylabel("tokens per byte")
    axes.margins(y=0.15)
    axes.grid(axis="y", color="#e1e1e1")
    axes.set_axisbelow(True)
    axes.legend(loc="upper left", ncols=len(names), frameon=False)


def _training_panel(axes: Any, entries: Mapping[str, Any], shown: list[str], key: str, unit: float, title: str,
                    fmt: str) -> None:
    """Horizontal bars, one per tokenizer (its status where there is no figure)."""
    axes.set_title(title, loc="left")
    rows = list(reversed(shown))
    values = []
    for name in rows:
        training = entries[name]["training"] or {}
        values.append(None if training.get(key) is None else training[key] / unit)
    bars = axes.barh(range(len(rows)), [v or 0 for v in values], color=[_color(n) for n in rows])
    axes.bar_label(bars, labels=[fmt.format(v) if v is not None else
                                 (entries[n]["status"] if entries[n]["status"] != "trained" else "n/a")
                                 for n, v in zip(rows, values)], padding=4, fontsize=9)
    axes.set_yticks(range(len(rows)), rows)
    axes.margins(x=0.2)
    axes.grid(axis="x", color="#e1e1e1")
    axes.set_axisbelow(True)


def render_chart(report: Mapping[str, Any]) -> bytes:
    """Draw the report as a PNG: held-out tokens per byte per subset (grouped bars), training time and memory.

    Raises:
        ImportError: when matplotlib is not installed (``pip install 'hf_bpe[plot]'``).
    """
    names = ordered(report["heldout"])
    subsets = [s["name"] for s in report["corpus"]["subsets"]]
    groups = [*subsets, "all"] if len(subsets) > 1 else subsets
    entries = report["tokenizers"]
    shown = [n for n in ordered(entries) if entries[n]["status"] != "not requested"] or ["hf_bpe"]
    width = max(10.0, 2.0 + len(groups) * (len(names) * 0.6 + 0.6))
    bar_rows = 0.55 * len(shown) + 0.8
    figure = plotting.new_figure(width, 4.6 + 2 * bar_rows + 0.9)
    grid = figure.add_gridspec(3, 1, height_ratios=[4.6, bar_rows, bar_rows])
    figure.suptitle(f"hf_bpe cross-validation, vocab {report['options']['vocab_size']:,}\n"
                    + "\n".join(summary(report).split("; ")[:2]), x=0.01, ha="left", fontsize=12)
    _held_out_panel(figure.add_subplot(grid[0]), report, names, groups)
    _training_panel(figure.add_subplot(grid[1]), entries, shown, "seconds", 1, "training wall time (seconds)",
                    "{:,.2f} s")
    _training_panel(figure.add_subplot(grid[2]), entries, shown, "peak_rss_bytes", 2**20,
                    "peak memory of the training process (MB)", "{:,.0f} MB")
    return plotting.png_bytes(figure)
