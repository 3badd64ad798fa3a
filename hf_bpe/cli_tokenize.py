"""The checks and the Spark path of ``hf-bpe tokenize``, in the command line's words.

``tokenize_dataset`` names its Python keywords (``add_eos=False``, ``drop_last``); the command refuses the same
things first, naming its flags (``--no-eos``, ``--pad-last``). Kept beside :mod:`hf_bpe.cli`, which calls it.
"""

from __future__ import annotations

import argparse
import os

from .errors import InputError
from .integrations.preprocess import resolve_tokenizer, with_eos_token
from .model.bpe import BPEModel

__all__ = ["refuse_file_only_input", "tokenize_bin_files", "tokenize_model", "tokenize_spark"]


def tokenize_model(args: argparse.Namespace) -> BPEModel:
    """Load --model (with --eos-token as its EOS), refusing in the CLI's words what tokenize_dataset would refuse
    in Python's (``add_eos=False`` is ``--no-eos`` here)."""
    for flag, value, least in (("--block-size", args.block_size, 2), ("--num-proc", args.num_proc, 1)):
        if value is not None and value < least:
            raise InputError(f"{flag} must be at least {least}, got {value}")
    if args.dtype is not None and args.format != "bin":
        raise InputError(f"--dtype {args.dtype} applies to --format bin; --format arrow stores int32 ids")
    model = BPEModel.load(args.model)
    if args.eos_token is not None:
        if args.no_eos:
            raise InputError("--eos-token names the token to append and --no-eos appends none; give one of them")
        if args.eos_token not in model.special_tokens:
            raise InputError(f"--eos-token {args.eos_token!r:.80} is not a special token of --model {args.model!r}; "
                             f"its special tokens are {sorted(model.special_tokens)!r:.200} (hf-bpe train "
                             "--special-token T adds one)")
        model = with_eos_token(model, args.eos_token)
    _, eos_id, pad_id = resolve_tokenizer(model)
    if eos_id is None and not args.no_eos:
        if model.special_tokens:
            fix = f"name one of its special tokens with --eos-token (e.g. {next(iter(model.special_tokens))!r})"
        else:  # nothing to name: the model needs retraining with one
            fix = "it has no special token: train it with --eos-token T (e.g. '<|endoftext|>')"
        raise InputError(f"--model {args.model!r} has no EOS token to end each document with; {fix}, or pass "
                         "--no-eos")
    if args.pad_last and eos_id is None and pad_id is None:
        raise InputError("--pad-last pads the last block with the pad or EOS token, and --model has neither; give "
                         "--eos-token, or leave --pad-last out")
    return model


def tokenize_spark(args: argparse.Namespace, model: BPEModel) -> str:
    """Tokenize the FILEs with Apache Spark into a Parquet folder; return its path."""
    unsupported = [flag for flag, given in (("--dataset", args.dataset), ("--block-size", args.block_size is not None),
                                            ("--format bin", args.format == "bin"), ("--labels", args.labels),
                                            ("--pad-last", args.pad_last), ("--dtype", args.dtype),
                                            ("--num-proc", args.num_proc), ("--skip-empty", args.skip_empty),
                                            ("--separator", args.separator is not None)) if given]
    if unsupported:
        raise InputError(f"{', '.join(unsupported)} cannot be used with --spark, which writes one Parquet row of "
                         "input_ids per line of the FILEs (pack or convert them with your own Spark job)")
    if not args.files:
        raise InputError("--spark tokenizes FILE arguments (paths Spark's executors can read); give them")
    from .spark import tokenize_files_spark

    return tokenize_files_spark([os.fspath(f) for f in args.files], model, args.out, add_eos=not args.no_eos,
                                master=args.spark, force=args.force)


def tokenize_bin_files(args: argparse.Namespace, model: BPEModel, out: os.PathLike[str]) -> os.PathLike[str]:
    """Tokenize the FILEs straight into a token folder (``tokenize_files``: streamed, flat memory); return it."""
    from .integrations.file_tokenize import tokenize_files

    if args.separator is not None and not args.separator:
        raise InputError("--separator is empty; give the text that ends each document, e.g. '<|endoftext|>'")
    return tokenize_files(args.files, model, out, separator="\n" if args.separator is None else args.separator,
                          text_column=args.text_column, add_eos=not args.no_eos, skip_empty=args.skip_empty,
                          dtype=args.dtype, force=args.force, show_progress=not args.quiet)


def refuse_file_only_input(args: argparse.Namespace) -> None:
    """Refuse what only ``--format bin`` with FILEs reads: --separator, and .jsonl/.parquet FILEs, which the
    datasets path would read as lines of text."""
    from .integrations.file_tokenize import input_kind

    if args.separator is not None:
        raise InputError("--separator splits the FILEs of --format bin; --format arrow and --dataset read each line "
                         "(row) as a document")
    for path in args.files or ():
        if input_kind(path) != "text":
            raise InputError(f"FILE {path!r} is read by its column with --format bin only (--format arrow reads "
                             "FILEs as lines of text); use --format bin, or --dataset with a folder holding it")
