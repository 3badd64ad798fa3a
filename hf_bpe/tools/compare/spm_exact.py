"""hf_bpe in SentencePiece mode against the ``sentencepiece`` peer of a comparison: the exact section.

The statistical section compares hf_bpe's byte-level model with SentencePiece's; this one trains hf_bpe's
SentencePiece-mode BPE on the same training documents with the very options the peer was trained with and
checks that the two models are the same: pieces, scores and types position by position, and the ids of every
held-out document (both models encoded by ``sentencepiece`` itself).
"""

from __future__ import annotations

import struct
import time
from pathlib import Path
from typing import Any

__all__ = ["NOT_SPM_OPTIONS", "sentencepiece_exact", "unigram_exact"]

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
    from ...formats.sentencepiece_model import SentencePieceModel
    from ...training.sentencepiece.trainer import train_sentencepiece

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
    result.update(_same_model(ours, theirs, peer_file, heldout))
    result["seconds"] = seconds
    return result


def unigram_exact(entries: dict[str, dict[str, Any]], heldout: list[str],
                  own_ids: list[list[int]] | None = None) -> dict[str, Any]:
    """Check hf_bpe's unigram model (trained in its own process) against spm_train's, trained on the same split
    with the same options: pieces, scores (float32 bits) and types, then the held-out ids of both models by
    ``sentencepiece``, and of hf_bpe's model by hf_bpe's own encoder (``encode_hf_bpe``; ``own_ids``: those ids
    when the caller has them already).

    Returns:
        What :func:`sentencepiece_exact` returns, ``encode_hf_bpe`` added and ``seconds`` None (the training
        times are in the report's training table).
    """
    result: dict[str, Any] = {"status": "not compared", "error": None}
    paths = {}
    for name in ("hf_bpe", "sentencepiece"):
        entry = entries.get(name) or {}
        found = sorted(Path(entry["path"]).glob("*.model")) if entry.get("path") else []
        if entry.get("status") not in ("trained", "loaded") or not found:
            result["error"] = f"{name} has no unigram model in this run ({entry.get('status')})"
            return result
        paths[name] = found[0]
    from ...formats.sentencepiece_model import SentencePieceModel
    from ...model.unigram import UnigramModel

    ours, theirs = SentencePieceModel.load(paths["hf_bpe"]), SentencePieceModel.load(paths["sentencepiece"])
    result.update(_same_model(ours, theirs, paths["sentencepiece"], heldout))
    import sentencepiece as spm

    if own_ids is None:
        own = UnigramModel.from_sentencepiece(ours)
        own_ids = [own.encode(text) for text in heldout]
    reference = spm.SentencePieceProcessor(model_file=str(paths["sentencepiece"])).encode(heldout)
    equal = sum(a == b for a, b in zip(own_ids, reference))
    result["encode_hf_bpe"] = {"equal": equal, "total": len(heldout), "rate": equal / len(heldout) if heldout else None}
    result["seconds"] = None
    return result


def _same_model(ours: Any, theirs: Any, peer_file: Path, heldout: list[str]) -> dict[str, Any]:
    """Compare two SentencePieceModels piece by piece (scores as float32 bits) and by sentencepiece's encodings."""
    import sentencepiece as spm

    a, b = ours.pieces, theirs.pieces
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x.piece != y.piece), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    processor_ours = spm.SentencePieceProcessor(model_proto=ours.to_bytes())
    processor_theirs = spm.SentencePieceProcessor(model_file=str(peer_file))
    equal = sum(x == y for x, y in zip(processor_ours.encode(heldout), processor_theirs.encode(heldout)))
    return {
        "status": "compared",
        "pieces": {"identical": sum(x.piece == y.piece for x, y in zip(a, b)), "total": len(b),
                   "first_difference": None if first is None else {
                       "id": first, "hf_bpe": a[first].piece if first < len(a) else None,
                       "sentencepiece": b[first].piece if first < len(b) else None}},
        "scores_identical": [_bits(p.score) for p in a] == [_bits(p.score) for p in b],
        "types_identical": [p.type for p in a] == [p.type for p in b],
        "encode": {"equal": equal, "total": len(heldout), "rate": equal / len(heldout) if heldout else None},
    }


def _bits(score: float) -> bytes:
    """The float32 bits of a score (what the .model file stores)."""
    return struct.pack("<f", score)
