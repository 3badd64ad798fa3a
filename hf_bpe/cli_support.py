"""What every ``hf-bpe`` command shares: its log line, the corpus arguments, the checks of --out and the corpus.

Kept beside :mod:`hf_bpe.cli` (which stays under the size limit); nothing here imports a heavy library at import time.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InputError
from .formats.hf_config import SENTENCEPIECE_CLASS, SHARING_TOKENIZER_CLASS, TOKENIZER_CLASS

__all__ = ["TOKENIZER_CLASSES", "add_corpus_arguments", "check_out", "corpus_of", "default_corpus", "log"]

# What --tokenizer-class offers (train, convert, extend): the class a folder's tokenizer_config.json names.
TOKENIZER_CLASSES = (SHARING_TOKENIZER_CLASS, TOKENIZER_CLASS, SENTENCEPIECE_CLASS)


def log(message: str) -> None:
    """Write one ``hf-bpe: ...`` line to stderr (progress and logs; data goes to stdout)."""
    print(f"hf-bpe: {message}", file=sys.stderr)


def add_corpus_arguments(parser: argparse.ArgumentParser, *, files_help: str) -> None:
    """Add FILE..., --dataset, --split and --text-column to a command's parser."""
    parser.add_argument("files", nargs="*", metavar="FILE", help=files_help)
    parser.add_argument("--dataset", metavar="DIR", help="a local folder: saved with Dataset.save_to_disk, or of data "
                        "files (csv, json, parquet, txt); nothing is downloaded")
    parser.add_argument("--split", default="train", metavar="S", help="dataset split (default train)")
    parser.add_argument("--text-column", default="text", metavar="C", help="dataset text column (default text)")


def check_out(value: str, what: str = "--out") -> Path:
    """Refuse an --out that can never be written, before any long work: empty, or under a file."""
    if not value.strip():
        raise InputError(f"{what} is empty ({value!r}); give the path to write to, e.g. {what} my-tok")
    out = Path(value)
    if out.is_symlink() and not out.exists():
        raise InputError(f"{what} {value!r} is a symbolic link to {os.readlink(out)!r}, which does not exist (or "
                         "loops); create the folder it names, or remove the link")
    for folder in out.parents:
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise InputError(f"{what} {value!r}: {os.fspath(folder)!r} is a file, not a folder; choose a path "
                                 "whose parent folders are folders")
            break
    return out


def check_out_folder(value: str, force: bool) -> Path:
    """Refuse, before any long work, an --out that is a file or already holds a file a tokenizer save writes."""
    from .model.bpe import SAVED_FILES

    out = check_out(value)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {value!r} exists and is not a folder")
    existing = [n for n in SAVED_FILES if (out / n).exists()]
    if existing and not force:
        raise InputError(f"{value!r} already holds {', '.join(existing)}; pass --force to replace them")
    return out


def corpus_of(args: argparse.Namespace, files: Sequence[str] | None, *, what: str) -> Any:
    """Return the corpus named by FILE arguments or --dataset, or None when neither is given."""
    from .training.corpus import check_corpus_files, load_dataset

    if files and args.dataset:
        raise InputError(f"give either {what} or --dataset, not both")
    if files:
        check_corpus_files(files)  # a missing, empty or binary file is one error line, before any progress bar
        return [Path(f) for f in files]
    if args.dataset:
        return load_dataset(args.dataset, args.split)
    return None


def default_corpus(doing: str) -> Any:
    """Return the embedded default corpus, saying so on stderr."""
    from .training.corpus import default_corpus as embedded, describe_default_corpus

    log(f"no corpus given: {doing} on the embedded default corpus, {describe_default_corpus()}, loaded through "
        "datasets")
    return embedded()
