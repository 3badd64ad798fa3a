"""Draw an evaluation report as a PNG chart (``report.png``) with matplotlib (the optional extra ``plot``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import plotting

__all__ = ["render_chart"]

_PANELS = (
    ("bytes_per_token", "bytes per token (higher compresses more)", None),
    ("parity_ratio", "tokens relative to the reference text {reference} (1 = same cost)", 1.0),
    ("renyi_efficiency", "Rényi efficiency, order {order} (higher uses the vocabulary more evenly)", None),
)


def render_chart(report: Mapping[str, Any]) -> bytes:
    """Draw grouped bars by text, one bar per tokenizer: bytes per token, parity ratio (Gini in the legend), Rényi
    efficiency.

    Raises:
        ImportError: when matplotlib is not installed (``pip install 'hf_bpe[plot]'``).
    """
    texts = [t["name"] for t in report["texts"]]
    tokenizers = [t for t in report["tokenizers"]]
    cell = {(r["tokenizer"], r["language"]): r for r in report["rows"]}
    width = max(10.0, 2.0 + len(texts) * (0.35 * len(tokenizers) + 0.5))
    figure = plotting.new_figure(width, 11.0)
    axes_list = figure.subplots(len(_PANELS), 1)
    bar = 0.8 / max(1, len(tokenizers))
    for axes, (key, title, baseline) in zip(axes_list, _PANELS):
        axes.set_title(title.format(**report["options"]), loc="left")
        for k, entry in enumerate(tokenizers):
            xs, ys = [], []
            for i, text in enumerate(texts):
                value = cell[entry["name"], text][key]
                if value is not None:
                    xs.append(i - 0.4 + bar * (k + 0.5))
                    ys.append(value)
            label = entry["name"]
            if key == "parity_ratio" and entry["parity"]["gini"] is not None:
                label += f" (Gini {entry['parity']['gini']:.3f})"
            axes.bar(xs, ys, bar * 0.92, color=plotting.color_of(k), label=label)
        if baseline is not None:
            axes.axhline(baseline, color="#444444", linewidth=0.8)
        axes.set_xticks(range(len(texts)), texts)
        axes.grid(axis="y", color="#e1e1e1")
        axes.set_axisbelow(True)
        axes.margins(y=0.12)
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=9)
    return plotting.png_bytes(figure)
