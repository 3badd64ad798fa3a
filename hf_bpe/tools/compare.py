"""Cross-validate hf_bpe against `tokenizers` and SentencePiece on one corpus, in one command.

:func:`compare` splits a corpus into a training split and a held-out split (deterministically, by a hash of each
document's index and a seed), trains hf_bpe, `tokenizers`' ``BpeTrainer`` and SentencePiece BPE on the same
training split (or loads already-trained models), and writes ``report.json``, ``report.md`` and ``report.png``.

Peers and their configuration
-----------------------------
- ``tokenizers``: ``BPE()`` model, ``ByteLevel(add_prefix_space=False)`` pre-tokenizer (for a pattern other than
  ``gpt2``: ``Split(pattern, "isolated")`` then ``ByteLevel(use_regex=False)``), ``BpeTrainer(vocab_size,
  min_frequency, special_tokens, initial_alphabet=ByteLevel.alphabet())``: the configuration hf_bpe reproduces
  merge for merge, so its merges, ids and encodings must be *equal*.
- ``sentencepiece``: ``model_type=bpe, byte_fallback=True, normalization_rule_name=identity,
  input_sentence_size=0, character_coverage=1.0``, plus ``add_dummy_prefix=False, remove_extra_whitespaces=False``
  so that it sees exactly the text hf_bpe sees, ``user_defined_symbols`` = the special tokens, and
  ``max_sentence_length`` raised to the longest document. A different algorithm (character base, no
  pre-tokenizer regex, ``▁`` as space), so it is compared by *metrics*.

Each trainer runs in a fresh Python child process that imports only its own library and reads the training
split from the same temporary file into a list first; the report gives the wall time of the training call alone,
and the peak resident set size (``ru_maxrss``) of that child (the largest of the child and its worker processes),
next to its baseline (after imports and loading the split, before training).

``report.json`` (``schema_version`` 1)
--------------------------------------
::

    schema_version: 1
    versions: {hf_bpe, python, tokenizers, sentencepiece, ...}     # None: not installed
    options: {vocab_size, min_frequency, special_tokens, pattern, against, heldout_fraction, heldout_seed, workers}
    corpus: {source: [str], fingerprint: {order, sha256, documents, bytes},
             documents, bytes, characters, train: {documents, bytes, characters}, heldout: {...},
             subsets: [{name, documents, bytes, characters}]}     # held-out documents of each file
    memory_measure: str                                            # how peak memory was measured
    tokenizers: {NAME: {status, version, path, vocab_size, configuration, warnings: [str], error,
                        training: {seconds, peak_rss_bytes, baseline_rss_bytes} | None}}
        # NAME in hf_bpe, tokenizers, sentencepiece; status: trained | loaded | not requested | not installed
        # | failed
    heldout: {NAME: {all: METRICS, subsets: {subset name: METRICS}}}
        # METRICS: {documents, tokens, bytes, characters, tokens_per_byte, tokens_per_char, roundtrip_documents,
        #           roundtrip_rate, byte_fallback_tokens, byte_fallback_rate, unknown_tokens, unknown_rate}
        # byte fallback: SentencePiece <0xNN> pieces; for byte-level BPE, tokens that are not valid UTF-8
        # alone (a character split across tokens).
    vs_tokenizers: {status, error,
                    merges: {identical, hf_bpe, peer, first_difference: None | {rank, hf_bpe: {pair, count},
                             peer: {pair, count}}, reason},
                    vocab: {identical, hf_bpe, peer, differences, examples: [{token, hf_bpe, peer}]},
                    encode: {equal, total, rate, first_mismatch: None | {subset, document, position, hf_bpe,
                             peer}}}
    vs_sentencepiece: {status, error,
                       vocab_overlap: {convention, hf_bpe, sentencepiece, shared, jaccard, hf_bpe_share,
                                       sentencepiece_share},
                       segmentation: {equal, total, rate, boundary_f1},
                       newline_byte_fallback: {tokens, share_of_byte_fallback, newline_is_a_piece}}
    notes: [str]
    files: {json, markdown, chart, models: {NAME: path}}

Rates are ``None`` when their total is 0. Pairs are written in the byte-level alphabet, as in ``merges.txt``.

>>> [i for i in range(20) if is_heldout(i, fraction=0.25, seed=0)]
[1, 4, 5, 18]
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "PEERS",
    "REPORT_SCHEMA_VERSION",
    "compare",
    "compare_merges",
    "is_heldout",
    "render_markdown",
    "render_chart",
    "summary",
]

REPORT_SCHEMA_VERSION = 1
PEERS = ("tokenizers", "sentencepiece")
_NAMES = ("hf_bpe", *PEERS)
_I32_MAX = 2**31 - 1
_MASK64 = 2**64 - 1
_MEMORY_MEASURE = (
    "peak resident set size (ru_maxrss) of a fresh Python child process that imports only the trainer's library, "
    "the maximum over that process and its worker processes; baseline = the same after imports and loading the "
    "training split, before training"
)


# -- the held-out split ----------------------------------------------------------------------------------------------


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def is_heldout(index: int, *, fraction: float, seed: int = 0) -> bool:
    """Say whether document ``index`` (0-based, over the whole corpus) belongs to the held-out split.

    The choice is ``splitmix64(splitmix64(seed) ^ index) < fraction * 2**64``: stable across machines and Python
    versions, streaming (it needs only the index), and independent of every other document.

    >>> sum(is_heldout(i, fraction=0.1, seed=1) for i in range(10_000))
    997
    """
    return _splitmix64(_splitmix64(seed & _MASK64) ^ index) < int(fraction * 2**64)


@dataclass
class _Subset:
    name: str
    heldout: list[str] = field(default_factory=list)
    documents: int = 0
    bytes: int = 0
    characters: int = 0


@dataclass
class _Split:
    train_path: Path
    train_documents: int
    train_bytes: int
    train_characters: int
    longest_train_bytes: int
    subsets: list[_Subset]
    fingerprint: dict[str, object]
    documents: int
    bytes: int
    characters: int


def _subsets_of(corpus: Any, text_column: str) -> list[tuple[str, Any]]:
    """Cut the corpus into named parts: one per file for paths, else one named ``corpus``."""
    from ..training.corpus import is_paths, iter_texts

    if is_paths(corpus):
        paths = [corpus] if isinstance(corpus, os.PathLike) else list(corpus)
        seen: dict[str, int] = {}
        parts = []
        for path in paths:
            name = Path(path).name
            seen[name] = seen.get(name, 0) + 1
            parts.append((name if seen[name] == 1 else f"{name}#{seen[name]}", Path(path)))
        for path in paths:  # fail before reading anything, not after a long first file
            if not Path(path).is_file():
                raise FileNotFoundError(f"corpus file {os.fspath(path)!r} does not exist or is not a file")
        return [(name, iter_texts(path)) for name, path in parts]
    return [("corpus", iter_texts(corpus, text_column=text_column))]


def _split_corpus(
    corpus: Any, *, text_column: str, fraction: float, seed: int, folder: Path, show_progress: bool
) -> _Split:
    """Stream the corpus once: training documents to a temporary file, held-out documents kept per subset."""
    from tqdm import tqdm

    from ..formats.manifest import CorpusFingerprint

    fingerprint = CorpusFingerprint()
    threshold = int(fraction * 2**64)
    mixed_seed = _splitmix64(seed & _MASK64)
    train_path = folder / "train.bin"
    subsets: list[_Subset] = []
    index = n_train = train_bytes = train_chars = longest = 0
    pack = struct.Struct("<Q").pack
    with open(train_path, "wb") as out, tqdm(desc="split corpus", unit=" docs", file=sys.stderr,
                                               disable=not show_progress, dynamic_ncols=True) as bar:
        for name, texts in _subsets_of(corpus, text_column):
            subset = _Subset(name)
            subsets.append(subset)
            for text in fingerprint.wrap(texts):
                data = text.encode("utf-8", "surrogatepass")
                if _splitmix64(mixed_seed ^ index) < threshold:
                    subset.heldout.append(text)
                    subset.documents += 1
                    subset.bytes += len(data)
                    subset.characters += len(text)
                else:
                    # Framing: 8-byte little-endian length, then the UTF-8 bytes (documents may hold any character).
                    out.write(pack(len(data)))
                    out.write(data)
                    n_train += 1
                    train_bytes += len(data)
                    train_chars += len(text)
                    longest = max(longest, len(data))
                index += 1
                bar.update(1)
    fp = fingerprint.as_dict()
    return _Split(
        train_path=train_path,
        train_documents=n_train,
        train_bytes=train_bytes,
        train_characters=train_chars,
        longest_train_bytes=longest,
        subsets=subsets,
        fingerprint=fp,
        documents=index,
        bytes=int(fp["bytes"]),  # type: ignore[arg-type]
        characters=train_chars + sum(s.characters for s in subsets),
    )


# -- training each tokenizer in its own child process -------------------------------------------------------------

# Run as `python -c _CHILD spec.json`. Standalone on purpose: a peer's child imports only that peer, so its
# memory is the peer's own. Writes {"ok", "seconds", "peak_rss_bytes", "baseline_rss_bytes", "warnings", "error"}.
_CHILD = r'''
import json, os, resource, struct, sys, time, warnings

spec = json.load(open(sys.argv[1], encoding="utf-8"))
options = spec["options"]
result = {"ok": False, "warnings": []}


def rss():
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, workers) * scale


def load(path):
    docs = []
    with open(path, "rb") as f:
        while True:
            head = f.read(8)
            if not head:
                return docs
            docs.append(f.read(struct.unpack("<Q", head)[0]).decode("utf-8", "surrogatepass"))


try:
    peer, out = spec["peer"], spec["out"]
    if peer == "hf_bpe":
        import hf_bpe
        version = hf_bpe.__version__
    elif peer == "tokenizers":
        import tokenizers
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
        version = tokenizers.__version__
    else:
        import io
        import sentencepiece as spm
        version = spm.__version__
    docs = load(spec["train_file"])
    result["baseline_rss_bytes"] = rss()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        if peer == "hf_bpe":
            model = hf_bpe.train(docs, vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                                 special_tokens=options["special_tokens"], pattern=options["pattern"],
                                 workers=options["workers"], show_progress=spec["show_progress"])
        elif peer == "tokenizers":
            tok = Tokenizer(models.BPE())
            if options["pattern_regex"] is None:
                tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            else:
                tok.pre_tokenizer = pre_tokenizers.Sequence([
                    pre_tokenizers.Split(Regex(options["pattern_regex"]), behavior="isolated"),
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ])
            tok.decoder = decoders.ByteLevel()
            trainer = trainers.BpeTrainer(vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                                          special_tokens=options["special_tokens"],
                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                          show_progress=spec["show_progress"])
            tok.train_from_iterator(docs, trainer=trainer, length=len(docs))
        else:
            buffer = io.BytesIO()
            spm.SentencePieceTrainer.train(sentence_iterator=iter(docs), model_writer=buffer,
                                           **options["sentencepiece"])
        result["seconds"] = time.perf_counter() - start
        result["peak_rss_bytes"] = rss()
    result["warnings"] = [str(w.message) for w in caught]
    os.makedirs(out, exist_ok=True)
    if peer == "hf_bpe":
        model.save(out, force=True)
    elif peer == "tokenizers":
        tok.save(os.path.join(out, "tokenizer.json"))
    else:
        with open(os.path.join(out, "sentencepiece.model"), "wb") as f:
            f.write(buffer.getvalue())
    result.update(ok=True, version=version)
except BaseException as exc:
    result["error"] = f"{type(exc).__name__}: {exc}".strip()
with open(spec["result"], "w", encoding="utf-8") as f:
    json.dump(result, f)
'''


def _sentencepiece_options(vocab_size: int, special_tokens: Sequence[str], longest: int) -> dict[str, object]:
    return {
        "model_type": "bpe",
        "vocab_size": vocab_size,
        "byte_fallback": True,
        "normalization_rule_name": "identity",
        "input_sentence_size": 0,
        "character_coverage": 1.0,
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
        "user_defined_symbols": list(special_tokens),
        "max_sentence_length": max(4192, longest + 1),
        "num_threads": os.cpu_count() or 1,
        "minloglevel": 2,
    }


def _train_in_child(peer: str, spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Train one tokenizer in a fresh Python process; return the child's result record."""
    spec_path = folder / f"{peer}.spec.json"
    result_path = folder / f"{peer}.result.json"
    spec = {**spec, "peer": peer, "result": os.fspath(result_path)}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ)
    # The child must import this very hf_bpe (an in-tree checkout need not be installed).
    package_root = os.fspath(Path(__file__).resolve().parents[2])  # the folder holding hf_bpe/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    # stdout belongs to the command's data: the child's stdout goes to stderr with its progress bars.
    completed = subprocess.run([sys.executable, "-c", _CHILD, os.fspath(spec_path)], env=env,
                               stdout=subprocess.DEVNULL, check=False)
    if result_path.is_file():
        return json.loads(result_path.read_text(encoding="utf-8"))
    return {"ok": False, "error": f"the training process died with exit status {completed.returncode}"}


# -- tokenizers under evaluation ------------------------------------------------------------------------------------


class _Evaluated:
    """One tokenizer, seen through what the metrics need: ids, their bytes, decode, fallback flags."""

    name: str

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError

    def token_bytes(self, token_id: int) -> bytes:
        raise NotImplementedError

    def is_fallback(self, token_id: int) -> bool:
        raise NotImplementedError

    def is_unknown(self, token_id: int) -> bool:
        return False


def _partial_character(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class _HFBPE(_Evaluated):
    name = "hf_bpe"

    def __init__(self, folder: Path) -> None:
        from ..model.bpe import BPEModel

        self.model = BPEModel.load(folder)
        self._partial = [_partial_character(self.model.id_to_bytes(i)) if self._exists(i) else False
                         for i in range(self.model.vocab_size)]

    def _exists(self, token_id: int) -> bool:
        try:
            self.model.id_to_bytes(token_id)
        except ValueError:
            return False
        return True

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [self.model.encode(t, allowed_special="all") for t in texts]

    def decode(self, ids: list[int]) -> str:
        return self.model.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self.model.id_to_bytes(token_id)

    def is_fallback(self, token_id: int) -> bool:
        return self._partial[token_id]


class _Tokenizers(_Evaluated):
    name = "tokenizers"

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"no tokenizer.json at {os.fspath(path)!r}; pass a tokenizer.json file or a folder "
                                    "that holds one")
        self.path = file
        self.tokenizer = Tokenizer.from_file(os.fspath(file))
        self.data = json.loads(file.read_text(encoding="utf-8"))
        self._bytes: dict[int, bytes] = {}
        added = {t.content for t in self.tokenizer.get_added_tokens_decoder().values()}
        from ..core.bytelevel import str_to_token

        for token, idx in self.tokenizer.get_vocab(with_added_tokens=True).items():
            try:
                self._bytes[idx] = token.encode("utf-8") if token in added else str_to_token(token)
            except ValueError:
                self._bytes[idx] = token.encode("utf-8")

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def token_bytes(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def is_fallback(self, token_id: int) -> bool:
        return _partial_character(self._bytes[token_id])

    def merges(self) -> list[tuple[bytes, bytes]]:
        from ..core.bytelevel import str_to_token

        pairs = []
        for merge in self.data.get("model", {}).get("merges", []):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            pairs.append((str_to_token(left), str_to_token(right)))
        return pairs


class _SentencePiece(_Evaluated):
    name = "sentencepiece"

    def __init__(self, path: Path) -> None:
        import sentencepiece as spm

        file = path
        if path.is_dir():
            found = sorted(path.glob("*.model"))
            if len(found) != 1:
                raise FileNotFoundError(f"expected one *.model file in {os.fspath(path)!r}, found {len(found)}")
            file = found[0]
        if not file.is_file():
            raise FileNotFoundError(f"no SentencePiece model at {os.fspath(path)!r}")
        self.path = file
        self.sp = spm.SentencePieceProcessor(model_file=os.fspath(file))
        size = self.sp.get_piece_size()
        self._byte = [self.sp.is_byte(i) for i in range(size)]
        self._unknown = [self.sp.is_unknown(i) for i in range(size)]
        self._bytes = [self._piece_bytes(i) for i in range(size)]

    def _piece_bytes(self, token_id: int) -> bytes:
        piece = self.sp.id_to_piece(token_id)
        if self.sp.is_byte(token_id):
            return bytes([int(piece[3:5], 16)])  # "<0xNN>"
        if self.sp.is_control(token_id) or self.sp.is_unknown(token_id):
            return b""
        return piece.replace("\u2581", " ").encode("utf-8")

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return self.sp.encode(texts) if texts else []

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def is_fallback(self, token_id: int) -> bool:
        return self._byte[token_id]

    def is_unknown(self, token_id: int) -> bool:
        return self._unknown[token_id]

    def vocabulary(self, specials: Iterable[str] = ()) -> set[bytes]:
        """Pieces as bytes (``▁`` -> space, ``<0xNN>`` -> the byte), without control, unknown and special pieces."""
        skip = set(specials)
        return {self._bytes[i] for i in range(len(self._bytes))
                if not (self.sp.is_control(i) or self.sp.is_unknown(i) or self.sp.id_to_piece(i) in skip)}


_LOADERS = {"hf_bpe": _HFBPE, "tokenizers": _Tokenizers, "sentencepiece": _SentencePiece}


# -- merges vs a peer ----------------------------------------------------------------------------------------------


def _dedup_merges(vocab: list[bytes], merges: Sequence[tuple[int, int, int]]) -> list[tuple[bytes, bytes]]:
    # tokenizers keeps merges in a map pair -> rank: a pair merged twice keeps its last rank (what merges.txt lists).
    last = {(left, right): rank for rank, (left, right, _new) in enumerate(merges)}
    return [(vocab[left], vocab[right]) for (left, right), _ in sorted(last.items(), key=lambda item: item[1])]


def _pair_counts_after(
    word_counts: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]], pairs: Iterable[tuple[bytes, bytes]]
) -> dict[tuple[bytes, bytes], int]:
    """Count adjacent occurrences of ``pairs`` in the corpus once ``merges`` are applied in order.

    Applying merges in order equals merging the lowest-ranked pair present, everywhere left to right, until none
    is left (a merge's result only takes part in later merges). O(sum of squared word lengths).
    """
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    totals = dict.fromkeys(pairs, 0)
    for word, count in word_counts.items():
        symbols = [word[i : i + 1] for i in range(len(word))]
        while len(symbols) > 1:
            candidates = [ranks[p] for p in zip(symbols, symbols[1:]) if p in ranks]
            if not candidates:
                break
            left, right = merges[min(candidates)]
            merged: list[bytes] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        for pair in zip(symbols, symbols[1:]):
            if pair in totals:
                totals[pair] += count
    return totals


def _show_pair(pair: tuple[bytes, bytes]) -> list[str]:
    from ..core.bytelevel import token_to_str

    return [token_to_str(pair[0]), token_to_str(pair[1])]


def compare_merges(
    word_counts: Mapping[bytes, int],
    ours: Sequence[tuple[bytes, bytes]],
    theirs: Sequence[tuple[bytes, bytes]],
    *,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    max_token_length: int | None = None,
    peer: str = "tokenizers",
) -> dict[str, Any]:
    """Compare hf_bpe's merges with a peer's, and explain the first difference when the reason is known.

    Args:
        word_counts: pre-token (bytes) -> count in the training split, as ``hf_bpe.training.bpe_trainer.count_words`` gives.
        ours: hf_bpe's merges in rank order.
        theirs: the peer's merges in rank order.
        vocab_size, special_tokens, min_frequency, max_token_length: the training options (to replay them).
        peer: the peer's name, for the messages.

    Returns:
        The ``merges`` section of the report: ``identical``, ``hf_bpe`` and ``peer`` (merge counts),
        ``first_difference`` (``None`` or the rank, both pairs and their counts in the training split after the
        common merges) and ``reason`` (``None`` when unknown). The known reason: when hf_bpe's core with
        ``count_bits=32`` (`tokenizers`' wrapping ``i32`` pair counts) reproduces the peer's merges through the
        differing rank, the reason names the pair whose count exceeds ``2**31-1``.

    >>> r = compare_merges({b"ab": 3}, [(b"a", b"b")], [(b"a", b"b")], vocab_size=257)
    >>> r["identical"], r["first_difference"]
    (True, None)
    """
    from ..core import _core

    ours, theirs = list(ours), list(theirs)
    section: dict[str, Any] = {"identical": ours == theirs, "hf_bpe": len(ours), "peer": len(theirs),
                               "first_difference": None, "reason": None}
    if ours == theirs:
        return section
    # 1. The first differing rank (a missing merge counts as a difference at the shorter list's end).
    rank = next((r for r, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine = ours[rank] if rank < len(ours) else None
    other = theirs[rank] if rank < len(theirs) else None
    # 2. Both pairs' occurrences in the training split after the rank common merges.
    counts = _pair_counts_after(word_counts, ours[:rank], [p for p in (mine, other) if p is not None])
    section["first_difference"] = {
        "rank": rank,
        "hf_bpe": None if mine is None else {"pair": _show_pair(mine), "count": counts[mine]},
        "peer": None if other is None else {"pair": _show_pair(other), "count": counts[other]},
    }
    # 3. Known reason: the peer's 32-bit pair counts. Replay training with wrapping i32 counts.
    if word_counts:
        words = sorted(word_counts)
        vocab32, merges32 = _core.train_merges(
            words, [word_counts[w] for w in words], vocab_size=vocab_size, min_frequency=min_frequency,
            special_tokens=list(special_tokens), max_token_length=max_token_length, count_bits=32,
        )
        emulated = _dedup_merges(vocab32, merges32)
        if emulated[: rank + 1] == theirs[: rank + 1]:
            big = [(p, c) for p, c in ((mine, counts.get(mine)), (other, counts.get(other)))
                   if p is not None and c is not None and c > _I32_MAX]
            if big:
                pair, count = big[0]
                section["reason"] = (
                    f"{peer}' 32-bit pair counts overflow: pair {' '.join(_show_pair(pair))!r} has count {count:,} "
                    f"> 2**31-1 = {_I32_MAX:,} (hf_bpe with count_bits=32 reproduces {peer}' merges "
                    f"{'entirely' if emulated == theirs else f'through rank {rank}'})"
                )
            else:
                section["reason"] = (f"{peer}' 32-bit pair counts overflow (hf_bpe with count_bits=32 reproduces "
                                     f"{peer}' merges through rank {rank})")
    return section


# -- metrics -----------------------------------------------------------------------------------------------------


def _rate(part: int, total: int) -> float | None:
    return part / total if total else None


def _metrics(tok: _Evaluated, texts: list[str], encoded: list[list[int]]) -> dict[str, Any]:
    tokens = sum(map(len, encoded))
    n_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    chars = sum(map(len, texts))
    roundtrip = sum(1 for text, ids in zip(texts, encoded) if tok.decode(ids) == text)
    fallback = sum(1 for ids in encoded for i in ids if tok.is_fallback(i))
    unknown = sum(1 for ids in encoded for i in ids if tok.is_unknown(i))
    return {
        "documents": len(texts), "tokens": tokens, "bytes": n_bytes, "characters": chars,
        "tokens_per_byte": _rate(tokens, n_bytes), "tokens_per_char": _rate(tokens, chars),
        "roundtrip_documents": roundtrip, "roundtrip_rate": _rate(roundtrip, len(texts)),
        "byte_fallback_tokens": fallback, "byte_fallback_rate": _rate(fallback, tokens),
        "unknown_tokens": unknown, "unknown_rate": _rate(unknown, tokens),
    }


def _merge_metrics(parts: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("documents", "tokens", "bytes", "characters", "roundtrip_documents", "byte_fallback_tokens",
            "unknown_tokens")
    total = {k: sum(p[k] for p in parts) for k in keys}
    return {
        **total,
        "tokens_per_byte": _rate(total["tokens"], total["bytes"]),
        "tokens_per_char": _rate(total["tokens"], total["characters"]),
        "roundtrip_rate": _rate(total["roundtrip_documents"], total["documents"]),
        "byte_fallback_rate": _rate(total["byte_fallback_tokens"], total["tokens"]),
        "unknown_rate": _rate(total["unknown_tokens"], total["tokens"]),
    }


def _segments(tok: _Evaluated, ids: list[int], text: str) -> list[bytes]:
    pieces = [tok.token_bytes(i) for i in ids]
    # A dummy-prefix space (a SentencePiece model trained with add_dummy_prefix) is not part of the text.
    if pieces and pieces[0].startswith(b" ") and not text.startswith(" "):
        pieces[0] = pieces[0][1:]
        if not pieces[0]:
            pieces.pop(0)
    return pieces


def _boundaries(pieces: list[bytes]) -> set[int]:
    out, at = set(), 0
    for piece in pieces[:-1]:
        at += len(piece)
        out.add(at)
    return out


# -- the comparison ----------------------------------------------------------------------------------------------


def _versions() -> dict[str, str | None]:
    from ..formats.manifest import versions as manifest_versions

    return manifest_versions()


def _check_args(
    vocab_size: object, against: object, heldout_fraction: object, heldout_seed: object, models: object,
    workers: object,
) -> tuple[list[str], dict[str, Path]]:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if isinstance(against, str):
        against = [a.strip() for a in against.split(",") if a.strip()]
    if not isinstance(against, Sequence | set | frozenset):
        raise TypeError(f"against must be a list of peer names (from {list(PEERS)!r}), got {against!r}")
    peers = []
    for name in against:
        if name not in PEERS:
            raise ValueError(f"unknown peer {name!r} in against; known peers are {', '.join(PEERS)} "
                             "(e.g. against=('tokenizers', 'sentencepiece'))")
        if name not in peers:
            peers.append(name)
    if isinstance(heldout_fraction, bool) or not isinstance(heldout_fraction, int | float) \
            or not 0 <= heldout_fraction < 1:
        raise ValueError(f"heldout_fraction must be a number in [0, 1), got {heldout_fraction!r}; e.g. 0.1 holds out "
                         "about one document in ten")
    if isinstance(heldout_seed, bool) or not isinstance(heldout_seed, int) or heldout_seed < 0:
        raise ValueError(f"heldout_seed must be an int >= 0, got {heldout_seed!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
    if not isinstance(models, Mapping):
        raise TypeError(f"models must be a mapping of tokenizer name to path, got {models!r}")
    paths: dict[str, Path] = {}
    for name, path in models.items():
        if name != "hf_bpe" and name not in peers:
            raise ValueError(f"models names {name!r}, which is not compared; names are 'hf_bpe' and the peers in "
                             f"against ({', '.join(peers) or 'none'})")
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"models[{name!r}] must be a path, got {path!r}")
        if not Path(path).exists():
            raise FileNotFoundError(f"models[{name!r}] = {os.fspath(path)!r} does not exist")
        paths[name] = Path(path)
    return peers, paths


def _describe(corpus: Any) -> list[str]:
    if isinstance(corpus, os.PathLike):
        return [os.fspath(corpus)]
    if isinstance(corpus, list | tuple) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        return [os.fspath(p) for p in corpus]
    return [f"{type(corpus).__module__}.{type(corpus).__qualname__}"]


def _say(message: str, show: bool) -> None:
    if show:
        print(f"hf-bpe: {message}", file=sys.stderr, flush=True)


def compare(
    corpus: Any,
    *,
    vocab_size: int,
    out: str | os.PathLike[str],
    against: Sequence[str] = PEERS,
    heldout_fraction: float = 0.1,
    heldout_seed: int = 0,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    pattern: str = "gpt2",
    text_column: str = "text",
    models: Mapping[str, str | os.PathLike[str]] = MappingProxyType({}),
    workers: int | None = None,
    show_progress: bool = True,
    force: bool = False,
) -> dict[str, Any]:
    """Train hf_bpe and its peers on one training split, compare them on the held-out split, write the report.

    Args:
        corpus: what :func:`hf_bpe.train` accepts (texts, a ``datasets`` Dataset, path(s) of text files). With
            files, each file is a held-out subset of its own in the report and the chart.
        vocab_size: the vocabulary size of every tokenizer (specials and the 256 bytes included).
        out: the report folder (created): ``report.json``, ``report.md``, ``report.png`` and ``models/NAME``.
        against: peers to compare with: ``"tokenizers"``, ``"sentencepiece"`` (a list or a comma-separated str).
        heldout_fraction: share of documents held out (by :func:`is_heldout`); 0 holds out none.
        heldout_seed: seed of the held-out choice.
        special_tokens: special tokens for every tokenizer.
        min_frequency: hf_bpe's and tokenizers' ``min_frequency`` (SentencePiece has none).
        pattern: hf_bpe's pre-tokenizer pattern; `tokenizers` gets the equivalent ``Split`` + ``ByteLevel``.
        text_column: the text column, for datasets.
        models: already-trained models to load instead of training: ``{"hf_bpe": folder, "tokenizers":
            tokenizer.json or its folder, "sentencepiece": .model file or its folder}``.
        workers: hf_bpe's counting processes (default: as ``hf_bpe.train`` chooses for the split's size).
        show_progress: progress and steps on stderr.
        force: replace an existing report in ``out``.

    Returns:
        The report (the content of ``report.json``; see the module docstring for its schema).

    Raises:
        TypeError, ValueError: for bad options (an unknown peer name, a fraction outside [0, 1), ...), or a
            training split that is empty.
        FileExistsError: when ``out`` holds a report and ``force`` is false.

    >>> import tempfile
    >>> texts = ["low lower lowest\\n", "new newer newest\\n"] * 50
    >>> report = compare(texts, vocab_size=270, out=tempfile.mkdtemp(), against=(), show_progress=False)
    >>> report["tokenizers"]["hf_bpe"]["status"], report["corpus"]["documents"], report["vs_tokenizers"]["status"]
    ('trained', 100, 'not requested')
    """
    # 1. Check the options before reading anything.
    from ..core.pretokenize import Pretokenizer
    from ..training.bpe_trainer import check_options

    peers, model_paths = _check_args(vocab_size, against, heldout_fraction, heldout_seed, models, workers)
    specials = check_options(vocab_size, min_frequency, special_tokens, None, workers)
    pretokenizer = Pretokenizer(pattern)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    existing = [n for n in ("report.json", "report.md", "report.png") if (folder / n).exists()]
    if existing and not force:
        raise FileExistsError(f"{os.fspath(out)!r} already holds {', '.join(existing)}; pass force=True "
                              "(CLI: --force) to replace the report")
    folder.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "versions": _versions(),
        "options": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                    "pattern": pattern, "against": peers, "heldout_fraction": heldout_fraction,
                    "heldout_seed": heldout_seed, "workers": workers},
        "memory_measure": _MEMORY_MEASURE,
        "notes": notes,
    }

    with tempfile.TemporaryDirectory(prefix="hf_bpe_compare_") as tmp_name:
        tmp = Path(tmp_name)
        # 2. One streaming pass: training split to a file, held-out split in memory, per subset.
        _say("splitting the corpus into training and held-out documents", show_progress)
        split = _split_corpus(corpus, text_column=text_column, fraction=heldout_fraction, seed=heldout_seed,
                              folder=tmp, show_progress=show_progress)
        heldout_docs = sum(s.documents for s in split.subsets)
        report["corpus"] = {
            "source": _describe(corpus), "fingerprint": split.fingerprint, "documents": split.documents,
            "bytes": split.bytes, "characters": split.characters,
            "train": {"documents": split.train_documents, "bytes": split.train_bytes,
                      "characters": split.train_characters},
            "heldout": {"documents": heldout_docs, "bytes": sum(s.bytes for s in split.subsets),
                        "characters": sum(s.characters for s in split.subsets)},
            "subsets": [{"name": s.name, "documents": s.documents, "bytes": s.bytes, "characters": s.characters}
                        for s in split.subsets],
        }
        if split.train_documents == 0 or split.train_bytes == 0:
            raise ValueError(
                f"the training split is empty ({split.documents} documents, {split.train_documents} for training, "
                f"{split.train_bytes} bytes): give a larger corpus or a smaller heldout_fraction "
                f"(now {heldout_fraction!r})"
            )
        if heldout_docs == 0:
            notes.append(f"the held-out split is empty (heldout_fraction={heldout_fraction!r}): no encoding metrics")

        # 3. Train (or load) each tokenizer.
        if workers is None:
            from ..training.bpe_trainer import choose_workers

            workers = choose_workers(pretokenizer, split.train_bytes)
        spec = {
            "train_file": os.fspath(split.train_path),
            "show_progress": show_progress,
            "options": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                        "pattern": pattern, "workers": workers,
                        "pattern_regex": None if pretokenizer.name == "gpt2" else pretokenizer.regex,
                        "sentencepiece": _sentencepiece_options(vocab_size, specials, split.longest_train_bytes)},
        }
        configurations = {
            "hf_bpe": {"vocab_size": vocab_size, "min_frequency": min_frequency, "special_tokens": specials,
                       "pattern": pattern, "workers": workers},
            "tokenizers": {"model": "BPE()", "pre_tokenizer": "ByteLevel(add_prefix_space=False)"
                           if pretokenizer.name == "gpt2" else
                           f"Sequence([Split(Regex({pretokenizer.regex!r}), 'isolated'), "
                           "ByteLevel(add_prefix_space=False, use_regex=False)])",
                           "trainer": f"BpeTrainer(vocab_size={vocab_size}, min_frequency={min_frequency}, "
                           f"special_tokens={specials!r}, initial_alphabet=ByteLevel.alphabet())"},
            "sentencepiece": spec["options"]["sentencepiece"],
        }
        entries: dict[str, dict[str, Any]] = {}
        loaded: dict[str, _Evaluated] = {}
        models_folder = folder / "models"
        for name in ("hf_bpe", *PEERS):
            entry: dict[str, Any] = {"status": "not requested", "version": report["versions"].get(name),
                                     "path": None, "vocab_size": None, "configuration": None, "warnings": [],
                                     "error": None, "training": None}
            entries[name] = entry
            if name != "hf_bpe" and name not in peers:
                continue
            if name != "hf_bpe" and not _installed(name):
                entry["status"] = "not installed"
                entry["error"] = f"{name} is not installed (pip install {name}); the report covers the others"
                _say(f"{name} is not installed: skipped", show_progress)
                continue
            if name in model_paths:
                path = model_paths[name]
                entry["status"] = "loaded"
            else:
                path = models_folder / name
                if path.exists():
                    shutil.rmtree(path)
                _say(f"training {name} (vocab_size={vocab_size}) on {split.train_documents:,} documents",
                     show_progress)
                result = _train_in_child(name, {**spec, "out": os.fspath(path)}, tmp)
                entry["warnings"] = result.get("warnings", [])
                if not result.get("ok"):
                    entry["status"] = "failed"
                    entry["error"] = _explain_failure(name, result.get("error", "unknown error"), vocab_size)
                    _say(f"{name} failed: {entry['error']}", show_progress)
                    continue
                entry["status"] = "trained"
                entry["configuration"] = configurations[name]
                entry["training"] = {k: result.get(k) for k in ("seconds", "peak_rss_bytes", "baseline_rss_bytes")}
            entry["path"] = os.fspath(path)
            try:
                loaded[name] = _LOADERS[name](path)
            except Exception as exc:  # noqa: BLE001 - a peer's own loader may raise anything; report it
                entry["status"] = "failed"
                entry["error"] = f"cannot load {os.fspath(path)!r}: {type(exc).__name__}: {exc}"
                continue
            entry["vocab_size"] = _vocab_size(loaded[name])
            if entry["vocab_size"] is not None and entry["vocab_size"] < vocab_size:
                message = (f"{name} has {entry['vocab_size']} tokens, not the {vocab_size} asked for: the training "
                           "split ran out of pairs to merge; give a larger corpus or a smaller vocab_size")
                notes.append(message)
                _say(f"warning: {message}", show_progress)
        report["tokenizers"] = entries

        # 4. Encode the held-out split with every tokenizer, per subset.
        encoded: dict[str, dict[str, list[list[int]]]] = {}
        heldout: dict[str, Any] = {}
        for name, tok in loaded.items():
            _say(f"encoding {heldout_docs:,} held-out documents with {name}", show_progress and heldout_docs > 0)
            encoded[name] = {}
            per_subset = {}
            for subset in split.subsets:
                ids = tok.encode_batch(subset.heldout)
                encoded[name][subset.name] = ids
                per_subset[subset.name] = _metrics(tok, subset.heldout, ids)
            heldout[name] = {"all": _merge_metrics(list(per_subset.values())), "subsets": per_subset}
        report["heldout"] = heldout

        # 5. hf_bpe vs tokenizers: equality.
        report["vs_tokenizers"] = _vs_tokenizers(loaded, entries, encoded, split, pretokenizer, specials,
                                                 vocab_size, min_frequency, workers)
        # 6. hf_bpe vs SentencePiece: metrics.
        report["vs_sentencepiece"] = _vs_sentencepiece(loaded, entries, encoded, split)
    report["files"] = {"json": "report.json", "markdown": "report.md", "chart": "report.png",
                       "models": {n: e["path"] for n, e in entries.items() if e["path"]}}

    # 7. Write the three report files together.
    from ..formats import atomic

    atomic.write_files(folder, {
        "report.json": json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        "report.md": render_markdown(report),
        "report.png": render_chart(report),
    }, force=True)
    return report


def _installed(name: str) -> bool:
    """Whether a peer library can be imported (without importing it)."""
    return importlib.util.find_spec(name) is not None


def _vocab_size(tok: _Evaluated) -> int | None:
    if isinstance(tok, _HFBPE):
        return len(tok.model.vocab) + len(tok.model.special_tokens)
    if isinstance(tok, _Tokenizers):
        return tok.tokenizer.get_vocab_size(with_added_tokens=True)
    if isinstance(tok, _SentencePiece):
        return tok.sp.get_piece_size()
    return None


def _explain_failure(name: str, error: str, vocab_size: int) -> str:
    """Turn a trainer's failure into a message that says what to change."""
    if name != "sentencepiece":
        return error
    required = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", error)
    if required:
        return (f"vocab_size={vocab_size} is too small for SentencePiece: with character_coverage=1.0 every distinct "
                f"character of the training split needs its own piece ({required.group(2)} with the meta pieces); "
                f"use a vocab_size above {required.group(2)} [SentencePiece: {error}]")
    too_high = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", error)
    if too_high:
        return (f"the training split is too small for SentencePiece to reach vocab_size={vocab_size}: it can make "
                f"at most {too_high.group(2)} pieces; give a larger corpus or a smaller vocab_size "
                f"[SentencePiece: {error}]")
    return error


def _vs_tokenizers(
    loaded: Mapping[str, _Evaluated], entries: Mapping[str, dict[str, Any]], encoded: Mapping[str, Any],
    split: _Split, pretokenizer: Any, specials: list[str], vocab_size: int, min_frequency: int, workers: int,
) -> dict[str, Any]:
    section: dict[str, Any] = {"status": entries["tokenizers"]["status"], "error": entries["tokenizers"]["error"],
                               "merges": None, "vocab": None, "encode": None}
    if section["status"] == "not requested" or "tokenizers" not in loaded or "hf_bpe" not in loaded:
        if section["status"] in ("trained", "loaded"):
            section["status"] = "failed"
            section["error"] = "hf_bpe has no model to compare: " + str(entries["hf_bpe"]["error"])
        return section
    ours: _HFBPE = loaded["hf_bpe"]  # type: ignore[assignment]
    theirs: _Tokenizers = loaded["tokenizers"]  # type: ignore[assignment]
    section["status"] = "compared"
    # Merges; word counts of the training split only when they differ (a second pass over the split).
    our_merges, their_merges = list(ours.model.merges), theirs.merges()
    if our_merges == their_merges:
        section["merges"] = compare_merges({}, our_merges, their_merges, vocab_size=vocab_size)
    else:
        from ..training.bpe_trainer import count_words

        counts, _, _ = count_words(_read_split(split.train_path), pretokenizer, workers=workers)
        section["merges"] = compare_merges(counts, our_merges, their_merges, vocab_size=vocab_size,
                                           special_tokens=specials, min_frequency=min_frequency)
    # Vocabulary ids.
    from ..core.bytelevel import token_to_str

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
    section["encode"] = {"equal": equal, "total": total, "rate": _rate(equal, total), "first_mismatch": first}
    return section


def _read_split(path: Path) -> Iterable[str]:
    with open(path, "rb") as handle:
        while head := handle.read(8):
            yield handle.read(struct.unpack("<Q", head)[0]).decode("utf-8", "surrogatepass")


def _vs_sentencepiece(
    loaded: Mapping[str, _Evaluated], entries: Mapping[str, dict[str, Any]], encoded: Mapping[str, Any],
    split: _Split,
) -> dict[str, Any]:
    section: dict[str, Any] = {"status": entries["sentencepiece"]["status"],
                               "error": entries["sentencepiece"]["error"], "vocab_overlap": None,
                               "segmentation": None, "newline_byte_fallback": None}
    if "sentencepiece" not in loaded or "hf_bpe" not in loaded:
        if section["status"] in ("trained", "loaded"):
            section["status"] = "failed"
            section["error"] = "hf_bpe has no model to compare: " + str(entries["hf_bpe"]["error"])
        return section
    ours: _HFBPE = loaded["hf_bpe"]  # type: ignore[assignment]
    theirs: _SentencePiece = loaded["sentencepiece"]  # type: ignore[assignment]
    section["status"] = "compared"
    mine, other = set(ours.model.vocab), theirs.vocabulary(ours.model.special_tokens)
    shared = len(mine & other)
    section["vocab_overlap"] = {
        "convention": "tokens as raw bytes: SentencePiece's '\u2581' and byte-level BPE's '\u0120' both become a "
                      "space, <0xNN> pieces become their byte; special, control and unknown tokens excluded",
        "hf_bpe": len(mine), "sentencepiece": len(other), "shared": shared,
        "jaccard": _rate(shared, len(mine | other)), "hf_bpe_share": _rate(shared, len(mine)),
        "sentencepiece_share": _rate(shared, len(other)),
    }
    newline_id = theirs.sp.piece_to_id("<0x0A>")
    fallback = newline = 0
    equal = total = common = ours_n = theirs_n = 0
    for subset in split.subsets:
        for ids in encoded["sentencepiece"][subset.name]:
            fallback += sum(1 for i in ids if theirs.is_fallback(i))
            newline += ids.count(newline_id)
        for text, a, b in zip(subset.heldout, encoded["hf_bpe"][subset.name], encoded["sentencepiece"][subset.name]):
            left, right = _segments(ours, a, text), _segments(theirs, b, text)
            total += 1
            equal += left == right
            x, y = _boundaries(left), _boundaries(right)
            common += len(x & y)
            ours_n += len(x)
            theirs_n += len(y)
    section["segmentation"] = {"equal": equal, "total": total, "rate": _rate(equal, total),
                               "boundary_f1": _rate(2 * common, ours_n + theirs_n)}
    # SentencePiece learns no piece for a line end, so each newline of the held-out text costs a <0x0A> token.
    section["newline_byte_fallback"] = {"tokens": newline, "share_of_byte_fallback": _rate(newline, fallback),
                                        "newline_is_a_piece": theirs.sp.piece_to_id("\n") != theirs.sp.unk_id()}
    return section


# -- report.md ---------------------------------------------------------------------------------------------------


def _num(value: Any, digits: int = 4) -> str:
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


def _ordered(names: Iterable[str]) -> list[str]:
    """hf_bpe first, then the peers in PEERS order (report.json sorts its keys)."""
    rank = {n: i for i, n in enumerate(_NAMES)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def render_markdown(report: Mapping[str, Any]) -> str:
    """Render a report (as :func:`compare` returns it) as Markdown tables a person reads."""
    lines: list[str] = []
    add = lines.append
    opts, corpus = report["options"], report["corpus"]
    add("# hf_bpe cross-validation report\n")
    add(f"Corpus: {', '.join(f'`{s}`' for s in corpus['source'])} — {corpus['documents']:,} documents, "
        f"{corpus['bytes']:,} bytes (sha256 `{corpus['fingerprint']['sha256'][:16]}…`). "
        f"Held out: {corpus['heldout']['documents']:,} documents ({_pct(opts['heldout_fraction'])} by hash, seed "
        f"{opts['heldout_seed']}); trained on {corpus['train']['documents']:,} documents, "
        f"{corpus['train']['bytes']:,} bytes.\n")
    add(f"Options: vocab_size **{opts['vocab_size']:,}**, min_frequency {opts['min_frequency']}, pattern "
        f"`{opts['pattern']}`, special tokens {opts['special_tokens'] or 'none'}.\n")
    add("![tokens per byte, training time and memory](report.png)\n")

    add("## Training\n")
    add("| tokenizer | version | status | vocab | time (s) | peak memory | baseline memory |")
    add("|---|---|---|---:|---:|---:|---:|")
    for name in _ordered(report["tokenizers"]):
        e = report["tokenizers"][name]
        t = e["training"] or {}
        status = _cell(e["status"] + (f": {e['error']}" if e["error"] else ""))
        add(f"| {name} | {e['version'] or 'n/a'} | {status} | {_num(e['vocab_size'])} | {_num(t.get('seconds'), 2)} "
            f"| {_mb(t.get('peak_rss_bytes'))} | {_mb(t.get('baseline_rss_bytes'))} |")
    add(f"\nMemory: {report['memory_measure']}.\n")

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
        h, s = report["heldout"]["hf_bpe"]["all"], report["heldout"]["sentencepiece"]["all"]
        add("| held-out metric | hf_bpe | SentencePiece |")
        add("|---|---:|---:|")
        add(f"| tokens per byte | {_num(h['tokens_per_byte'])} | {_num(s['tokens_per_byte'])} |")
        add(f"| tokens per character | {_num(h['tokens_per_char'])} | {_num(s['tokens_per_char'])} |")
        add(f"| round trip (documents) | {_pct(h['roundtrip_rate'])} | {_pct(s['roundtrip_rate'])} |")
        add(f"| byte fallback tokens¹ | {_pct(h['byte_fallback_rate'])} | {_pct(s['byte_fallback_rate'])} |")
        add(f"| unknown tokens | {_pct(h['unknown_rate'])} | {_pct(s['unknown_rate'])} |")
        o, g = vs["vocab_overlap"], vs["segmentation"]
        add(f"\nVocabulary overlap (tokens as bytes, `▁` and `Ġ` both a space): {o['shared']:,} shared of "
            f"{o['hf_bpe']:,} (hf_bpe) and {o['sentencepiece']:,} (SentencePiece), Jaccard {_num(o['jaccard'], 3)}.  ")
        add(f"Segmentation: {g['equal']:,} / {g['total']:,} held-out documents split identically "
            f"({_pct(g['rate'])}); token-boundary F1 {_num(g['boundary_f1'], 3)}.\n")
        add("¹ SentencePiece: `<0xNN>` pieces; byte-level BPE: tokens that are not valid UTF-8 alone.")
        nl = vs["newline_byte_fallback"]
        if nl["tokens"] and not nl["newline_is_a_piece"]:
            add(f"{_pct(nl['share_of_byte_fallback'])} of SentencePiece's byte-fallback tokens are `<0x0A>`: it has no "
                "piece for a line end (it learns nothing from the line ends of its training sentences), so every "
                "newline of the held-out text falls back to a byte.")
        add("")

    if report["heldout"]:
        add("## Held-out tokens per byte, by subset\n")
        names = _ordered(report["heldout"])
        add("| subset | documents | bytes | " + " | ".join(names) + " |")
        add("|---|---:|---:|" + "---:|" * len(names))
        subsets = [s["name"] for s in report["corpus"]["subsets"]]
        for sub in [*subsets, "all"] if len(subsets) > 1 else subsets:
            row = [report["heldout"][n]["all"] if sub == "all" else report["heldout"][n]["subsets"][sub]
                   for n in names]
            add(f"| {sub} | {row[0]['documents']:,} | {row[0]['bytes']:,} | "
                + " | ".join(_num(r["tokens_per_byte"]) for r in row) + " |")
        add("")
    if report["notes"]:
        add("## Notes\n")
        lines.extend(f"- {n}" for n in report["notes"])
        add("")
    add("## Configurations\n")
    for name in _ordered(report["tokenizers"]):
        e = report["tokenizers"][name]
        if e["configuration"]:
            add(f"- **{name}**: `{json.dumps(e['configuration'], ensure_ascii=False)}`")
    add(f"\nVersions: {', '.join(f'{k} {v}' for k, v in report['versions'].items() if v)}.")
    return "\n".join(lines) + "\n"


# -- report.png: a dependency-free bar chart -----------------------------------------------------------------------

# A 5x9 bitmap font (rows 1-7 above the baseline, 8-9 descenders), '#' = ink. Characters outside it draw as '?'.
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
    names = _ordered(report["heldout"])
    subsets = [s["name"] for s in report["corpus"]["subsets"]]
    groups = [*subsets, "all"] if len(subsets) > 1 else subsets
    entries = report["tokenizers"]
    shown = [n for n in _ordered(entries) if entries[n]["status"] != "not requested"]
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


def summary(report: Mapping[str, Any]) -> str:
    """Say in one line what a report found."""
    parts = []
    vs = report["vs_tokenizers"]
    if vs["status"] == "compared":
        m, v, e = vs["merges"], vs["vocab"], vs["encode"]
        merges = "merges identical" if m["identical"] else f"merges differ at rank {m['first_difference']['rank']}"
        parts.append(f"vs tokenizers: {merges}, ids {'identical' if v['identical'] else 'differ'}, "
                     f"encode {e['equal']:,}/{e['total']:,} equal")
    elif vs["status"] != "not requested":
        parts.append(f"tokenizers {vs['status']}")
    vs = report["vs_sentencepiece"]
    if vs["status"] == "compared":
        h = report["heldout"]["hf_bpe"]["all"]["tokens_per_byte"]
        s = report["heldout"]["sentencepiece"]["all"]["tokens_per_byte"]
        parts.append(f"tokens/byte hf_bpe {_num(h)} vs sentencepiece {_num(s)}")
    elif vs["status"] != "not requested":
        parts.append(f"sentencepiece {vs['status']}")
    return "; ".join(parts) or "report written"
