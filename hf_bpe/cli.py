"""The ``hf-bpe`` command: train, encode, decode, compare, verify, convert, extend, evaluate.

The CLI only parses arguments, calls the library and turns its errors into messages. Data goes to stdout, progress
and logs to stderr. A user error exits with status 2 and one line ``hf-bpe: error: ...``, never a traceback; an
interrupt exits with 130. Heavy libraries are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .core.interrupts import interrupts_held
from .cli_evaluate import add_evaluate_parser, cmd_evaluate
from .cli_extend import add_extend_parser, cmd_extend
from .cli_parity import add_parity_arguments, cmd_train_parity, parity_flags_given
from .cli_superbpe import add_superbpe_arguments, superbpe_trainer
from .cli_tools import (add_compare_parser, add_convert_parser, add_verify_parser, cmd_compare, cmd_convert,
                        cmd_verify)
from .cli_support import (TOKENIZER_CLASSES, add_corpus_arguments, check_out, check_out_folder, corpus_of,
                          default_corpus, log)
from .errors import USER_ERRORS, InputError

__all__ = ["ALGORITHMS", "main"]

# train --algorithm's names -> the spm_train model_type they train (None: not SentencePiece; "": the older spelling
# "sentencepiece", whose model_type comes from --spm, BPE by default). compare --algorithm takes bpe and unigram too.
ALGORITHMS = {"bpe": None, "unigram": "unigram", "sentencepiece-bpe": "bpe", "superbpe": None, "parity": None,
              "sentencepiece": ""}

_EXAMPLES = """\
examples:
  hf-bpe train --out my-tok                         # embedded default corpus (Python stdlib)
  hf-bpe train corpus.txt --vocab-size 32000 --out my-tok --eos-token '<|endoftext|>'
  hf-bpe train --dataset ./my_dataset --split train --text-column text --out my-tok --force
  hf-bpe train corpus.txt --out my-tok --tokenizer-class HFBPETokenizer   # AutoTokenizer builds hf_bpe's class
  hf-bpe count shard1.txt --out shard1.parquet      # count shards anywhere, then train from their sum:
  hf-bpe train --counts shard*.parquet --vocab-size 32000 --out my-tok
  hf-bpe train part-*.txt --spark local[2] --vocab-size 32000 --out my-tok    # count with Apache Spark
  hf-bpe train corpus.txt --algorithm sentencepiece-bpe --vocab-size 8000 --out spm-tok --spm byte_fallback=true
  hf-bpe train corpus.txt --algorithm unigram --vocab-size 8000 --out uni-tok    # as spm_train (and compare)
  hf-bpe train corpus.txt --algorithm unigram --out uni-tok --tokenizer-class HFSentencePieceTokenizer
  hf-bpe train corpus.txt --algorithm superbpe --vocab-size 32000 --transition 25000 --out super-tok
  hf-bpe train --algorithm parity --language en=en.txt --language hi=hi.txt --ratio en=1 --ratio hi=2.57 \\
      --num-merges 32000 --out parity-tok   # parity-aware BPE, as tokenizers' ParityBpeTrainer (or --dev NAME=FILE)
  hf-bpe extend my-tok new-domain.txt --new-tokens 5000 --out my-tok-ext   # every existing id kept; prints a report
  hf-bpe encode --model my-tok 'Hello world'
  cat lines.txt | hf-bpe encode --model my-tok > ids.txt
  hf-bpe tokenize --model my-tok corpus.txt --out ids --block-size 1024   # a datasets folder of packed blocks
  hf-bpe tokenize --model my-tok corpus.txt --out ids-bin --format bin    # tokens.bin for numpy.memmap
  hf-bpe tokenize --model my-tok docs.txt --separator '<|endoftext|>' --out ids-bin --format bin
  hf-bpe tokenize --model my-tok part-*.txt --out ids-parquet --spark local[2]   # Parquet, with Spark
  hf-bpe compare corpus.txt --vocab-size 32000 --out report --against tokenizers,sentencepiece
  hf-bpe evaluate my-tok gpt2.tiktoken --text en=en.txt --text fi=fi.txt --out eval   # bytes/token, parity, html
  hf-bpe compare corpus.txt --algorithm unigram --vocab-size 8000 --out uni-report
  hf-bpe verify my-tok --corpus corpus.txt
  hf-bpe convert cl100k_base.tiktoken --to gpt2 --out cl100k --pattern gpt4
  hf-bpe train corpus.en --recipe subword-nmt --num-merges 10000 --out nmt   # writes nmt/bpe.codes
  hf-bpe apply --model nmt corpus.en > corpus.bpe.en                          # as subword-nmt apply-bpe
  hf-bpe decode --model my-tok < ids.txt                    # the ids encode wrote, as text
"""

_RAW = argparse.RawDescriptionHelpFormatter


def _build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Return the parser of every command, or (``only``) one with just that command's subparser among the ones
    that import modules to list their choices (compare, convert, ...): a run of one command need not pay them."""
    from .training.bpe.trainer import DEFAULT_VOCAB_SIZE

    parser = argparse.ArgumentParser(
        prog="hf-bpe",
        description="Train byte-level BPE tokenizers equal to tokenizers' BpeTrainer, and use them.",
        epilog=_EXAMPLES,
        formatter_class=_RAW,
    )
    parser.add_argument("--version", action="version", version=f"hf-bpe {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train", help="train a tokenizer into a folder (vocab.json, merges.txt, tokenizer.json, configs)",
        epilog=_EXAMPLES, formatter_class=_RAW,
    )
    add_corpus_arguments(train, files_help="UTF-8 text files; each line is one sequence")
    train.add_argument("--spark", metavar="MASTER", default=None,
                       help="count FILEs with Apache Spark (e.g. local[2], spark://host:7077); needs "
                            "pip install 'hf_bpe[spark]' and Java 17")
    train.add_argument("--counts", nargs="+", metavar="PARQUET", help="train from pre-token counts (files written by "
                       "hf-bpe count, added together) instead of a corpus")
    train.add_argument("--out", required=True, metavar="DIR", help="output folder")
    train.add_argument("--vocab-size", type=int, default=None, metavar="N",
                       help=f"final vocabulary size, specials and 256 bytes included (default {DEFAULT_VOCAB_SIZE})")
    train.add_argument("--min-frequency", type=int, default=None, metavar="N",
                       help="smallest pair count still merged (default 0; subword-nmt recipe: 2)")
    train.add_argument("--special-token", action="append", default=[], metavar="T",
                       help="a special token (repeat for several); they get the first ids")
    for role in ("bos", "eos", "unk", "pad"):
        train.add_argument(f"--{role}-token", default=None, metavar="T",
                           help=f"give special token T the {role} role for transformers (added if not listed)")
    train.add_argument("--pattern", default="gpt2", metavar="NAME",
                       help="pre-tokenizer: gpt2 (default), gpt4, o200k, llama3, qwen2, or a regex")
    train.add_argument("--add-prefix-space", action="store_true", help="prepend a space to each sequence")
    train.add_argument("--max-token-length", type=int, default=None, metavar="N", help="longest token in bytes")
    train.add_argument("--workers", type=int, default=None, metavar="N",
                       help="counting threads (named patterns) or processes (custom regex); default: every CPU")
    train.add_argument("--corpus-order", choices=("sequence", "multiset"), default="sequence",
                       help="fingerprint the corpus as an ordered sequence (default) or an order-free multiset")
    train.add_argument("--force", action="store_true", help="replace hf_bpe's files in an existing --out folder")
    train.add_argument("--tokenizer-class", choices=TOKENIZER_CLASSES, default=None,
                       help="the class tokenizer_config.json names for AutoTokenizer: PreTrainedTokenizerFast "
                            "(default: the folder loads with the same ids everywhere, transformers 4.x and 5.x, "
                            "with or without hf_bpe) or hf_bpe's class, HFBPETokenizer (byte-level BPE) or "
                            "HFSentencePieceTokenizer (--algorithm unigram or sentencepiece-bpe; the default there "
                            "when the folder gets no tokenizer.json): the folder then needs hf_bpe imported "
                            "wherever it loads")
    train.add_argument("--for-sharing", action="store_true",
                       help="the default now (tokenizer_class PreTrainedTokenizerFast); kept for old scripts")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.add_argument("--algorithm", choices=tuple(ALGORITHMS), default="bpe",
                       metavar="{bpe,unigram,sentencepiece-bpe,superbpe,parity}",
                       help="bpe: byte-level BPE equal to tokenizers (default); unigram: equal to spm_train "
                            "--model_type=unigram; sentencepiece-bpe: equal to spm_train --model_type=bpe (both write "
                            "tokenizer.model + exact tokenizer.json; bpe and unigram as compare --algorithm names "
                            "them; the older spelling sentencepiece, with --spm model_type=unigram for unigram, still "
                            "works); superbpe: BPE up to --transition, then superwords across spaces "
                            "(docs/guides/superbpe.md); parity: parity-aware BPE over --language corpora, equal to "
                            "tokenizers' ParityBpeTrainer")
    add_superbpe_arguments(train)
    train.add_argument("--spm", action="append", default=[], metavar="KEY=VALUE",
                       help="with --algorithm unigram or sentencepiece-bpe: an spm_train option by its own name, e.g. "
                            "character_coverage=1.0, byte_fallback=true, user_defined_symbols=<a>,<b>")
    _add_recipe_arguments(train)
    add_parity_arguments(train)

    count = commands.add_parser(
        "count", help="count a corpus's pre-tokens into a Parquet file (to add shards and train from the sum)",
        epilog=_EXAMPLES, formatter_class=_RAW,
    )
    add_corpus_arguments(count, files_help="UTF-8 text files; each line is one sequence")
    count.add_argument("--out", required=True, metavar="FILE", help="the counts file to write (Parquet)")
    count.add_argument("--pattern", default="gpt2", metavar="NAME",
                       help="pre-tokenizer: gpt2 (default), gpt4, o200k, llama3, qwen2, or a regex")
    count.add_argument("--add-prefix-space", action="store_true", help="prepend a space to each sequence")
    count.add_argument("--workers", type=int, default=None, metavar="N",
                       help="counting threads (named patterns) or processes (custom regex); default: every CPU")
    count.add_argument("--force", action="store_true", help="replace an existing counts file")
    count.add_argument("--quiet", action="store_true", help="no progress bars")

    encode = commands.add_parser("encode", help="print token ids of TEXT, or of each stdin line",
                                 epilog=_EXAMPLES, formatter_class=_RAW)
    encode.add_argument("--model", required=True, metavar="DIR",
                        help="a folder written by hf-bpe train (byte-level BPE; or SentencePiece, with "
                             "tokenizer.model: read by sentencepiece itself)")
    encode.add_argument("text", nargs="?", metavar="TEXT", help="text to encode (default: each line of stdin)")
    encode.add_argument("--split-special-tokens", action="store_true",
                        help="encode special-token text as ordinary text (byte-level folders; sentencepiece never "
                             "reads control symbols from the text)")

    decode = commands.add_parser("decode", help="print the text of token ids (arguments, or one line of ids per "
                                 "stdin line)", epilog=_EXAMPLES, formatter_class=_RAW)
    decode.add_argument("--model", required=True, metavar="DIR",
                        help="a folder written by hf-bpe train (byte-level BPE or SentencePiece)")
    decode.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: stdin)")

    for name, add in (("apply", _add_apply_parser), ("tokenize", _add_tokenize_parser),
                      ("compare", add_compare_parser), ("verify", add_verify_parser),
                      ("convert", add_convert_parser), ("extend", add_extend_parser),
                      ("evaluate", add_evaluate_parser)):
        if only is None or only == name:
            add(commands)
    return parser


def _add_recipe_arguments(train: argparse.ArgumentParser) -> None:
    from .training.classic.recipe_table import RECIPES

    train.add_argument("--recipe", default=None, metavar="NAME",
                       help=f"reproduce a published trainer exactly: {', '.join(RECIPES)}")
    train.add_argument("--num-merges", type=int, default=None, metavar="N",
                       help="with --recipe: merges to learn, where the system counts merges (subword-nmt -s, minbpe)")
    train.add_argument("--lowercase", action="store_true", help="with --recipe wordpiece: BERT's uncased setup")


def _add_tokenize_parser(commands: Any) -> None:
    tokenize = commands.add_parser(
        "tokenize", help="tokenize a corpus for training: a datasets folder (arrow) or a flat token file (bin)",
        description="Tokenize every document (each line of FILE, or each row of --dataset) with the tokenizer in "
        "--model, EOS after each, and write OUT whole: --format arrow, a datasets folder (load_from_disk) of "
        "input_ids/attention_mask rows, one per document or --block-size packed blocks; --format bin, "
        "OUT/tokens.bin (uint16 or uint32 ids, end to end, for numpy.memmap), OUT/offsets.bin (int64 document "
        "offsets) and OUT/tokens.json (the tokenizer's sha256). The tokenizing is cached by datasets: a rerun reuses "
        "it; --format bin with FILEs streams them instead (flat memory; .jsonl and .parquet FILEs by --text-column).",
        epilog="examples:\n  hf-bpe tokenize --model my-tok corpus.txt --out corpus-ids --block-size 1024\n"
        "  hf-bpe tokenize --model my-tok --dataset ./my_dataset --split train --out train-bin --format bin\n"
        "  python -c \"import numpy; print(numpy.memmap('train-bin/tokens.bin', dtype='uint16', mode='r')[:10])\"",
        formatter_class=_RAW,
    )
    tokenize.add_argument("--model", required=True, metavar="DIR", help="a tokenizer folder")
    add_corpus_arguments(tokenize, files_help="UTF-8 text files; each line is one document")
    tokenize.add_argument("--out", required=True, metavar="OUT", help="output folder (created whole)")
    tokenize.add_argument("--format", choices=("arrow", "bin"), default="arrow", help="output format (default arrow)")
    tokenize.add_argument("--block-size", type=int, default=None, metavar="N",
                          help="arrow: pack documents into rows of exactly N ids (the last partial block is dropped)")
    tokenize.add_argument("--pad-last", action="store_true", help="pad the last partial block instead of dropping it")
    tokenize.add_argument("--labels", action="store_true", help="arrow: add labels equal to input_ids")
    tokenize.add_argument("--eos-token", default=None, metavar="T", help="the special token to append to each "
                          "document (default: the tokenizer's eos_token, e.g. set by hf-bpe train --eos-token)")
    tokenize.add_argument("--no-eos", action="store_true", help="do not append the EOS id to each document")
    tokenize.add_argument("--skip-empty", action="store_true",
                          help="leave out empty documents (blank lines), which would each become a lone EOS")
    tokenize.add_argument("--separator", default=None, metavar="S",
                          help="bin: documents of text FILEs end at S (left out; EOS appended) instead of at each "
                               "newline, e.g. '<|endoftext|>' ($'\\n\\n' in bash for blank lines)")
    tokenize.add_argument("--dtype", choices=("uint16", "uint32"), default=None,
                          help="bin: id type (default: uint16 when every id fits, else uint32)")
    tokenize.add_argument("--num-proc", type=int, default=None, metavar="N", help="processes for datasets.map")
    tokenize.add_argument("--force", action="store_true", help="replace an existing OUT")
    tokenize.add_argument("--quiet", action="store_true", help="no progress bars")
    tokenize.add_argument("--spark", metavar="MASTER", default=None,
                          help="tokenize FILEs with Apache Spark (e.g. local[2], spark://host:7077) into a Parquet "
                               "folder with an input_ids column; needs pip install 'hf_bpe[spark]' and Java 17")


def _add_apply_parser(commands: Any) -> None:
    apply = commands.add_parser(
        "apply", help="segment text with a subword-nmt model (@@ marks), as subword-nmt apply-bpe does",
        epilog=_EXAMPLES, formatter_class=_RAW,
    )
    apply.add_argument("--model", required=True, metavar="DIR", help="a folder written by hf-bpe train --recipe")
    apply.add_argument("file", nargs="?", metavar="FILE", help="UTF-8 text to segment (default: stdin)")


def _cmd_train_sentencepiece(args: argparse.Namespace) -> int:
    from .integrations.sentencepiece_hf import missing_tokenizer_json, save_sentencepiece
    from .training.sentencepiece.bpe import parse_spm_options
    from .training.sentencepiece.trainer import train_sentencepiece
    from .training.unigram.train import train_unigram

    unsupported = [flag for flag, given in (
        ("--counts", args.counts), ("--spark", args.spark), ("--recipe", args.recipe is not None),
        ("--min-frequency", args.min_frequency is not None), ("--special-token", args.special_token),
        ("--pattern", args.pattern != "gpt2"), ("--add-prefix-space", args.add_prefix_space),
        ("--max-token-length", args.max_token_length is not None), ("--for-sharing", args.for_sharing),
        ("--tokenizer-class HFBPETokenizer", args.tokenizer_class == "HFBPETokenizer"),
        *((f"--{role}-token", getattr(args, f"{role}_token") is not None) for role in ("bos", "eos", "unk", "pad")),
    ) if given]
    if unsupported:
        raise InputError(f"{', '.join(unsupported)} cannot be used with --algorithm {args.algorithm}; give "
                         "SentencePiece's own options with --spm KEY=VALUE (e.g. --spm control_symbols=<sep>)")
    out = check_out(args.out)
    if out.exists() and any((out / name).exists() for name in ("tokenizer.model", "tokenizer.json")) \
            and not args.force:
        raise InputError(f"{args.out!r} already holds a tokenizer; pass --force to replace it")
    try:
        options = parse_spm_options(args.spm)
    except ValueError as exc:
        raise InputError(f"--spm {exc}") from None
    wanted = ALGORITHMS[args.algorithm]
    if wanted:
        given = options.get("model_type", wanted)
        if given != wanted:
            raise InputError(f"--algorithm {args.algorithm} trains model_type={wanted}, but --spm model_type={given} "
                             f"was given: leave out --spm model_type, or use --algorithm "
                             f"{'unigram' if given == 'unigram' else 'sentencepiece-bpe'}")
        options["model_type"] = wanted
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        raise InputError(f"--algorithm {args.algorithm} needs a corpus: FILE arguments or --dataset")
    if isinstance(corpus, list):
        corpus = [Path(p) for p in corpus]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = train_unigram if options.get("model_type") == "unigram" else train_sentencepiece
        model = trainer(corpus, vocab_size=args.vocab_size or 8000, text_column=args.text_column,
                        show_progress=not args.quiet, **options)
    for warning in caught:  # e.g. sentences skipped for max_sentence_length
        log(f"warning: {warning.message}")
    try:
        folder = save_sentencepiece(model, out, force=args.force, tokenizer_class=args.tokenizer_class)
    except ValueError as exc:  # PreTrainedTokenizerFast asked for a model that gets no tokenizer.json
        raise InputError(f"--tokenizer-class: {exc}") from None
    log(f"wrote a SentencePiece {model.model_type} model of {len(model.pieces)} pieces to {os.fspath(folder)}")
    if note := missing_tokenizer_json(folder):
        log(note)
    return 0


def _cmd_train_recipe(args: argparse.Namespace) -> int:
    from .model.classic import CLASSIC_NAME
    from .training.bpe.trainer import check_recipe_options
    from .training.classic.train import train_classic

    out = check_out(args.out)
    # Refuse before training what the atomic write would refuse after it.
    if (out / CLASSIC_NAME).exists() and not args.force:
        raise InputError(f"{args.out!r} already holds a model ({CLASSIC_NAME}); pass --force to replace it")
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        raise InputError(f"--recipe {args.recipe} needs a corpus: FILE arguments or --dataset")
    check_recipe_options(args.recipe, _roles(args), {
        "pattern": args.pattern, "add_prefix_space": args.add_prefix_space, "max_token_length": args.max_token_length,
        "workers": args.workers, "corpus_order": args.corpus_order})
    model = train_classic(corpus, recipe=args.recipe, vocab_size=args.vocab_size, num_merges=args.num_merges,
                          min_frequency=args.min_frequency, special_tokens=args.special_token or None,
                          lowercase=args.lowercase, text_column=args.text_column, show_progress=not args.quiet)
    folder = model.save(out, force=args.force)
    log(f"wrote {args.recipe}: {len(model.tokens)} tokens and {len(model.merges)} merges to {os.fspath(folder)}")
    return 0


def _cmd_tokenize(args: argparse.Namespace) -> int:
    from .cli_tokenize import refuse_file_only_input, tokenize_bin_files, tokenize_model, tokenize_spark

    out = check_out(args.out)
    if out.exists() and not args.force:
        raise InputError(f"{args.out!r} already exists; pass --force to replace it")
    if args.format == "bin" and args.block_size is not None:
        raise InputError("--block-size applies to --format arrow; --format bin writes one flat stream of ids (cut "
                         "windows from the memory map when training)")
    model = tokenize_model(args)
    if args.spark:
        log(f"wrote parquet to {tokenize_spark(args, model)}")
        return 0
    if args.format == "bin" and args.files and not args.dataset:  # streamed, without datasets
        if args.num_proc is not None:
            raise InputError(f"--num-proc {args.num_proc} sets datasets.map's processes, but FILEs to --format bin "
                             "are streamed without datasets, on threads (every usable CPU): leave --num-proc out")
        log(f"wrote bin to {os.fspath(tokenize_bin_files(args, model, out))}")
        return 0
    from .integrations.preprocess import save_tokenized  # the datasets path's imports, not the streamed one's
    from .training.corpus import load_text_files

    refuse_file_only_input(args)
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        raise InputError("tokenize needs a corpus: FILE arguments or --dataset")
    if isinstance(corpus, list):
        corpus, args.text_column = load_text_files(corpus), "text"  # a FILE's lines are the column "text"
    elif corpus.column_names is not None and args.text_column not in corpus.column_names:
        raise InputError(f"--dataset {args.dataset!r} has no column {args.text_column!r}; its columns are "
                         f"{corpus.column_names!r}: pass --text-column naming the one that holds the documents")
    if args.quiet:
        import datasets

        datasets.disable_progress_bars()
    folder = save_tokenized(corpus, model, out, format=args.format, dtype=args.dtype, force=args.force,
                            show_progress=not args.quiet, text_column=args.text_column, num_proc=args.num_proc,
                            add_eos=not args.no_eos, skip_empty=args.skip_empty, block_size=args.block_size,
                            labels=args.labels, drop_last=not args.pad_last)
    log(f"wrote {args.format} to {os.fspath(folder)}")
    return 0


def _cmd_apply(args: argparse.Namespace) -> int:
    from .model.classic import ClassicModel

    model = ClassicModel.load(args.model)
    if args.file is None:
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_bytes().decode("utf-8")  # no newline translation: as apply-bpe, "\r" kept
        except UnicodeDecodeError as exc:
            raise InputError(f"{args.file!r} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    sys.stdout.write(model.segment(text))
    return 0


def _roles(args: argparse.Namespace) -> dict[str, str | None]:
    return {f"{role}_token": getattr(args, f"{role}_token") for role in ("bos", "eos", "unk", "pad")}


def _cmd_train(args: argparse.Namespace) -> int:
    from .training.bpe.trainer import DEFAULT_VOCAB_SIZE, train, train_from_counts
    from .training.counts import WordCounts

    if args.tokenizer_class == "HFSentencePieceTokenizer" and ALGORITHMS[args.algorithm] is None:
        raise InputError("--tokenizer-class HFSentencePieceTokenizer names the class of SentencePiece folders "
                         "(--algorithm unigram or sentencepiece-bpe); for this one give HFBPETokenizer or "
                         "PreTrainedTokenizerFast")
    if args.algorithm == "parity":
        return cmd_train_parity(args, finish=_finish_training)
    if parity_flags := parity_flags_given(args):
        raise InputError(f"{', '.join(parity_flags)} apply to --algorithm parity")
    if ALGORITHMS[args.algorithm] is not None:
        return _cmd_train_sentencepiece(args)
    if args.spm:
        raise InputError("--spm options apply to --algorithm unigram or sentencepiece-bpe (SentencePiece's options)")
    if args.recipe is not None or args.num_merges is not None or args.lowercase:
        for flag, given in (("--for-sharing", args.for_sharing), ("--tokenizer-class", args.tokenizer_class)):
            if given:
                raise InputError(f"{flag} names a transformers class for byte-level BPE folders; a --recipe "
                                 f"model is not one: leave out {flag}")
        return _cmd_train_recipe(args)
    if args.for_sharing and args.tokenizer_class == "HFBPETokenizer":
        raise InputError("--for-sharing writes tokenizer_class PreTrainedTokenizerFast, --tokenizer-class "
                         "HFBPETokenizer the other one: give one of the two")
    fit = superbpe_trainer(args) if args.algorithm == "superbpe" else train
    if args.transition is not None and args.algorithm != "superbpe":
        raise InputError("--transition applies to --algorithm superbpe")

    # Refuse early, before a long training, when the output would be refused at the end.
    out = check_out_folder(args.out, args.force)
    if args.counts:
        if args.files or args.dataset:
            raise InputError("give either --counts or a corpus (FILE arguments or --dataset), not both")
        given = [name for name, value in (("--pattern", args.pattern != "gpt2"),
                                          ("--add-prefix-space", args.add_prefix_space)) if value]
        if given:
            raise InputError(f"{' and '.join(given)} cannot be given with --counts: the counts files record the "
                             "pre-tokenizer they were counted with")
        counts = WordCounts.load_all(args.counts)
    if args.spark:
        if not args.files:
            raise InputError("--spark counts FILE arguments (paths Spark's executors can read); give them")
        from .spark import count_words_spark

        # Spark counts (its logs on stderr); the merge loop runs here, on the driver.
        counts = count_words_spark(list(args.files), master=args.spark, pattern=args.pattern,
                                   add_prefix_space=args.add_prefix_space)
    if args.counts or args.spark:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vocab_size = DEFAULT_VOCAB_SIZE if args.vocab_size is None else args.vocab_size
            model = train_from_counts(counts, vocab_size=vocab_size, min_frequency=args.min_frequency or 0,
                                      special_tokens=args.special_token, max_token_length=args.max_token_length,
                                      show_progress=not args.quiet, **_roles(args))
        return _finish_training(model, caught, out, args.force, tokenizer_class=args.tokenizer_class)
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        corpus = default_corpus("training")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fit(
            corpus,
            vocab_size=args.vocab_size,
            min_frequency=args.min_frequency,
            special_tokens=args.special_token,
            pattern=args.pattern,
            add_prefix_space=args.add_prefix_space,
            max_token_length=args.max_token_length,
            text_column=args.text_column,
            workers=args.workers,
            corpus_order=args.corpus_order,
            show_progress=not args.quiet,
            **_roles(args),
        )
    return _finish_training(model, caught, out, args.force, tokenizer_class=args.tokenizer_class)


def _finish_training(model: Any, caught: list[warnings.WarningMessage], out: Path, force: bool, *,
                     tokenizer_class: str | None) -> int:
    from .formats.hf_config import SHARING_TOKENIZER_CLASS

    for warning in caught:
        log(f"warning: {warning.message}")
    folder = model.save(out, force=force, tokenizer_class=tokenizer_class or SHARING_TOKENIZER_CLASS)
    log(f"wrote {model.vocab_size} tokens and {len(model.merges)} merges to {os.fspath(folder)}")
    return 0


def _cmd_count(args: argparse.Namespace) -> int:
    from .training.counts import WordCounts

    out = check_out(args.out)
    if out.exists() and not args.force:
        raise InputError(f"{args.out!r} already exists; pass --force to replace it")
    if out.is_dir():
        raise InputError(f"--out {args.out!r} is a folder; give the path of the counts file to write")
    corpus = corpus_of(args, args.files, what="FILE arguments")
    if corpus is None:
        corpus = default_corpus("counting")
    counts = WordCounts.from_corpus(corpus, pattern=args.pattern, add_prefix_space=args.add_prefix_space,
                                    text_column=args.text_column, workers=args.workers, show_progress=not args.quiet)
    if not counts:
        raise InputError(f"the corpus is empty: {counts.documents} documents and no pre-token to count; nothing "
                         "written")
    path = counts.save(out, force=args.force)
    log(f"wrote {len(counts):,} pre-tokens of {counts.documents:,} documents to {os.fspath(path)}")
    return 0


def _load_model(directory: str) -> Any:
    """The folder's encoder for encode/decode: a BPEModel, or a SentencePiece folder's model (tokenizer.model)."""
    if os.path.isfile(os.path.join(directory, "tokenizer.model")):
        return _SentencePieceFolder(os.path.join(directory, "tokenizer.model"))
    from .model.bpe import BPEModel

    return BPEModel.load(directory)


class _SentencePieceFolder:
    """A SentencePiece folder (hf-bpe train --algorithm unigram / sentencepiece-bpe) read by sentencepiece itself:
    its ids and text are SentencePieceProcessor's, the reference of tokenizer.model (hf_bpe trains it equal to
    spm_train). sentencepiece never reads control symbols (<s>, </s>) from the text, so --split-special-tokens
    changes nothing here; user-defined symbols are pieces and always match."""

    def __init__(self, path: str) -> None:
        import sentencepiece

        from .formats.sentencepiece_model import SentencePieceModel

        data = Path(path).read_bytes()  # read once: checked by hf_bpe's reader (a damaged file is a clear error,
        SentencePieceModel.read(data, path)  # not a crash), then loaded by sentencepiece
        self._processor = sentencepiece.SentencePieceProcessor()
        self._processor.LoadFromSerializedProto(data)
        self._size = self._processor.get_piece_size()

    def encode(self, text: str, **_options: Any) -> list[int]:
        text.encode("utf-8")  # a lone surrogate: the UnicodeEncodeError the command reports
        return list(self._processor.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        for token in ids:
            if not 0 <= token < self._size:
                raise InputError(f"id {token} is out of range for this SentencePiece model (0..{self._size - 1})")
        return str(self._processor.decode(list(ids)))


def _cmd_encode(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    options = {"disallowed_special": ()} if args.split_special_tokens else {"allowed_special": "all"}
    options["surrogates"] = "strict"  # bytes that are not UTF-8 are refused, not encoded as U+FFFD
    if args.text is not None:
        try:
            print(" ".join(map(str, model.encode(args.text, **options))))
        except UnicodeEncodeError:  # bytes of the command line that are not UTF-8 (surrogate escapes)
            raise InputError(f"TEXT {args.text!r:.80} is not valid UTF-8 text; pass UTF-8") from None
        return 0
    out = sys.stdout
    for number, line in enumerate(_stdin_lines(), start=1):
        text = line[:-1] if line.endswith("\n") else line
        try:
            ids = model.encode(text, **options)
        except UnicodeEncodeError:  # a lone surrogate from a text stdin
            raise InputError(f"stdin line {number} is not valid UTF-8 text; fix or drop that line") from None
        out.write(" ".join(map(str, ids)) + "\n")
    return 0


def _stdin_lines() -> Any:
    """Yield stdin's lines as str, decoding UTF-8 strictly and naming the line that is not."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream (tests, embedding programs)
        yield from sys.stdin
        return
    for number, data in enumerate(raw, start=1):
        try:
            yield data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"stdin line {number} is not UTF-8: byte {data[exc.start]:#04x} at offset {exc.start} "
                             f"({exc.reason}); hf-bpe encode reads UTF-8 text") from None


def _parse_ids(words: Sequence[str], where: str) -> list[int]:
    ids = []
    for word in words:
        try:
            ids.append(int(word))
        except ValueError:
            raise InputError(f"{where}: {word!r} is not a token id (expected integers)") from None
    return ids


def _cmd_decode(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    if args.ids:
        print(model.decode(_parse_ids(args.ids, "arguments")))
        return 0
    for number, line in enumerate(sys.stdin, start=1):
        sys.stdout.write(model.decode(_parse_ids(line.split(), f"stdin line {number}")) + "\n")
    return 0


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._subparsers._group_actions:  # noqa: SLF001 - argparse offers no public accessor
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return action.choices[name]
    raise LookupError(name)  # pragma: no cover - _build_parser always adds the commands


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "train": _cmd_train,
    "count": _cmd_count,
    "apply": _cmd_apply,
    "encode": _cmd_encode,
    "tokenize": _cmd_tokenize,
    "decode": _cmd_decode,
    "compare": cmd_compare,
    "verify": cmd_verify,
    "convert": cmd_convert,
    "extend": cmd_extend,
    "evaluate": cmd_evaluate,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hf-bpe`` command line; return its exit status.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        # A known command gets a parser without the other commands' imports (~25 ms and ~1 MB for `train`).
        parser = _build_parser(argv[0] if argv and argv[0] in _COMMANDS else None)
        # Ctrl-C is held while argparse parses (a few ms): interrupted inside parse_intermixed_args, argparse's own
        # clean-up fails with an AttributeError traceback. A Ctrl-C meanwhile arrives when the parse is done.
        with interrupts_held():
            if argv and argv[0] in _COMMANDS:
                # Each command parses intermixed, so that FILE arguments may come before, between or after options
                # (argparse cannot parse intermixed through subparsers).
                args = _subparser(parser, argv[0]).parse_intermixed_args(argv[1:])
                args.command = argv[0]
            else:
                args = parser.parse_args(argv)  # prints the usage error (or --help)
    except SystemExit as exc:  # argparse already printed usage + error (status 2) or help (status 0)
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("hf-bpe: interrupted", file=sys.stderr)
        return 130
    try:
        return _COMMANDS[args.command](args)
    except USER_ERRORS as exc:
        print(f"hf-bpe: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the file system refused (full disk, read-only, ...): nothing was replaced
        # An error of os.write or fsync names no file; the writers name their folder, else name --out.
        place = exc.filename if exc.filename is not None else getattr(args, "out", None)
        where = repr(os.fspath(place)) if place is not None else "a file"
        print(f"hf-bpe: error: cannot read or write {where}: {exc.strerror or exc}; nothing was written (free space "
              "or choose another place)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hf-bpe: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
