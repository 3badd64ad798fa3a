"""``hf-bpe compare``, ``verify`` and ``convert``: the tools' arguments and runs (the CLI module keeps the rest)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from .cli_support import TOKENIZER_CLASSES, add_corpus_arguments, check_out, corpus_of, default_corpus, log
from .errors import InputError

__all__ = ["add_compare_parser", "add_convert_parser", "add_verify_parser", "cmd_compare", "cmd_convert",
           "cmd_verify"]


def add_compare_parser(commands: Any) -> None:
    """Add the ``compare`` command to the CLI's subparsers."""
    from .tools.compare import PEERS

    compare = commands.add_parser(
        "compare",
        help="train hf_bpe and its peers on one corpus and report how they differ",
        description="Train hf_bpe, tokenizers' BpeTrainer and SentencePiece BPE on the same training split, compare "
        "them on a held-out split, and write DIR/report.json, DIR/report.md and DIR/report.png.",
        epilog="examples:\n  hf-bpe compare corpus.txt --vocab-size 32000 --out cmp\n"
        "  hf-bpe compare zh/*.txt --vocab-size 16000 --out cmp-zh --against tokenizers\n"
        "  hf-bpe compare corpus.txt --algorithm unigram --vocab-size 8000 --out cmp-unigram\n"
        "  hf-bpe compare --dataset ./my_dataset --split train --vocab-size 8000 --out cmp --force",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_corpus_arguments(compare, files_help="UTF-8 text files; each line is one document")
    compare.add_argument("--vocab-size", type=int, required=True, metavar="N", help="vocabulary size of every tokenizer")
    compare.add_argument("--out", required=True, metavar="DIR", help="report folder")
    compare.add_argument("--against", default=",".join(PEERS), metavar="PEERS",
                         help=f"comma-separated peers (default {','.join(PEERS)})")
    compare.add_argument("--heldout-fraction", type=float, default=0.1, metavar="F",
                         help="share of documents held out for evaluation (default 0.1)")
    compare.add_argument("--heldout-seed", type=int, default=0, metavar="S", help="seed of the held-out choice")
    compare.add_argument("--special-token", action="append", default=[], metavar="T", help="a special token (repeat)")
    compare.add_argument("--min-frequency", type=int, default=0, metavar="N", help="smallest pair count merged")
    compare.add_argument("--pattern", default="gpt2", metavar="NAME", help="hf_bpe pre-tokenizer pattern")
    compare.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                         help="load an already-trained model instead of training (hf_bpe, tokenizers, sentencepiece)")
    compare.add_argument("--workers", type=int, default=None, metavar="N", help="hf_bpe counting processes")
    compare.add_argument("--algorithm", choices=("bpe", "unigram"), default="bpe",
                         help="bpe (default): byte-level BPE, equal to tokenizers' BpeTrainer, metrics against "
                         "SentencePiece BPE; unigram: identical to spm_train --model_type=unigram, metrics against "
                         "tokenizers' UnigramTrainer")
    compare.add_argument("--num-threads", type=int, default=16, metavar="N",
                         help="unigram: spm_train's num_threads for hf_bpe and sentencepiece (default 16, spm_train's; "
                         "the model depends on it)")
    compare.add_argument("--peer-timeout", type=float, default=3600.0, metavar="SECONDS",
                         help="time limit of each trainer (default 3600); one still running is reported as timed out")
    compare.add_argument("--force", action="store_true", help="replace an existing report in DIR")
    compare.add_argument("--quiet", action="store_true", help="no progress on stderr")


def add_verify_parser(commands: Any) -> None:
    """Add the ``verify`` command to the CLI's subparsers."""
    verify = commands.add_parser(
        "verify",
        help="check a tokenizer folder against its manifest, and retrain from the corpus",
        description="Check a tokenizer folder against its hf_bpe_manifest.json; with the corpus, retrain and "
        "confirm the output is byte-identical. Exit status 0 only when everything matches.",
        epilog="examples:\n  hf-bpe verify my-tok\n  hf-bpe verify my-tok --corpus corpus.txt\n"
        "  hf-bpe verify my-tok --dataset ./my_dataset --split train --text-column text",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("directory", metavar="DIR", help="a tokenizer folder written by hf-bpe train or extend")
    verify.add_argument("--corpus", nargs="+", metavar="FILE", help="the training text files, in the same order")
    verify.add_argument("--dataset", metavar="DIR", help="the training dataset (a save_to_disk folder or a folder of "
                        "data files)")
    verify.add_argument("--split", default="train", metavar="S", help="dataset split (default train)")
    verify.add_argument("--text-column", default="text", metavar="C", help="dataset text column (default text)")
    verify.add_argument("--workers", type=int, default=None, metavar="N", help="processes for retraining")
    verify.add_argument("--quiet", action="store_true", help="no progress bars")


def add_convert_parser(commands: Any) -> None:
    """Add the ``convert`` command to the CLI's subparsers."""
    from .core.patterns import PATTERNS
    from .tools.convert import FORMATS

    convert = commands.add_parser(
        "convert",
        help="convert between .tiktoken files, GPT-2 files and tokenizer.json; SentencePiece BPE and unigram "
             "models to tokenizer.json",
        description="Convert a byte-level BPE tokenizer between tiktoken files, GPT-2 files "
        "(vocab.json + merges.txt) and tokenizer.json; or a SentencePiece BPE or unigram .model into a Hugging Face "
        "folder (tokenizer.json, configs) that encodes exactly as sentencepiece does.",
        epilog="examples:\n  hf-bpe convert cl100k_base.tiktoken --to gpt2 --out cl100k --pattern gpt4\n"
        "  hf-bpe convert my-tok --to tiktoken --out my-tok-tiktoken\n"
        "  hf-bpe convert llama2/tokenizer.model --to tokenizers --out llama2-hf",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("src", metavar="SRC", help="a .tiktoken file, a GPT-2 folder (or file of the pair), a "
                         "tokenizer.json (or its folder), or a SentencePiece .model; the format is detected")
    convert.add_argument("--to", required=True, choices=FORMATS, help="the output format")
    convert.add_argument("--out", required=True, metavar="DIR", help="output folder (created when absent)")
    convert.add_argument("--pattern", default=None, metavar="NAME",
                         help=f"pre-tokenizer when SRC does not say: {', '.join(PATTERNS)}, or a regex "
                              "(required for .tiktoken files other than OpenAI's)")
    convert.add_argument("--tokenizer-class", choices=TOKENIZER_CLASSES, default=None,
                         help="the class tokenizer_config.json names (--to gpt2, or a SentencePiece .model): "
                              "PreTrainedTokenizerFast by default (loads everywhere); HFBPETokenizer or "
                              "HFSentencePieceTokenizer: hf_bpe's classes")
    convert.add_argument("--force", action="store_true", help="replace existing output files")


def cmd_compare(args: argparse.Namespace) -> int:
    """Run ``hf-bpe compare``."""
    from .tools.compare import compare, summary

    check_out(args.out)
    models = {}
    for item in args.model:
        name, sep, path = item.partition("=")
        if not sep or not path:
            raise InputError(f"--model {item!r}: expected NAME=PATH, e.g. --model sentencepiece=sp.model")
        models[name] = path
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        corpus = default_corpus("comparing")
    started = time.perf_counter()
    report = compare(corpus, vocab_size=args.vocab_size, out=args.out, against=args.against,
                     heldout_fraction=args.heldout_fraction, heldout_seed=args.heldout_seed,
                     special_tokens=args.special_token, min_frequency=args.min_frequency, pattern=args.pattern,
                     text_column=args.text_column, models=models, workers=args.workers,
                     peer_timeout=args.peer_timeout, algorithm=args.algorithm, num_threads=args.num_threads,
                     show_progress=not args.quiet, force=args.force)
    out = Path(args.out)
    for name in ("report.json", "report.md", "report.png"):
        print(os.fspath(out / name))
    log(f"{summary(report)} ({time.perf_counter() - started:.1f} s)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Run ``hf-bpe verify``."""
    from .tools.verify import verify

    corpus = corpus_of(args, args.corpus, what="--corpus FILE ...")
    report = verify(args.directory, corpus=corpus, text_column=args.text_column, workers=args.workers,
                    show_progress=not args.quiet)
    sys.stdout.write(report.format())
    return 0 if report.ok else 1


def cmd_convert(args: argparse.Namespace) -> int:
    """Run ``hf-bpe convert``."""
    from .integrations.sentencepiece_hf import missing_tokenizer_json
    from .tools.convert import convert

    check_out(args.out)
    folder = convert(args.src, to=args.to, out=args.out, pattern=args.pattern, force=args.force,
                     tokenizer_class=args.tokenizer_class)
    log(f"wrote {args.to} files to {os.fspath(folder)}")
    if note := missing_tokenizer_json(folder):
        log(note)
    return 0
