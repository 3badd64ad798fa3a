"""Charts drawn with matplotlib (the optional extra ``plot``): off-screen figures rendered to PNG bytes.

Only matplotlib's object API is used (``Figure`` on an Agg canvas, no ``pyplot``): drawing a report changes no global
state of the caller's session (its backend, open figures or style). PNGs carry no software or date metadata, so the
same report gives the same bytes under the same matplotlib.

>>> available() in (True, False)
True
"""

from __future__ import annotations

import io
from typing import Any

__all__ = ["COLORS", "INSTALL_HINT", "available", "color_of", "new_figure", "png_bytes"]

# matplotlib's "tab10" cycle: hf_bpe, tokenizers and sentencepiece keep the colours compare's chart always gave them.
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf")
INSTALL_HINT = "pip install 'hf_bpe[plot]' (or pip install matplotlib)"


def available() -> bool:
    """Return whether matplotlib can be imported (the charts are skipped, with a note, when it cannot)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def color_of(index: int) -> str:
    """Return the colour of the ``index``-th series (the tab10 cycle, repeated)."""
    return COLORS[index % len(COLORS)]


def new_figure(width: float, height: float) -> Any:
    """Return an empty matplotlib ``Figure`` of ``width`` x ``height`` inches on an Agg canvas.

    Raises:
        ImportError: when matplotlib is not installed; the message says how to install it.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(f"drawing charts needs matplotlib, which is not installed: {INSTALL_HINT}") from None
    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure: Any) -> bytes:
    """Return the figure as PNG bytes (100 dpi, no metadata)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None}, facecolor="white")
    return buffer.getvalue()
