"""Render a comparison report as Markdown (``report.md``) and as a one-line summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import json

from .schema import NAMES

__all__ = ["render_markdown", "summary"]


def num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _cell(text: str) -> str:
    """Make text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _mb(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.0f} MB"


def ordered(names: Iterable[str]) -> list[str]:
    """hf_bpe first, then the peers in PEERS order (report.json sorts its keys)."""
    rank = {n: i for i, n in enumerate(NAMES)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def render_markdown(report: Mapping[str, Any]) -> str:
    """Render a report (as :func:`compare` returns it) as Markdown tables a person reads."""
    lines: list[str] = []
    add = lines.append
    opts, corpus = report["options"], report["corpus"]
    unigram = opts.get("algorithm", "bpe") == "unigram"
    add("# hf_bpe cross-validation report" + (" (unigram)\n" if unigram else "\n"))
    add(f"Corpus: {', '.join(f'`{s}`' for s in corpus['source'])} — {corpus['documents']:,} documents, "
        f"{corpus['bytes']:,} bytes (sha256 `{corpus['fingerprint']['sha256'][:16]}…`). "
        f"Held out: {corpus['heldout']['documents']:,} documents ({_pct(opts['heldout_fraction'])} by hash, seed "
        f"{opts['heldout_seed']}); trained on {corpus['train']['documents']:,} documents, "
        f"{corpus['train']['bytes']:,} bytes.\n")
    if unigram:
        add(f"Options: **unigram**, vocab_size **{opts['vocab_size']:,}**, num_threads {opts['num_threads']}, special "
            f"tokens {opts['special_tokens'] or 'none'}.\n")
    else:
        add(f"Options: vocab_size **{opts['vocab_size']:,}**, min_frequency {opts['min_frequency']}, pattern "
            f"`{opts['pattern']}`, special tokens {opts['special_tokens'] or 'none'}.\n")
    chart = (report.get("files") or {}).get("chart")
    if chart:
        add(f"![tokens per byte, training time and memory]({chart})\n")

    add("## Training\n")
    add("| tokenizer | version | status | vocab | time (s) | peak memory | baseline memory |")
    add("|---|---|---|---:|---:|---:|---:|")
    for name in ordered(report["tokenizers"]):
        e = report["tokenizers"][name]
        t = e["training"] or {}
        status = _cell(e["status"] + (f": {e['error']}" if e["error"] else ""))
        add(f"| {name} | {e['version'] or 'n/a'} | {status} | {num(e['vocab_size'])} | {num(t.get('seconds'), 2)} "
            f"| {_mb(t.get('peak_rss_bytes'))} | {_mb(t.get('baseline_rss_bytes'))} |")
    add(f"\nMemory: {report['memory_measure']}.\n")

    if unigram:
        _unigram_sections(report, add)
    else:
        _bpe_sections(report, add)
    _common_sections(report, lines)
    return "\n".join(lines) + "\n"


def _not_compared(section: Mapping[str, Any], add: Any) -> bool:
    if section["status"] == "compared":
        return False
    add(f"Not compared: {section['status']}{': ' + section['error'] if section['error'] else ''}.\n")
    return True


def _unigram_sections(report: Mapping[str, Any], add: Any) -> None:
    """hf_bpe's unigram against spm_train's (exact) and tokenizers' UnigramTrainer (metrics)."""
    add("## hf_bpe unigram vs SentencePiece unigram (must be identical)\n")
    exact = report.get("vs_sentencepiece_exact") or {"status": "not requested", "error": None}
    if not _not_compared(exact, add):
        pieces, enc, own = exact["pieces"], exact["encode"], exact["encode_hf_bpe"]
        add(f"Both trained on the same documents with the same spm_train options (num_threads "
            f"{report['options']['num_threads']}): **{'IDENTICAL' if _identical(exact) else 'DIFFERENT'}**.\n")
        add("| check | result |")
        add("|---|---|")
        first = pieces["first_difference"]
        add(f"| pieces | {pieces['identical']:,} / {pieces['total']:,} identical"
            + ("" if first is None else _cell(f"; first difference at id {first['id']}: hf_bpe {first['hf_bpe']!r}, "
                                              f"SentencePiece {first['sentencepiece']!r}")) + " |")
        add(f"| scores (float32 bits) | {'identical' if exact['scores_identical'] else '**differ**'} |")
        add(f"| types | {'identical' if exact['types_identical'] else '**differ**'} |")
        add(f"| held-out ids, both models encoded by sentencepiece | {enc['equal']:,} / {enc['total']:,} |")
        add(f"| held-out ids, hf_bpe's UnigramModel vs sentencepiece | {own['equal']:,} / {own['total']:,} |")
        add("")
    add("## hf_bpe unigram vs tokenizers' UnigramTrainer (metrics, not equality)\n")
    vs = report.get("vs_tokenizers_unigram") or {"status": "not requested", "error": None}
    if not _not_compared(vs, add):
        _metrics_table(report, "tokenizers", "tokenizers", add)
        _overlap_lines(vs, "pieces as bytes, `▁` a space", "tokenizers", "tokenizers", add)
        add("¹ `<0xNN>` pieces (none without byte_fallback, spm_train's default; tokenizers' trainer has none).\n")


def _overlap_lines(vs: Mapping[str, Any], convention: str, peer: str, title: str, add: Any) -> None:
    o, g = vs["vocab_overlap"], vs["segmentation"]
    add(f"\nVocabulary overlap ({convention}): {o['shared']:,} shared of {o['hf_bpe']:,} (hf_bpe) and "
        f"{o[peer]:,} ({title}), Jaccard {num(o['jaccard'], 3)}.  ")
    add(f"Segmentation: {g['equal']:,} / {g['total']:,} held-out documents split identically "
        f"({_pct(g['rate'])}); token-boundary F1 {num(g['boundary_f1'], 3)}.\n")


def _metrics_table(report: Mapping[str, Any], peer: str, title: str, add: Any) -> None:
    h, s = report["heldout"]["hf_bpe"]["all"], report["heldout"][peer]["all"]
    add(f"| held-out metric | hf_bpe | {title} |")
    add("|---|---:|---:|")
    add(f"| tokens per byte | {num(h['tokens_per_byte'])} | {num(s['tokens_per_byte'])} |")
    add(f"| tokens per character | {num(h['tokens_per_char'])} | {num(s['tokens_per_char'])} |")
    add(f"| round trip (documents) | {_pct(h['roundtrip_rate'])} | {_pct(s['roundtrip_rate'])} |")
    add(f"| byte fallback tokens¹ | {_pct(h['byte_fallback_rate'])} | {_pct(s['byte_fallback_rate'])} |")
    add(f"| unknown tokens | {_pct(h['unknown_rate'])} | {_pct(s['unknown_rate'])} |")


def _bpe_sections(report: Mapping[str, Any], add: Any) -> None:
    """hf_bpe's byte-level BPE against tokenizers (equal) and SentencePiece BPE (metrics)."""
    add("## hf_bpe vs tokenizers (must be equal)\n")
    vs = report["vs_tokenizers"]
    if vs["status"] != "compared":
        add(f"Not compared: {vs['status']}{': ' + vs['error'] if vs['error'] else ''}.\n")
    else:
        m, v, e = vs["merges"], vs["vocab"], vs["encode"]
        add("| check | result |")
        add("|---|---|")
        if m["identical"]:
            add(f"| merges | **identical** ({m['hf_bpe']:,} merges) |")
        else:
            d = m["first_difference"]
            ours = "none" if d["hf_bpe"] is None else f"`{' '.join(d['hf_bpe']['pair'])}` ({d['hf_bpe']['count']:,})"
            theirs = "none" if d["peer"] is None else f"`{' '.join(d['peer']['pair'])}` ({d['peer']['count']:,})"
            add(f"| merges | **differ** from rank {d['rank']:,}: hf_bpe {ours} vs tokenizers {theirs} "
                "(pair occurrences in the training split) |")
            add(f"| reason | {_cell(m['reason'] or 'unknown')} |")
        ids = "**identical**" if v["identical"] else f"**{v['differences']:,} differ**"
        add(f"| vocabulary ids | {ids} ({v['hf_bpe']:,} vs {v['peer']:,} tokens) |")
        add(f"| encode, held-out documents | {e['equal']:,} / {e['total']:,} equal ({_pct(e['rate'])}) |")
        add("")

    add("## hf_bpe vs SentencePiece BPE (metrics, not equality)\n")
    vs = report["vs_sentencepiece"]
    if vs["status"] != "compared":
        add(f"Not compared: {vs['status']}{': ' + vs['error'] if vs['error'] else ''}.\n")
    else:
        _metrics_table(report, "sentencepiece", "SentencePiece", add)
        _overlap_lines(vs, "tokens as bytes, `▁` and `Ġ` both a space", "sentencepiece", "SentencePiece", add)
        add("¹ SentencePiece: `<0xNN>` pieces; byte-level BPE: tokens that are not valid UTF-8 alone.")
        nl = vs["newline_byte_fallback"]
        if nl["tokens"] and not nl["newline_is_a_piece"]:
            add(f"{_pct(nl['share_of_byte_fallback'])} of SentencePiece's byte-fallback tokens are `<0x0A>`: it has no "
                "piece for a line end (it learns nothing from the line ends of its training sentences), so every "
                "newline of the held-out text falls back to a byte.")
        add("")

    exact = report.get("vs_sentencepiece_exact")
    if exact:
        add("## hf_bpe in SentencePiece mode vs SentencePiece (exact)\n")
        if exact["status"] != "compared":
            add(f"Not compared: {exact['error']}.\n")
        else:
            pieces, enc = exact["pieces"], exact["encode"]
            add("hf_bpe's SentencePiece-mode BPE (`hf_bpe.train_sentencepiece`) trained on the same documents with the "
                "peer's options:\n")
            add(f"- pieces identical: {pieces['identical']:,} / {pieces['total']:,}"
                + ("" if pieces["first_difference"] is None else f" (first difference at id "
                   f"{pieces['first_difference']['id']}: {pieces['first_difference']}"))
            add(f"- scores identical: {'yes' if exact['scores_identical'] else 'no'}; types identical: "
                f"{'yes' if exact['types_identical'] else 'no'}")
            add(f"- held-out ids identical: {enc['equal']:,} / {enc['total']:,} documents ({_pct(enc['rate'])})")
            add(f"- hf_bpe SentencePiece-mode training time: {num(exact['seconds'])} s (pure-Python reference)\n")


def _common_sections(report: Mapping[str, Any], lines: list[str]) -> None:
    """Tokens per byte by subset, notes, configurations, versions."""
    add = lines.append
    if report["heldout"]:
        add("## Held-out tokens per byte, by subset\n")
        names = ordered(report["heldout"])
        add("| subset | documents | bytes | " + " | ".join(names) + " |")
        add("|---|---:|---:|" + "---:|" * len(names))
        subsets = [s["name"] for s in report["corpus"]["subsets"]]
        for sub in [*subsets, "all"] if len(subsets) > 1 else subsets:
            row = [report["heldout"][n]["all"] if sub == "all" else report["heldout"][n]["subsets"][sub]
                   for n in names]
            add(f"| {sub} | {row[0]['documents']:,} | {row[0]['bytes']:,} | "
                + " | ".join(num(r["tokens_per_byte"]) for r in row) + " |")
        add("")
    if report["notes"]:
        add("## Notes\n")
        lines.extend(f"- {n}" for n in report["notes"])
        add("")
    add("## Configurations\n")
    for name in ordered(report["tokenizers"]):
        e = report["tokenizers"][name]
        if e["configuration"]:
            add(f"- **{name}**: `{json.dumps(e['configuration'], ensure_ascii=False)}`")
    add(f"\nVersions: {', '.join(f'{k} {v}' for k, v in report['versions'].items() if v)}.")


def summary(report: Mapping[str, Any]) -> str:
    """Say in one line what a report found."""
    parts: list[str] = []
    if report["options"].get("algorithm", "bpe") == "unigram":
        return _unigram_summary(report, parts)
    vs = report["vs_tokenizers"]
    if vs["status"] == "compared":
        m, v, e = vs["merges"], vs["vocab"], vs["encode"]
        merges = "merges identical" if m["identical"] else f"merges differ at rank {m['first_difference']['rank']}"
        parts.append(f"vs tokenizers: {merges}, ids {'identical' if v['identical'] else 'differ'}, "
                     f"encode {e['equal']:,}/{e['total']:,} equal")
    elif vs["status"] != "not requested":
        parts.append(f"tokenizers {vs['status']}")
    _metrics_part(report, report["vs_sentencepiece"], "sentencepiece", "sentencepiece", parts)
    return "; ".join(parts) or "report written"


def _metrics_part(report: Mapping[str, Any], vs: Mapping[str, Any], peer: str, label: str, parts: list[str]) -> None:
    """Add the tokens per byte of hf_bpe and a peer compared by metrics (or the peer's status) to ``parts``."""
    if vs["status"] == "compared":
        h = report["heldout"]["hf_bpe"]["all"]["tokens_per_byte"]
        p = report["heldout"][peer]["all"]["tokens_per_byte"]
        parts.append(f"tokens/byte hf_bpe {num(h)} vs {label} {num(p)}")
    elif vs["status"] != "not requested":
        parts.append(f"{peer} {vs['status']}")


def _identical(exact: Mapping[str, Any]) -> bool:
    """Whether an exact section found the two models and all their held-out ids the same."""
    own = exact.get("encode_hf_bpe") or exact["encode"]
    return (exact["pieces"]["first_difference"] is None and exact["scores_identical"] and exact["types_identical"]
            and exact["encode"]["equal"] == exact["encode"]["total"] and own["equal"] == own["total"])


def _unigram_summary(report: Mapping[str, Any], parts: list[str]) -> str:
    exact = report.get("vs_sentencepiece_exact")
    if exact and exact["status"] == "compared":
        parts.append(f"unigram vs sentencepiece: {'identical' if _identical(exact) else 'DIFFERENT'}")
    elif exact:
        parts.append(f"sentencepiece {exact['status']}")
    _metrics_part(report, report.get("vs_tokenizers_unigram") or {"status": "not requested"}, "tokenizers",
                  "tokenizers unigram", parts)
    return "; ".join(parts) or "report written"
