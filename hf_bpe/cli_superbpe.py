"""``hf-bpe train --algorithm superbpe``: its arguments and the checks of its options (the train command runs it).

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_superbpe_arguments(parser)
>>> parser.parse_args(["--transition", "6000"]).transition
6000
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

from .errors import InputError

__all__ = ["add_superbpe_arguments", "superbpe_trainer"]


def add_superbpe_arguments(train: argparse.ArgumentParser) -> None:
    """Add the options of ``--algorithm superbpe`` to the train command."""
    train.add_argument("--transition", type=int, default=None, metavar="T",
                       help="with --algorithm superbpe: the vocabulary size where stage 1 (plain BPE) stops and "
                            "stage 2 (superwords across spaces) starts, e.g. 0.8 x --vocab-size")
    train.add_argument("--max-words", type=int, default=4, metavar="N",
                       help="with --algorithm superbpe: most words a superword may span (default 4, as the authors; "
                            "0: no limit)")


def superbpe_trainer(args: argparse.Namespace) -> Callable[..., Any]:
    """Return ``train_superbpe`` with the superbpe options of ``args``, after refusing what does not apply."""
    unsupported = [flag for flag, given in (("--counts", args.counts), ("--spark", args.spark),
                                            ("--recipe", args.recipe is not None)) if given]
    if unsupported:
        raise InputError(f"{', '.join(unsupported)} cannot be used with --algorithm superbpe: it reads the corpus "
                         "twice (once per stage); give FILE arguments or --dataset")
    if args.transition is None or args.vocab_size is None:
        raise InputError("--algorithm superbpe needs --vocab-size V and --transition T (T <= V, e.g. "
                         "--vocab-size 32000 --transition 25000)")
    if args.max_words < 0:
        raise InputError(f"--max-words must be >= 0 (0: no limit), got {args.max_words}")
    from .training.bpe.superbpe import train_superbpe

    return functools.partial(train_superbpe, transition=args.transition, max_words=args.max_words or None)
