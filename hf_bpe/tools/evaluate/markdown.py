"""Render an evaluation report as Markdown (``report.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..compare.markdown import _cell, num

__all__ = ["DEFINITIONS", "render_markdown", "table"]

DEFINITIONS = (
    "**bytes**: UTF-8 bytes of the text. **words**: whitespace-separated words (`len(text.split())`: runs of "
    "characters that are not `str.isspace`); scripts written without spaces have few, so their tokens per word say "
    "little. **tokens**: each line (cut after `\\n`, kept) encoded on its own, special tokens in the text recognised, "
    "none added. **bytes/token**: higher compresses more. **tokens/word**: fertility. **Rényi eff.**: Rényi entropy "
    "of order {order} of the tokens' unigram distribution over log |V| (Zouhar et al. 2023), |V| the tokenizer's "
    "vocabulary (every id, special tokens included); in [0, 1], higher uses the vocabulary more evenly. **vocab "
    "used**: share of |V| produced at least once. **parity**: tokens relative to the reference text "
    "`{reference}` (parallel texts: the same content); **Gini**: Gini coefficient of those ratios over all texts, 0 "
    "when every text costs the same."
)


def _num(value: Any, digits: int = 3) -> str:
    return num(value, digits)


def table(report: Mapping[str, Any]) -> str:
    """Return the per tokenizer × text table (Markdown)."""
    lines = ["| tokenizer | text | bytes | words | tokens | bytes/token | tokens/word | Rényi eff. | vocab used | "
             "never produced | parity |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in report["rows"]:
        share = row["vocab_used_share"]
        lines.append(
            f"| {_cell(row['tokenizer'])} | {_cell(row['language'])} | {_num(row['bytes'])} | {_num(row['words'])} | "
            f"{_num(row['tokens'])} | {_num(row['bytes_per_token'])} | {_num(row['tokens_per_word'])} | "
            f"{_num(row['renyi_efficiency'])} | {'n/a' if share is None else f'{100 * share:.1f}%'} | "
            f"{_num(row['unused_ids'])} | {_num(row['parity_ratio'])} |")
    return "\n".join(lines) + "\n"


def render_markdown(report: Mapping[str, Any]) -> str:
    """Render a report (as :func:`~hf_bpe.tools.evaluate.evaluate` returns it) as Markdown."""
    opts = report["options"]
    out = ["# Tokenizer evaluation\n"]
    out.append("Texts: " + ", ".join(f"`{_cell(t['name'])}` ({t['bytes']:,} bytes, {t['words']:,} words, "
                                      f"{t['documents']:,} lines)" for t in report["texts"]) + ".\n")
    out.append("Tokenizers: " + ", ".join(f"`{_cell(t['name'])}` ({_cell(t['path'])}, {t['vocab_size']:,} ids, "
                                           f"encoded by {t['library']})" for t in report["tokenizers"]) + ".\n")
    chart = (report.get("files") or {}).get("chart")
    if chart:
        out.append(f"![bytes per token, parity and Rényi efficiency by text]({chart})\n")
    out.append("## Per tokenizer and text\n")
    out.append(table(report))
    out.append(f"## Parity across texts (reference `{_cell(opts['reference'])}`)\n")
    names = [t["name"] for t in report["texts"]]
    out.append("| tokenizer | Gini | max/min | " + " | ".join(_cell(n) for n in names) + " |")
    out.append("|---|---:|---:|" + "---:|" * len(names))
    for entry in report["tokenizers"]:
        parity = entry["parity"]
        out.append(f"| {_cell(entry['name'])} | {_num(parity['gini'])} | {_num(parity['max_over_min'])} | "
                   + " | ".join(_num(parity["ratios"][n]) for n in names) + " |")
    out.append("")
    out.append("## Vocabulary never produced (all texts)\n")
    for entry in report["tokenizers"]:
        shown = ", ".join(f"{e['id']} `{_cell(repr(e['token']))}`" for e in entry["unused_examples"])
        out.append(f"- `{_cell(entry['name'])}`: {entry['unused_ids']:,} of {entry['vocab_size']:,} ids"
                   + (f", e.g. {shown}" if shown else ""))
    out.append("")
    out.append("## Definitions\n")
    out.append(DEFINITIONS.format(order=opts["order"], reference=_cell(opts["reference"])) + "\n")
    return "\n".join(out)
