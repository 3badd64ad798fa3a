"""``hf-bpe extend``: its arguments and its run (the CLI module keeps the other commands).

A byte-level base (a folder or a ``.tiktoken`` file) goes to :func:`hf_bpe.extend`; a SentencePiece ``.model`` to
``hf_bpe.extend_sentencepiece`` when this hf_bpe has it.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path
from typing import Any

from .cli_support import TOKENIZER_CLASSES, add_corpus_arguments, check_out_folder, corpus_of, log
from .errors import InputError

REPORT_FILE = "extension_report.json"

__all__ = ["add_extend_parser", "cmd_extend"]

_EPILOG = """\
examples:
  hf-bpe extend ./gpt2 zh.txt --new-tokens 5000 --out gpt2-zh
  hf-bpe extend gpt2.tiktoken --dataset ./my_dataset --vocab-size 60000 --out gpt2-ext --force
  hf-bpe count zh.txt --pattern gpt2 --out zh.parquet && hf-bpe extend ./gpt2 --counts zh.parquet --new-tokens 5000 --out gpt2-zh
  hf-bpe verify gpt2-zh --corpus zh.txt        # extends the recorded base again, byte for byte
"""


def add_extend_parser(commands: Any) -> None:
    """Add the ``extend`` command to the CLI's subparsers."""
    extend = commands.add_parser(
        "extend", help="extend a tokenizer with merges learned on a new corpus, every existing id kept",
        description="Learn new merges on a corpus, continuing tokenizers' BpeTrainer from BASE's own segmentation: "
        "every token, id, merge and special token of BASE is kept; new ids follow the largest id in use.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    extend.add_argument("base", metavar="BASE", help="a tokenizer folder (GPT-2 files, tokenizer.json), a .tiktoken "
                        "file, or a SentencePiece .model")
    add_corpus_arguments(extend, files_help="UTF-8 text files; each line is one sequence")
    extend.add_argument("--counts", nargs="+", metavar="PARQUET", help="pre-token counts (hf-bpe count, with BASE's "
                        "pattern) instead of a corpus")
    size = extend.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=int, default=None, metavar="N", help="final number of ids")
    size.add_argument("--new-tokens", type=int, default=None, metavar="N", help="number of ids to add")
    extend.add_argument("--out", required=True, metavar="DIR", help="output folder")
    extend.add_argument("--min-frequency", type=int, default=0, metavar="N", help="smallest pair count still merged")
    extend.add_argument("--max-token-length", type=int, default=None, metavar="N", help="longest new token in bytes")
    extend.add_argument("--pattern", default=None, metavar="NAME",
                        help="BASE's pre-tokenizer where its files do not say (a .tiktoken file not OpenAI's; "
                             "Qwen2's vocab.json + merges.txt: qwen2)")
    extend.add_argument("--workers", type=int, default=None, metavar="N", help="counting threads (default: every CPU)")
    extend.add_argument("--held-out", type=float, default=0.01, metavar="F",
                        help="share of the corpus' documents kept out of the extension and used for the report's "
                             "tokens per byte (default 0.01; 0: none); verify cuts the corpus the same way")
    extend.add_argument("--check", nargs="+", default=None, metavar="FILE",
                        help="text of the base's own kind (e.g. English for GPT-2): the report's tokens per byte "
                             "on it too, before and after")
    extend.add_argument("--tokenizer-class", choices=TOKENIZER_CLASSES, default=None,
                        help="the class tokenizer_config.json names: PreTrainedTokenizerFast by default (loads "
                             "everywhere); HFBPETokenizer (byte-level base) or HFSentencePieceTokenizer (a .model "
                             "base): hf_bpe's classes")
    extend.add_argument("--force", action="store_true", help="replace hf_bpe's files in an existing --out folder")
    extend.add_argument("--quiet", action="store_true", help="no progress bars")


def cmd_extend(args: argparse.Namespace) -> int:
    """Run ``hf-bpe extend``; return the exit status."""
    import hf_bpe

    from .formats import atomic
    from .formats.hf_config import SENTENCEPIECE_CLASS, SHARING_TOKENIZER_CLASS, TOKENIZER_CLASS
    from .integrations.sentencepiece_hf import sentencepiece_files
    from .tools.extend import load_base
    from .tools.extension_report import extension_report
    from .training.corpus import iter_texts
    from .training.counts import WordCounts
    from .training.bpe.extend import extend_from_counts, extend_model
    from .training.held_out import HeldOutSplit

    out = check_out_folder(args.out, args.force)
    if not Path(args.base).exists():
        raise InputError(f"BASE {args.base!r} does not exist; give a tokenizer folder, a .tiktoken file or a .model")
    sentencepiece_base = Path(args.base).suffix == ".model"
    # This base's kind and class, and the other kind's: its class is refused before the extension runs, not after.
    kind, own, other_kind, other = (
        ("a SentencePiece model", SENTENCEPIECE_CLASS, "byte-level", TOKENIZER_CLASS) if sentencepiece_base
        else ("byte-level", TOKENIZER_CLASS, "SentencePiece", SENTENCEPIECE_CLASS))
    if args.tokenizer_class == other:
        raise InputError(f"--tokenizer-class {other} is the class of {other_kind} folders; this base is {kind}: "
                         f"give {own} or PreTrainedTokenizerFast")
    if args.counts and (args.files or args.dataset):
        raise InputError("give either --counts or a corpus (FILE arguments or --dataset), not both")
    size = {"vocab_size": args.vocab_size, "new_tokens": args.new_tokens}
    options = dict(size, min_frequency=args.min_frequency, max_token_length=args.max_token_length,
                   show_progress=not args.quiet)
    corpus = None if args.counts else corpus_of(args, args.files, what="FILE arguments")
    if corpus is None and not args.counts:
        raise InputError("give the corpus to learn from: FILE arguments, --dataset DIR or --counts PARQUET")
    if not 0 <= args.held_out < 1:
        raise InputError(f"--held-out must be in [0, 1) (the share of documents kept out for the report), got "
                         f"{args.held_out!r}")
    check = [Path(p) for p in args.check] if args.check else None
    for path in check or ():
        if not path.is_file():
            raise InputError(f"--check {os.fspath(path)!r} is not a file; give UTF-8 text files of the base's kind")
    split = None
    if corpus is not None and args.held_out > 0:  # the extension learns from the rest; the report reads these
        corpus = split = HeldOutSplit.of_corpus(corpus, text_column=args.text_column, fraction=args.held_out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if sentencepiece_base:
            base, model = args.base, _extend_sentencepiece(hf_bpe, args, corpus, size)
            files = sentencepiece_files(model, model.to_bytes(), tokenizer_class=args.tokenizer_class)
        else:
            base, record = load_base(args.base, args.pattern)
            if args.counts:
                model = extend_from_counts(base, WordCounts.load_all(args.counts), base_record=record, **options)
            else:
                model = extend_model(base, corpus, text_column=args.text_column, workers=args.workers,
                                     base_record=record, **options)
            files = model.files(tokenizer_class=args.tokenizer_class or SHARING_TOKENIZER_CLASS)
    for warning in caught:
        log(f"warning: {warning.message}")
    report = extension_report(base, model, split.held_out if split is not None else (),
                              check=iter_texts(check) if check else None)
    files[REPORT_FILE] = report.to_json()
    folder = atomic.replace_folder(out, files, force=args.force)
    print(report.render())
    log(f"wrote {len(files)} files to {os.fspath(folder)} (the report: {REPORT_FILE})")
    return 0


def _extend_sentencepiece(hf_bpe: Any, args: argparse.Namespace, corpus: Any, size: dict[str, Any]) -> Any:
    if args.counts:
        raise InputError("--counts applies to byte-level bases; give a SentencePiece base the corpus (FILE or "
                         "--dataset)")
    for flag, value, default in (("--min-frequency", args.min_frequency, 0), ("--max-token-length",
                                 args.max_token_length, None), ("--pattern", args.pattern, None)):
        if value != default:
            raise InputError(f"{flag} applies to byte-level bases; a SentencePiece base keeps its own trainer "
                             "options (max_sentencepiece_length, split_*) and normalizer")
    return hf_bpe.extend_sentencepiece(args.base, corpus, text_column=args.text_column, **size)
