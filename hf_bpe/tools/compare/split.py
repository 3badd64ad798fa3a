"""Split a corpus into a training split (streamed to a file) and a held-out split, deterministically.

>>> [i for i in range(20) if is_heldout(i, fraction=0.25, seed=0)]
[1, 4, 5, 18]
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...training.held_out import is_heldout, splitmix64

_MASK64 = 2**64 - 1

__all__ = ["Split", "Subset", "is_heldout", "read_split", "split_corpus"]

@dataclass
class Subset:
    name: str
    heldout: list[str] = field(default_factory=list)
    documents: int = 0
    bytes: int = 0
    characters: int = 0


@dataclass
class Split:
    train_path: Path
    train_documents: int
    train_bytes: int
    train_characters: int
    longest_train_bytes: int
    subsets: list[Subset]
    fingerprint: dict[str, object]
    documents: int
    bytes: int
    characters: int


def subsets_of(corpus: Any, text_column: str) -> list[tuple[str, Any]]:
    """Cut the corpus into named parts: one per file for paths, else one named ``corpus``."""
    from ...training.corpus import is_paths, iter_texts

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


def split_corpus(
    corpus: Any, *, text_column: str, fraction: float, seed: int, folder: Path, show_progress: bool
) -> Split:
    """Stream the corpus once: training documents to a temporary file, held-out documents kept per subset."""
    from tqdm import tqdm

    from ...formats.manifest import CorpusFingerprint

    fingerprint = CorpusFingerprint()
    threshold = int(fraction * 2**64)
    mixed_seed = splitmix64(seed & _MASK64)
    train_path = folder / "train.bin"
    subsets: list[Subset] = []
    index = n_train = train_bytes = train_chars = longest = 0
    pack = struct.Struct("<Q").pack
    with open(train_path, "wb") as out, tqdm(desc="split corpus", unit=" docs", file=sys.stderr,
                                               disable=not show_progress, dynamic_ncols=True) as bar:
        for name, texts in subsets_of(corpus, text_column):
            subset = Subset(name)
            subsets.append(subset)
            for text in fingerprint.wrap(texts):
                data = text.encode("utf-8", "surrogatepass")
                if splitmix64(mixed_seed ^ index) < threshold:
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
    return Split(
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


def read_split(path: Path) -> Iterable[str]:
    with open(path, "rb") as handle:
        while head := handle.read(8):
            yield handle.read(struct.unpack("<Q", head)[0]).decode("utf-8", "surrogatepass")
