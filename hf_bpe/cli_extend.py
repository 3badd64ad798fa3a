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

from .cli_support import add_corpus_arguments, check_out_folder, corpus_of, log
from .errors import InputError

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
    extend.add_argument("--force", action="store_true", help="replace hf_bpe's files in an existing --out folder")
    extend.add_argument("--quiet", action="store_true", help="no progress bars")


def cmd_extend(args: argparse.Namespace) -> int:
    """Run ``hf-bpe extend``; return the exit status."""
    import hf_bpe

    out = check_out_folder(args.out, args.force)
    if not Path(args.base).exists():
        raise InputError(f"BASE {args.base!r} does not exist; give a tokenizer folder, a .tiktoken file or a .model")
    if args.counts and (args.files or args.dataset):
        raise InputError("give either --counts or a corpus (FILE arguments or --dataset), not both")
    size = {"vocab_size": args.vocab_size, "new_tokens": args.new_tokens}
    options = dict(size, min_frequency=args.min_frequency, max_token_length=args.max_token_length,
                   show_progress=not args.quiet)
    corpus = None if args.counts else corpus_of(args, args.files, what="FILE arguments")
    if corpus is None and not args.counts:
        raise InputError("give the corpus to learn from: FILE arguments, --dataset DIR or --counts PARQUET")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if Path(args.base).suffix == ".model":
            model = _extend_sentencepiece(hf_bpe, args, corpus, options)
        elif args.counts:
            model = _extend_counts(args, options)
        else:
            model = hf_bpe.extend(args.base, corpus, text_column=args.text_column, workers=args.workers,
                                  pattern=args.pattern, **options)
    for warning in caught:
        log(f"warning: {warning.message}")
    folder = model.save(out, force=args.force)
    log(f"wrote {len(model)} ids and {len(model.merges)} merges to {os.fspath(folder)}"
        if hasattr(model, "merges") else f"wrote the extended tokenizer to {os.fspath(folder)}")
    return 0


def _extend_counts(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    from .tools.extend import load_base
    from .training.counts import WordCounts
    from .training.extend import extend_from_counts

    base, record = load_base(args.base, args.pattern)
    counts = WordCounts.load_all(args.counts)
    return extend_from_counts(base, counts, base_record=record, **options)


def _extend_sentencepiece(hf_bpe: Any, args: argparse.Namespace, corpus: Any, options: dict[str, Any]) -> Any:
    try:
        extend_sentencepiece = hf_bpe.extend_sentencepiece
    except AttributeError:
        raise InputError(f"{args.base!r} is a SentencePiece model, and this hf_bpe cannot extend SentencePiece "
                         "models yet (no hf_bpe.extend_sentencepiece); extend a byte-level BPE folder or file") from None
    if args.counts:
        raise InputError("--counts applies to byte-level bases; give a SentencePiece base the corpus (FILE or "
                         "--dataset)")
    return extend_sentencepiece(args.base, corpus, text_column=args.text_column, **options)
