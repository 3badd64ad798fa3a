"""Train one tokenizer in a fresh process, for :func:`hf_bpe.compare`: :func:`main` with the spec file's path.

Each trainer runs in its own process so that its wall time and peak memory are its own. The process imports only
the trainer's library: ``hf_bpe``'s package loads nothing until used, and :mod:`hf_bpe.tools.peers` imports its peer
inside the function that builds it. It reads the spec (JSON: ``peer``, ``options``, ``train_file``, ``out``,
``result``, ``show_progress``), loads the training split into a list, measures the baseline memory, trains, writes the
model to ``out`` and the result record to ``result``: ``{"ok", "version", "seconds", "peak_rss_bytes",
"baseline_rss_bytes", "warnings", "error"}``. A failure is recorded, never raised, so the parent can report it.

>>> import json, os, tempfile
>>> folder = tempfile.mkdtemp()
>>> train_file = os.path.join(folder, "train.bin")
>>> with open(train_file, "wb") as f:
...     _ = f.write(len(b"low lower\\n").to_bytes(8, "little") + b"low lower\\n")
>>> spec = {"peer": "hf_bpe", "train_file": train_file, "out": os.path.join(folder, "m"), "show_progress": False,
...         "result": os.path.join(folder, "r.json"), "options": {"vocab_size": 260, "min_frequency": 0,
...         "special_tokens": [], "pattern": "gpt2", "workers": 1}}
>>> run(spec)["ok"]
True
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
import time
import warnings
from typing import Any

__all__ = ["load_documents", "main", "peak_rss", "run"]


def peak_rss() -> int:
    """Return the peak resident set size in bytes of this process or its largest finished worker."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, workers) * scale


def load_documents(path: str) -> list[str]:
    """Read a training split written by :func:`hf_bpe.tools.compare.split.split_corpus` (length-framed UTF-8)."""
    docs = []
    with open(path, "rb") as handle:
        while head := handle.read(8):
            docs.append(handle.read(struct.unpack("<Q", head)[0]).decode("utf-8", "surrogatepass"))
    return docs


def _train(peer: str, docs: list[str], options: dict[str, Any], show_progress: bool) -> tuple[str, Any]:
    """Train; return the peer's version and its trained object."""
    if options.get("algorithm") == "unigram":
        return _train_unigram(peer, docs, options, show_progress)
    if peer == "hf_bpe":
        from ..._version import __version__
        from ...training.bpe.trainer import train

        model = train(docs, vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                             special_tokens=options["special_tokens"], pattern=options["pattern"],
                             workers=options["workers"], show_progress=show_progress)
        return __version__, model
    if peer == "tokenizers":
        import tokenizers

        from ..peers import train_tokenizers

        tokenizer = train_tokenizers(docs, vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                                     special_tokens=options["special_tokens"], pattern=options["pattern"],
                                     show_progress=show_progress)
        return tokenizers.__version__, tokenizer
    import io

    import sentencepiece as spm

    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(docs), model_writer=buffer, **options["sentencepiece"])
    return spm.__version__, buffer


def _train_unigram(peer: str, docs: list[str], options: dict[str, Any], show_progress: bool) -> tuple[str, Any]:
    """Train unigram: hf_bpe and spm_train on the same spm options, tokenizers' UnigramTrainer as a port."""
    spm_options = options["sentencepiece"]
    if peer == "hf_bpe":
        from ..._version import __version__
        from ...training.unigram.train import train_unigram

        return __version__, train_unigram(docs, **spm_options)
    if peer == "tokenizers":
        import tokenizers

        from ..peers import train_tokenizers_unigram

        return tokenizers.__version__, train_tokenizers_unigram(
            docs, vocab_size=options["vocab_size"], special_tokens=options["special_tokens"],
            show_progress=show_progress)
    import io

    import sentencepiece as spm

    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(docs), model_writer=buffer, **spm_options)
    return spm.__version__, buffer


def _save(peer: str, trained: Any, out: str) -> None:
    from ...formats.sentencepiece_model import SentencePieceModel

    os.makedirs(out, exist_ok=True)
    if isinstance(trained, SentencePieceModel):  # hf_bpe's unigram model: spm_train's file
        with open(os.path.join(out, "tokenizer.model"), "wb") as handle:
            handle.write(trained.to_bytes())
    elif peer == "hf_bpe":
        trained.save(out, force=True)
    elif peer == "tokenizers":
        trained.save(os.path.join(out, "tokenizer.json"))
    else:
        with open(os.path.join(out, "sentencepiece.model"), "wb") as handle:
            handle.write(trained.getvalue())


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Train the spec's peer, save it, write and return the result record (failures recorded, not raised)."""
    result: dict[str, Any] = {"ok": False, "warnings": []}
    try:
        # 1. Load the split first, so the baseline counts the documents but not the training.
        docs = load_documents(spec["train_file"])
        result["baseline_rss_bytes"] = peak_rss()
        # 2. Train, timing the training call alone.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            version, trained = _train(spec["peer"], docs, spec["options"], spec["show_progress"])
            result["seconds"] = time.perf_counter() - start
            result["peak_rss_bytes"] = peak_rss()
        result["warnings"] = [str(w.message) for w in caught]
        # 3. Save the model for the parent to load.
        _save(spec["peer"], trained, spec["out"])
        result.update(ok=True, version=version)
    except BaseException as exc:  # noqa: BLE001 - the parent reports whatever went wrong, Ctrl-C included
        result["error"] = f"{type(exc).__name__}: {exc}".strip()
    with open(spec["result"], "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    return result


def main(spec_path: str) -> None:
    """Run the spec in the JSON file ``spec_path`` (what compare's child process does)."""
    with open(spec_path, encoding="utf-8") as spec_file:
        run(json.load(spec_file))


if __name__ == "__main__":  # pragma: no cover - compare starts the child with `python -I -c`, not as a script
    main(sys.argv[1])
