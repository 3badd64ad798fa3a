"""Measure each tokenizer on the held-out split, and set hf_bpe against each peer (equality or metrics)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .evaluated import Evaluated, EvaluatedHFBPE, EvaluatedSentencePiece, EvaluatedTokenizers
from .merges import compare_merges
from .split import Split, read_split

__all__ = ["BPE_CONVENTION", "UNIGRAM_CONVENTION", "merge_metrics", "metrics", "vs_sentencepiece", "vs_statistics",
           "vs_tokenizers"]


def rate(part: int, total: int) -> float | None:
    return part / total if total else None


def metrics(tok: Evaluated, texts: list[str], encoded: list[list[int]]) -> dict[str, Any]:
    tokens = sum(map(len, encoded))
    n_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    chars = sum(map(len, texts))
    roundtrip = sum(1 for text, ids in zip(texts, encoded) if tok.decode(ids) == text)
    fallback = sum(1 for ids in encoded for i in ids if tok.is_fallback(i))
    unknown = sum(1 for ids in encoded for i in ids if tok.is_unknown(i))
    return {
        "documents": len(texts), "tokens": tokens, "bytes": n_bytes, "characters": chars,
        "tokens_per_byte": rate(tokens, n_bytes), "tokens_per_char": rate(tokens, chars),
        "roundtrip_documents": roundtrip, "roundtrip_rate": rate(roundtrip, len(texts)),
        "byte_fallback_tokens": fallback, "byte_fallback_rate": rate(fallback, tokens),
        "unknown_tokens": unknown, "unknown_rate": rate(unknown, tokens),
    }


def merge_metrics(parts: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("documents", "tokens", "bytes", "characters", "roundtrip_documents", "byte_fallback_tokens",
            "unknown_tokens")
    total = {k: sum(p[k] for p in parts) for k in keys}
    return {
        **total,
        "tokens_per_byte": rate(total["tokens"], total["bytes"]),
        "tokens_per_char": rate(total["tokens"], total["characters"]),
        "roundtrip_rate": rate(total["roundtrip_documents"], total["documents"]),
        "byte_fallback_rate": rate(total["byte_fallback_tokens"], total["tokens"]),
        "unknown_rate": rate(total["unknown_tokens"], total["tokens"]),
    }


def segments(tok: Evaluated, ids: list[int], text: str) -> list[bytes]:
    pieces = [tok.token_bytes(i) for i in ids]
    # A dummy-prefix space (a SentencePiece model trained with add_dummy_prefix) is not part of the text.
    if pieces and pieces[0].startswith(b" ") and not text.startswith(" "):
        pieces[0] = pieces[0][1:]
        if not pieces[0]:
            pieces.pop(0)
    return pieces


def boundaries(pieces: list[bytes]) -> set[int]:
    out, at = set(), 0
    for piece in pieces[:-1]:
        at += len(piece)
        out.add(at)
    return out


def vs_tokenizers(
    loaded: Mapping[str, Evaluated], entries: Mapping[str, dict[str, Any]], encoded: Mapping[str, Any],
    split: Split, pretokenizer: Any, specials: list[str], vocab_size: int, min_frequency: int, workers: int,
) -> dict[str, Any]:
    section: dict[str, Any] = {"status": entries["tokenizers"]["status"], "error": entries["tokenizers"]["error"],
                               "merges": None, "vocab": None, "encode": None}
    if section["status"] == "not requested" or "tokenizers" not in loaded or "hf_bpe" not in loaded:
        if section["status"] in ("trained", "loaded"):
            section["status"] = "failed"
            section["error"] = "hf_bpe has no model to compare: " + str(entries["hf_bpe"]["error"])
        return section
    ours: EvaluatedHFBPE = loaded["hf_bpe"]  # type: ignore[assignment]
    theirs: EvaluatedTokenizers = loaded["tokenizers"]  # type: ignore[assignment]
    section["status"] = "compared"
    # Merges; word counts of the training split only when they differ (a second pass over the split).
    our_merges, their_merges = list(ours.model.merges), theirs.merges()
    if our_merges == their_merges:
        section["merges"] = compare_merges({}, our_merges, their_merges, vocab_size=vocab_size)
    else:
        from ...training.counts import count_words

        counts, _, _ = count_words(read_split(split.train_path), pretokenizer, workers=workers)
        section["merges"] = compare_merges(counts, our_merges, their_merges, vocab_size=vocab_size,
                                           special_tokens=specials, min_frequency=min_frequency)
    # Vocabulary ids.
    from ...core.bytelevel import token_to_str

    mine = {token_to_str(t): i for t, i in ours.model.vocab.items()}
    mine.update(ours.model.special_tokens)
    other = theirs.tokenizer.get_vocab(with_added_tokens=True)
    differing = sorted((t for t in mine.keys() | other.keys() if mine.get(t) != other.get(t)),
                       key=lambda t: (min(i for i in (mine.get(t), other.get(t)) if i is not None), t))
    section["vocab"] = {"identical": not differing, "hf_bpe": len(mine), "peer": len(other),
                        "differences": len(differing),
                        "examples": [{"token": t, "hf_bpe": mine.get(t), "peer": other.get(t)} for t in differing[:10]]}
    # Encodings of the held-out documents.
    equal = total = 0
    first = None
    for subset in split.subsets:
        for index, (a, b) in enumerate(zip(encoded["hf_bpe"][subset.name], encoded["tokenizers"][subset.name])):
            total += 1
            if a == b:
                equal += 1
            elif first is None:
                at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                first = {"subset": subset.name, "document": index, "position": at, "hf_bpe": a[at : at + 8],
                         "peer": b[at : at + 8], "text": subset.heldout[index][:200]}
    section["encode"] = {"equal": equal, "total": total, "rate": rate(equal, total), "first_mismatch": first}
    return section


BPE_CONVENTION = ("tokens as raw bytes: SentencePiece's '\u2581' and byte-level BPE's '\u0120' both become a "
                  "space, <0xNN> pieces become their byte; special, control and unknown tokens excluded")
UNIGRAM_CONVENTION = ("pieces as raw bytes: '\u2581' becomes a space, <0xNN> pieces their byte; special, control "
                      "and unknown tokens excluded")


def vs_sentencepiece(
    loaded: Mapping[str, Evaluated], entries: Mapping[str, dict[str, Any]], encoded: Mapping[str, Any],
    split: Split,
) -> dict[str, Any]:
    """Set hf_bpe's byte-level BPE against SentencePiece BPE by metrics (see :func:`vs_statistics`)."""
    return vs_statistics(loaded, entries, encoded, split, peer="sentencepiece", convention=BPE_CONVENTION)


def vs_statistics(
    loaded: Mapping[str, Evaluated], entries: Mapping[str, dict[str, Any]], encoded: Mapping[str, Any],
    split: Split, *, peer: str, convention: str,
) -> dict[str, Any]:
    """Return ``{status, error, vocab_overlap, segmentation, newline_byte_fallback}`` of hf_bpe against ``peer``:
    vocabulary overlap as bytes, and how often the held-out documents are split at the same byte offsets."""
    section: dict[str, Any] = {"status": entries[peer]["status"], "error": entries[peer]["error"],
                               "vocab_overlap": None, "segmentation": None, "newline_byte_fallback": None}
    if peer not in loaded or "hf_bpe" not in loaded:
        if section["status"] in ("trained", "loaded"):
            section["status"] = "failed"
            section["error"] = "hf_bpe has no model to compare: " + str(entries["hf_bpe"]["error"])
        return section
    ours = loaded["hf_bpe"]
    theirs = loaded[peer]
    section["status"] = "compared"
    specials = list(getattr(getattr(ours, "model", None), "special_tokens", None) or ())
    mine, other = ours.vocabulary(specials), theirs.vocabulary(specials)  # type: ignore[attr-defined]
    shared = len(mine & other)
    section["vocab_overlap"] = {
        "convention": convention, "hf_bpe": len(mine), peer: len(other), "shared": shared,
        "jaccard": rate(shared, len(mine | other)), "hf_bpe_share": rate(shared, len(mine)),
        f"{peer}_share": rate(shared, len(other)),
    }
    equal = total = common = ours_n = theirs_n = 0
    for subset in split.subsets:
        for text, a, b in zip(subset.heldout, encoded["hf_bpe"][subset.name], encoded[peer][subset.name]):
            left, right = segments(ours, a, text), segments(theirs, b, text)
            total += 1
            equal += left == right
            x, y = boundaries(left), boundaries(right)
            common += len(x & y)
            ours_n += len(x)
            theirs_n += len(y)
    section["segmentation"] = {"equal": equal, "total": total, "rate": rate(equal, total),
                               "boundary_f1": rate(2 * common, ours_n + theirs_n)}
    if isinstance(theirs, EvaluatedSentencePiece):
        # SentencePiece learns no piece for a line end, so each newline of the held-out text costs a <0x0A> token.
        newline_id = theirs.sp.piece_to_id("<0x0A>")
        fallback = newline = 0
        for subset in split.subsets:
            for ids in encoded[peer][subset.name]:
                fallback += sum(1 for i in ids if theirs.is_fallback(i))
                newline += ids.count(newline_id)
        section["newline_byte_fallback"] = {"tokens": newline, "share_of_byte_fallback": rate(newline, fallback),
                                            "newline_is_a_piece": theirs.sp.piece_to_id("\n") != theirs.sp.unk_id()}
    return section
