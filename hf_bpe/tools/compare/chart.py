"""Draw a comparison report as a PNG chart (``report.png``) with no dependency: a bitmap font, zlib and struct."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from typing import Any

from .markdown import ordered, summary

__all__ = ["render_chart"]

_FONT_ROWS = {
    " ": "..... ..... ..... ..... ..... ..... .....",
    "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    '"': ".#.#. .#.#. ..... ..... ..... ..... .....",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
    "%": "##..# ##..# ...#. ..#.. .#... #..## #..##",
    "'": "..#.. ..#.. ..... ..... ..... ..... .....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    ",": "..... ..... ..... ..... ..... .##.. ..#.. .#...",
    "-": "..... ..... ..... ##### ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    ";": "..... .##.. .##.. ..... .##.. .##.. ..#.. .#...",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    "=": "..... ..... ##### ..... ##### ..... .....",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "[": ".###. .#... .#... .#... .#... .#... .###.",
    "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "_": "..... ..... ..... ..... ..... ..... ..... #####",
    "a": "..... ..... .###. ....# .#### #...# .####",
    "b": "#.... #.... #.##. ##..# #...# #...# ####.",
    "c": "..... ..... .###. #.... #.... #...# .###.",
    "d": "....# ....# .##.# #..## #...# #...# .####",
    "e": "..... ..... .###. #...# ##### #.... .###.",
    "f": "..##. .#..# .#... ###.. .#... .#... .#...",
    "g": "..... ..... .#### #...# #...# #...# .#### ....# .###.",
    "h": "#.... #.... #.##. ##..# #...# #...# #...#",
    "i": "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "j": "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
    "k": "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
    "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "m": "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#",
    "n": "..... ..... #.##. ##..# #...# #...# #...#",
    "o": "..... ..... .###. #...# #...# #...# .###.",
    "p": "..... ..... ####. #...# #...# #...# ####. #.... #....",
    "q": "..... ..... .#### #...# #...# #...# .#### ....# ....#",
    "r": "..... ..... #.##. ##..# #.... #.... #....",
    "s": "..... ..... .###. #.... .###. ....# ####.",
    "t": ".#... .#... ###.. .#... .#... .#..# ..##.",
    "u": "..... ..... #...# #...# #...# #..## .##.#",
    "v": "..... ..... #...# #...# #...# .#.#. ..#..",
    "w": "..... ..... #...# #...# #.#.# #.#.# .#.#.",
    "x": "..... ..... #...# .#.#. ..#.. .#.#. #...#",
    "y": "..... ..... #...# #...# #...# #...# .#### ....# .###.",
    "z": "..... ..... ##### ...#. ..#.. .#... #####",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
}
_FONT = {c: [row for row in rows.split()] + ["....."] * (9 - len(rows.split())) for c, rows in _FONT_ROWS.items()}
_GLYPH_W, _GLYPH_H = 6, 9  # advance (5 + 1 space), height

_WHITE = (255, 255, 255)
_INK = (40, 40, 40)
_GRID = (225, 225, 225)
_MUTED = (120, 120, 120)
_COLORS = {"hf_bpe": (31, 119, 180), "tokenizers": (255, 127, 14), "sentencepiece": (44, 160, 44)}


class _Canvas:
    """An RGB raster with rectangles and bitmap text; :meth:`png` encodes it (zlib + struct, no dependency)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(_WHITE * (width * height))

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        x0, x1 = max(0, min(x0, x1)), min(self.width, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.height, max(y0, y1))
        if x0 >= x1:
            return
        row = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start : start + len(row)] = row

    @staticmethod
    def text_width(text: str, scale: int) -> int:
        return max(0, len(text) * _GLYPH_W * scale - scale)

    def text(self, x: int, y: int, text: str, *, scale: int = 2, color: tuple[int, int, int] = _INK,
             align: str = "left") -> None:
        if align == "center":
            x -= self.text_width(text, scale) // 2
        elif align == "right":
            x -= self.text_width(text, scale)
        for char in text:
            glyph = _FONT.get(char, _FONT["?"])
            for r, row in enumerate(glyph):
                for c, ink in enumerate(row):
                    if ink == "#":
                        self.rect(x + c * scale, y + r * scale, x + (c + 1) * scale, y + (r + 1) * scale, color)
            x += _GLYPH_W * scale

    def png(self) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) \
            + chunk(b"IEND", b"")


def _fit(text: str, width: int, scale: int) -> str:
    limit = max(1, width // (_GLYPH_W * scale))
    return text if len(text) <= limit else text[: max(1, limit - 2)] + ".."


def _nice_max(value: float) -> tuple[float, float]:
    """A round axis maximum above ``value`` and its tick step."""
    if value <= 0:
        return 1.0, 0.25
    exponent = 10 ** int(f"{value:e}".split("e")[1])
    for step in (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0):
        tick = step * exponent
        if value / tick <= 5:
            return tick * (int(value / tick) + 1), tick
    return value * 1.2, value / 4


def _hbar_panel(canvas: _Canvas, top: int, title: str, rows: list[tuple[str, float | None, str]]) -> int:
    """Horizontal bars, one per tokenizer; returns the next free y."""
    canvas.text(30, top, title, scale=2)
    top += 30
    left, right = 200, canvas.width - 160
    largest = max([v for _, v, _ in rows if v is not None], default=0.0)
    for name, value, label in rows:
        canvas.text(left - 12, top + 4, name, align="right")
        if value is not None and largest > 0:
            end = left + max(2, int((right - left) * value / largest))
            canvas.rect(left, top, end, top + 26, _COLORS.get(name, _MUTED))
            canvas.text(end + 8, top + 4, label)
        else:
            canvas.text(left, top + 4, label, color=_MUTED)
        top += 34
    return top + 16


def render_chart(report: Mapping[str, Any]) -> bytes:
    """Draw the report as a PNG: held-out tokens per byte per subset (grouped bars), training time and memory."""
    names = ordered(report["heldout"])
    subsets = [s["name"] for s in report["corpus"]["subsets"]]
    groups = [*subsets, "all"] if len(subsets) > 1 else subsets
    entries = report["tokenizers"]
    shown = [n for n in ordered(entries) if entries[n]["status"] != "not requested"]
    width = max(1000, 200 + len(groups) * (len(names) * 56 + 60))
    plot_top = 190
    plot_bottom = plot_top + 280
    panel = 30 + 34 * max(1, len(shown)) + 16
    canvas = _Canvas(width, plot_bottom + 50 + 2 * panel + 10)

    # 1. Title, and the verdicts in words.
    opts = report["options"]
    canvas.text(30, 16, _fit(f"hf_bpe cross-validation, vocab {opts['vocab_size']:,}", width - 60, 3), scale=3)
    for k, line in enumerate(summary(report).split("; ")[:2]):
        canvas.text(30, 56 + 24 * k, _fit(line, width - 60, 2), color=_MUTED)

    # 2. Grouped bars: tokens per byte, per held-out subset (lower = better compression), with a legend.
    held = report["corpus"]["heldout"]
    canvas.text(30, 118, f"tokens per byte on {held['documents']:,} held-out documents (lower is better)")
    x = 30
    for name in names:
        canvas.rect(x, 146, x + 18, 164, _COLORS.get(name, _MUTED))
        canvas.text(x + 26, 148, name)
        x += 26 + canvas.text_width(name, 2) + 30
    plot_left, plot_right = 100, width - 30

    def value_of(name: str, group: str) -> float | None:
        metrics = report["heldout"][name]
        return (metrics["all"] if group == "all" else metrics["subsets"][group])["tokens_per_byte"]

    numbers = [value_of(n, g) for n in names for g in groups]
    largest = max([v for v in numbers if v is not None], default=0.0)
    if not names or largest == 0:
        canvas.text((plot_left + plot_right) // 2, (plot_top + plot_bottom) // 2, "no held-out documents encoded",
                    color=_MUTED, align="center")
    else:
        axis_max, tick = _nice_max(largest)
        steps = round(axis_max / tick)
        for k in range(steps + 1):
            y = plot_bottom - int((plot_bottom - plot_top) * k / steps)
            canvas.rect(plot_left, y, plot_right, y + 1, _GRID)
            canvas.text(plot_left - 10, y - 8, f"{k * tick:.3f}".rstrip("0").rstrip(".") if k else "0",
                        align="right")
        group_width = (plot_right - plot_left) / len(groups)
        bar = max(8, min(80, int((group_width - 30) / max(1, len(names)))))
        for gi, group in enumerate(groups):
            center = plot_left + group_width * (gi + 0.5)
            start = int(center - bar * len(names) / 2)
            for ni, name in enumerate(names):
                value = value_of(name, group)
                if value is None:
                    continue
                x0 = start + ni * bar
                y0 = plot_bottom - int((plot_bottom - plot_top) * value / axis_max)
                canvas.rect(x0 + 2, y0, x0 + bar - 2, plot_bottom, _COLORS.get(name, _MUTED))
                label_scale = 2 if canvas.text_width(f"{value:.3f}", 2) <= bar + 8 else 1
                canvas.text(x0 + bar // 2, y0 - 9 * label_scale - 4, f"{value:.3f}", scale=label_scale,
                            align="center")
            label = _fit(group.removesuffix(".txt"), int(group_width) - 8, 2)
            canvas.text(int(center), plot_bottom + 10, label, align="center")
        canvas.rect(plot_left, plot_bottom, plot_right, plot_bottom + 2, _INK)

    # 3. Training time and peak memory, one bar per tokenizer.
    def row(name: str, key: str, unit: float, fmt: str) -> tuple[str, float | None, str]:
        entry = entries[name]
        training = entry["training"] or {}
        if training.get(key) is None:
            return name, None, entry["status"] if entry["status"] != "trained" else "n/a"
        return name, training[key] / unit, fmt.format(training[key] / unit)

    top = _hbar_panel(canvas, plot_bottom + 50, "training wall time (seconds)",
                      [row(n, "seconds", 1, "{:,.2f} s") for n in shown])
    _hbar_panel(canvas, top, "peak memory of the training process (MB)",
                [row(n, "peak_rss_bytes", 2**20, "{:,.0f} MB") for n in shown])
    return canvas.png()


