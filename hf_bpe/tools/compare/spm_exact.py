"""hf_bpe in SentencePiece mode against the ``sentencepiece`` peer of a comparison: the exact section.

The statistical section compares hf_bpe's byte-level model with SentencePiece's; this one trains hf_bpe's
SentencePiece-mode BPE on the same training documents with the very options the peer was trained with and
checks that the two models are the same: pieces, scores and types position by position, and the ids of every
held-out document (both models encoded by ``sentencepiece`` itself).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["NOT_SPM_OPTIONS", "sentencepiece_exact"]

# Peer options that are not SentencePiece trainer semantics (the model type and size are given separately).
NOT_SPM_OPTIONS = ("model_type", "vocab_size", "num_threads", "minloglevel")


def sentencepiece_exact(entries: dict[str, dict[str, Any]], documents: list[str], heldout: list[str],
                        options: dict[str, Any]) -> dict[str, Any]:
    """Return ``{status, error, pieces: {identical, total, first_difference}, scores_identical, types_identical,
    encode: {equal, total, rate}, seconds}`` (status ``compared`` or why not)."""
    entry = entries.get("sentencepiece") or {}
    result: dict[str, Any] = {"status": "not compared", "error": None}
    if entry.get("status") != "trained" or not entry.get("path"):
        result["error"] = "the sentencepiece peer was not trained in this run"
        return result
    import sentencepiece as spm

    from ...formats.sentencepiece_model import SentencePieceModel
    from ...training.sentencepiece_trainer import train_sentencepiece

    peer_file = sorted(Path(entry["path"]).glob("*.model"))[0]
    theirs = SentencePieceModel.load(peer_file)
    start = time.perf_counter()
    try:
        ours = train_sentencepiece(documents, vocab_size=options["vocab_size"],
                                   **{k: v for k, v in options.items() if k not in NOT_SPM_OPTIONS})
    except (TypeError, ValueError) as exc:
        result["error"] = f"hf_bpe's SentencePiece mode refused the peer's options: {exc}"
        return result
    seconds = time.perf_counter() - start
    a, b = ours.pieces, theirs.pieces
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x.piece != y.piece), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    processor_ours = spm.SentencePieceProcessor(model_proto=ours.to_bytes())
    processor_theirs = spm.SentencePieceProcessor(model_file=str(peer_file))
    equal = sum(x == y for x, y in zip(processor_ours.encode(heldout), processor_theirs.encode(heldout)))
    result.update({
        "status": "compared",
        "pieces": {"identical": sum(x.piece == y.piece for x, y in zip(a, b)), "total": len(b),
                   "first_difference": None if first is None else {
                       "id": first, "hf_bpe": a[first].piece if first < len(a) else None,
                       "sentencepiece": b[first].piece if first < len(b) else None}},
        "scores_identical": [p.score for p in a] == [p.score for p in b],
        "types_identical": [p.type for p in a] == [p.type for p in b],
        "encode": {"equal": equal, "total": len(heldout), "rate": equal / len(heldout) if heldout else None},
        "seconds": seconds,
    })
    return result
