"""``report.html``: sample lines of each text as each tokenizer splits them, side by side, in one self-contained page.

Tokens alternate in two colours; hovering one shows its id and spelling (``title``). Inline CSS, no script, nothing
fetched. Every piece of text is escaped. Each token's ``<span class="t ...">`` holds the part of the line it stands
for (its *surface*, see :class:`~hf_bpe.tools.evaluate.subjects.Span`), so the spans of a line concatenate to the
line exactly; a byte-level token that holds only the first bytes of a character is an empty span that CSS labels
with its bytes in hex (``data-bytes``), and the character appears in the token that completes it (underlined).
Text that no token covers (a tokenizer that drops it) is a ``<span class="g">``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..compare.evaluated import partial_character
from .markdown import DEFINITIONS, _num
from .subjects import Span, Subject

__all__ = ["render_html", "token_spans"]

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 8px; }
p.note { color: #555; max-width: 1100px; margin: 4px 0 14px; }
table.summary { border-collapse: collapse; font-size: 13px; margin: 8px 0 4px; }
table.summary th, table.summary td { border-bottom: 1px solid #ddd; padding: 3px 9px; text-align: right; }
table.summary th:nth-child(-n+2), table.summary td:nth-child(-n+2) { text-align: left; }
.line { margin: 0 0 14px; }
.num { font-size: 11px; color: #888; margin: 0 0 2px 2px; }
details { margin: 6px 0 10px; } summary { cursor: pointer; color: #245; }
.grid { display: grid; gap: 8px; }
.cell { border: 1px solid #ddd; border-radius: 6px; padding: 6px 8px; min-width: 0; background: #fff; }
.who { font-size: 12px; color: #555; margin-bottom: 4px; }
.who b { color: #222; }
.toks { font: 14px/1.9 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Noto Sans Mono CJK SC",
        "Noto Sans CJK SC", monospace; white-space: pre-wrap;
        overflow-wrap: anywhere; }
.t { border-radius: 3px; padding: 1px 0; }
.a0 { background: #cfe3f7; } .a1 { background: #fbdcb5; }
.t.p::before { content: attr(data-bytes); font-size: 10px; color: #7a4b00; padding: 0 2px; }
.t.c { text-decoration: underline dotted #7a4b00; }
.g { color: #999; background: repeating-linear-gradient(45deg, #f4f4f4, #f4f4f4 3px, #e8e8e8 3px, #e8e8e8 6px); }
"""


def _label(span: Span) -> str:
    spelled = json.dumps(span.token.decode("utf-8", "backslashreplace"), ensure_ascii=False)
    return f"id {span.token_id} · {spelled}"


def token_spans(spans: Sequence[Span]) -> str:
    """Return the HTML of one line's spans: alternating colours, the id and spelling in ``title``."""
    out = []
    k = 0
    for span in spans:
        text = escape(span.surface.decode("utf-8", "replace"), quote=False)
        if span.token_id is None:
            out.append(f'<span class="g" title="no token covers this text">{text}</span>')
            continue
        classes = f"t a{k % 2}"
        extra = ""
        if span.token != span.surface:
            hexed = " ".join(f"{b:02x}" for b in span.token)
            if not span.surface:
                # A token standing for no text of the line: the first bytes of a character (labelled in hex), or a
                # piece the tokenizer adds (SentencePiece's dummy-prefix '▁', labelled as spelled).
                classes += " p"
                try:
                    shown = span.token.decode("utf-8").replace(" ", "\u2581") or "\u2205"
                except UnicodeDecodeError:
                    shown = hexed
                extra = f' data-bytes="{escape(shown)}"'
                title = f"{_label(span)} (bytes {hexed})"
            elif partial_character(span.token):
                classes += " c"  # a character split between tokens: its bytes and the text shown differ
                title = f"{_label(span)} (bytes {hexed})"
            else:  # e.g. [UNK], or a normalized spelling: the spelling says it
                title = _label(span)
        else:
            title = _label(span)
        out.append(f'<span class="{classes}" title="{escape(title)}"{extra}>{text}</span>')
        k += 1
    return "".join(out)


def _summary(report: Mapping[str, Any]) -> str:
    head = ("tokenizer", "text", "bytes", "words", "tokens", "bytes/token", "tokens/word", "Rényi eff.", "vocab used",
            "parity")
    rows = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    for r in report["rows"]:
        share = r["vocab_used_share"]
        cells = (r["tokenizer"], r["language"], _num(r["bytes"]), _num(r["words"]), _num(r["tokens"]),
                 _num(r["bytes_per_token"]), _num(r["tokens_per_word"]), _num(r["renyi_efficiency"]),
                 "n/a" if share is None else f"{100 * share:.1f}%", _num(r["parity_ratio"]))
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return '<table class="summary">' + "".join(rows) + "</table>"


def render_html(report: Mapping[str, Any], subjects: Sequence[Subject], samples: Mapping[str, Sequence[str]]) -> str:
    """Render the page: the summary table, then each text's sample lines split by every tokenizer side by side."""
    columns = len(subjects) if len(subjects) <= 4 else 3
    parts = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
             '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
             "<title>Tokenizer evaluation</title>\n<style>", _CSS, "</style>\n</head>\n<body>\n",
             "<h1>Tokenizer evaluation: how each tokenizer splits the texts</h1>\n",
             '<p class="note">Tokens alternate in blue and orange; hover one for its id and spelling. A small hex '
             "label marks a token holding only the first bytes of a character (the character shows in the token "
             "that completes it, underlined); a small label also marks a token that stands for no text of the line "
             "(SentencePiece's \u2581 prefix). Striped grey: text no token covers. Each sample line is encoded on its "
             "own without its line end (the measures count the line ends' tokens too).</p>\n",
             f"<details><summary>The measures: {len(report['rows']):,} rows (tokenizer × text) and their "
             "definitions</summary>\n", _summary(report), "\n",
             f'<p class="note">{escape(DEFINITIONS.format(**report["options"]).replace("**", "").replace("`", ""))}'
             "</p></details>\n"]
    for text_name, lines in samples.items():
        parts.append(f"<h2>{escape(text_name)}</h2>\n")
        if not lines:
            parts.append('<p class="note">(no non-blank line)</p>\n')
        for index, line in enumerate(lines):
            parts.append(f'<div class="line"><div class="num">line {index + 1}</div><div class="grid" '
                         f'style="grid-template-columns: repeat({columns}, minmax(0, 1fr))">')
            for subject in subjects:
                spans = subject.spans(line)
                count = sum(1 for s in spans if s.token_id is not None)
                parts.append(f'<div class="cell"><div class="who"><b>{escape(subject.name)}</b> · {count:,} tokens'
                             f'</div><div class="toks" data-text="{escape(text_name)}" data-line="{index}" '
                             f'data-tokenizer="{escape(subject.name)}">{token_spans(spans)}</div></div>')
            parts.append("</div></div>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)
