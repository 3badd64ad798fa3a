"""``hf-bpe train --algorithm parity``: its arguments and its run (parity-aware BPE, :func:`hf_bpe.train_parity`).

The train command's parser gets the parity options here; ``cli.py`` only hands the parsed arguments over.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli_support import check_out_folder
from .errors import InputError

__all__ = ["add_parity_arguments", "cmd_train_parity", "parity_flags_given"]

_PARITY_FLAGS = (("--language", "language"), ("--dev", "dev"), ("--ratio", "ratio"), ("--variant", "variant"),
                 ("--window-size", "window_size"), ("--alpha", "alpha"), ("--global-merges", "global_merges"),
                 ("--total-symbols", "total_symbols"), ("--seen-bytes-only", "seen_bytes_only"))


def add_parity_arguments(train: argparse.ArgumentParser) -> None:
    """Add the options of ``--algorithm parity`` to the train command's parser (all default to "not given")."""
    group = train.add_argument_group("--algorithm parity (parity-aware BPE, equal to tokenizers' ParityBpeTrainer)")
    group.add_argument("--language", action="append", default=None, metavar="NAME=FILE",
                       help="a language's training text (repeat per language and per file; the order of first "
                            "mention breaks ties)")
    group.add_argument("--dev", action="append", default=None, metavar="NAME=FILE",
                       help="a language's development text (ideally parallel): the language whose dev text takes "
                            "the most tokens gets the next merge")
    group.add_argument("--ratio", action="append", default=None, metavar="NAME=R",
                       help="a language's target compression rate, instead of --dev")
    group.add_argument("--variant", choices=("base", "window"), default=None,
                       help="base (default) or window (a language waits after alpha/languages of the last "
                            "--window-size merges)")
    group.add_argument("--window-size", type=int, default=None, metavar="N", help="window variant (default 100)")
    group.add_argument("--alpha", type=float, default=None, metavar="A", help="window variant (default 2.0)")
    group.add_argument("--global-merges", type=int, default=None, metavar="N",
                       help="plain BPE merges on all languages summed, before parity (default 0)")
    group.add_argument("--total-symbols", action="store_true", default=None,
                       help="--num-merges counts the whole vocabulary (specials and alphabet taken off)")
    group.add_argument("--seen-bytes-only", action="store_true", default=None,
                       help="an alphabet of the bytes seen (ParityBpeTrainer's default) instead of all 256 (its "
                            "initial_alphabet=ByteLevel.alphabet()); the folder then loads with missing_bytes='allow'")


def parity_flags_given(args: argparse.Namespace) -> list[str]:
    """Return the parity options given on the command line (they need ``--algorithm parity``)."""
    return [flag for flag, name in _PARITY_FLAGS if getattr(args, name, None) is not None]


def _pairs(items: list[str] | None, flag: str, *, many: bool) -> dict[str, list[str]]:
    """Parse NAME=VALUE items into name -> values, in order of first mention.

    >>> _pairs(["hi=a.txt", "en=b.txt", "hi=c.txt"], "--language", many=True)
    {'hi': ['a.txt', 'c.txt'], 'en': ['b.txt']}
    """
    out: dict[str, list[str]] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise InputError(f"{flag} {item!r}: expected NAME=VALUE, e.g. {flag} en=en.txt")
        if name in out and not many:
            raise InputError(f"{flag} {item!r}: {name!r} is given twice")
        out.setdefault(name, []).append(value)
    return out


def _files(items: list[str] | None, flag: str) -> dict[str, list[Path]]:
    files = {name: [Path(v) for v in values] for name, values in _pairs(items, flag, many=True).items()}
    for paths in files.values():
        for path in paths:
            if not path.is_file():
                raise InputError(f"{flag}: {str(path)!r} is not a file")
    return files


def cmd_train_parity(args: argparse.Namespace, *, finish: Callable[..., int]) -> int:
    """Run ``hf-bpe train --algorithm parity``; ``finish`` writes the folder and logs as ``hf-bpe train`` does."""
    from .training.parity.parity import train_parity

    unsupported = [flag for flag, given in (
        ("FILE arguments", args.files), ("--dataset", args.dataset), ("--counts", args.counts),
        ("--spark", args.spark), ("--recipe", args.recipe is not None), ("--vocab-size", args.vocab_size is not None),
        ("--max-token-length", args.max_token_length is not None), ("--lowercase", args.lowercase),
        ("--spm", args.spm),
        *((f"--{role}-token", getattr(args, f"{role}_token") is not None) for role in ("bos", "eos", "unk", "pad")),
    ) if given]
    if unsupported:
        raise InputError(f"{', '.join(unsupported)} cannot be used with --algorithm parity; give each language's "
                         "text with --language NAME=FILE and the size with --num-merges")
    if not args.language:
        raise InputError("--algorithm parity needs --language NAME=FILE for each language (at least one)")
    if args.num_merges is None:
        raise InputError("--algorithm parity needs --num-merges N")
    out = check_out_folder(args.out, args.force)
    languages = _files(args.language, "--language")
    dev = _files(args.dev, "--dev") if args.dev else None
    ratio = None
    if args.ratio:
        ratio = {}
        for name, (value,) in _pairs(args.ratio, "--ratio", many=False).items():
            try:
                ratio[name] = float(value)
            except ValueError:
                raise InputError(f"--ratio {name}={value!r}: expected a number, e.g. --ratio {name}=1.5") from None
    options: dict[str, Any] = {
        name: getattr(args, name) for _, name in _PARITY_FLAGS[3:-1] if getattr(args, name) is not None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = train_parity(languages, dev=dev, ratio=ratio, num_merges=args.num_merges,
                             min_frequency=args.min_frequency or 0, special_tokens=args.special_token,
                             all_bytes=not args.seen_bytes_only, pattern=args.pattern,
                             add_prefix_space=args.add_prefix_space, workers=args.workers,
                             show_progress=not args.quiet, **options)
    return finish(model, caught, out, args.force, tokenizer_class=args.tokenizer_class)
