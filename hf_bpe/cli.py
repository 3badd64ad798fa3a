"""The ``hf-bpe`` command: train, encode, decode.

Data goes to stdout, progress and logs to stderr. A user error exits with status 2 and one line
``hf-bpe: error: ...``, never a traceback. Heavy libraries are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

_EXAMPLES = """\
examples:
  hf-bpe train --out my-tok                         # embedded default corpus (Python stdlib)
  hf-bpe train corpus.txt --vocab-size 32000 --out my-tok --special-token '<|endoftext|>'
  hf-bpe train --dataset ./my_dataset --split train --text-column text --out my-tok --force
  hf-bpe encode --model my-tok 'Hello world'
  cat lines.txt | hf-bpe encode --model my-tok > ids.txt
  hf-bpe compare corpus.txt --vocab-size 32000 --out report --against tokenizers,sentencepiece
  hf-bpe verify my-tok --corpus corpus.txt
  hf-bpe convert cl100k_base.tiktoken --to gpt2 --out cl100k --pattern gpt4
  hf-bpe decode --model my-tok 15496 995
"""


class UserError(Exception):
    """A mistake in the command line or its inputs: reported in one line, exit status 2."""


def _build_parser() -> argparse.ArgumentParser:
    from .trainer import DEFAULT_VOCAB_SIZE

    parser = argparse.ArgumentParser(
        prog="hf-bpe",
        description="Train byte-level BPE tokenizers equal to tokenizers' BpeTrainer, and use them.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser(
        "train",
        help="train a tokenizer into a folder (vocab.json, merges.txt, tokenizer.json, configs)",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files; each line is one sequence")
    train.add_argument("--out", required=True, metavar="DIR", help="output folder")
    train.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE, metavar="N",
                       help=f"final vocabulary size, specials and 256 bytes included (default {DEFAULT_VOCAB_SIZE})")
    train.add_argument("--min-frequency", type=int, default=0, metavar="N",
                       help="smallest pair count still merged (default 0)")
    train.add_argument("--special-token", action="append", default=[], metavar="T",
                       help="a special token (repeat for several); they get the first ids")
    train.add_argument("--pattern", default="gpt2", metavar="NAME",
                       help="pre-tokenizer: gpt2 (default), gpt4, o200k, llama3, qwen2, or a regex")
    train.add_argument("--add-prefix-space", action="store_true", help="prepend a space to each sequence")
    train.add_argument("--max-token-length", type=int, default=None, metavar="N", help="longest token in bytes")
    train.add_argument("--dataset", metavar="PATH_OR_NAME",
                       help="a datasets folder (save_to_disk) or a local dataset loadable by datasets.load_dataset")
    train.add_argument("--split", default="train", metavar="S", help="dataset split (default train)")
    train.add_argument("--text-column", default="text", metavar="C", help="dataset text column (default text)")
    train.add_argument("--workers", type=int, default=None, metavar="N", help="processes for counting")
    train.add_argument("--corpus-order", choices=("sequence", "multiset"), default="sequence",
                       help="fingerprint the corpus as an ordered sequence (default) or an order-free multiset")
    train.add_argument("--force", action="store_true", help="replace hf_bpe's files in an existing --out folder")
    train.add_argument("--quiet", action="store_true", help="no progress bars")

    encode = commands.add_parser("encode", help="print token ids of TEXT, or of each stdin line",
                                 epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    encode.add_argument("--model", required=True, metavar="DIR", help="a folder written by hf-bpe train")
    encode.add_argument("text", nargs="?", metavar="TEXT", help="text to encode (default: each line of stdin)")
    encode.add_argument("--split-special-tokens", action="store_true",
                        help="encode special-token text as ordinary text")

    decode = commands.add_parser("decode", help="print the text of token ids (arguments, or one line of ids per "
                                 "stdin line)", epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    decode.add_argument("--model", required=True, metavar="DIR", help="a folder written by hf-bpe train")
    decode.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: stdin)")

    # These commands parse their own arguments (see _DELEGATED); the entries here list them in --help.
    commands.add_parser("compare", help="train hf_bpe and its peers on one corpus and report how they differ "
                        "(hf-bpe compare --help)", add_help=False)
    commands.add_parser("verify", help="check a tokenizer folder against its manifest, and retrain from the corpus "
                        "(hf-bpe verify --help)", add_help=False)
    commands.add_parser("convert", help="convert between .tiktoken files, GPT-2 files and tokenizer.json "
                        "(hf-bpe convert --help)", add_help=False)
    return parser


def _delegated(name: str):
    if name == "compare":
        from .compare import cli_compare

        return cli_compare
    if name == "convert":
        from .convert import cli_convert

        return cli_convert
    from .manifest import cli_verify

    return cli_verify


_DELEGATED = ("compare", "verify", "convert")


def _log(message: str) -> None:
    print(f"hf-bpe: {message}", file=sys.stderr)


def _load_dataset(name: str, split: str):
    import datasets

    path = Path(name)
    try:
        if path.is_dir() and ((path / "dataset_info.json").exists() or (path / "state.json").exists()
                              or (path / "dataset_dict.json").exists()):
            loaded = datasets.load_from_disk(os.fspath(path))
            if isinstance(loaded, datasets.DatasetDict):
                if split not in loaded:
                    raise UserError(f"dataset {name!r} has splits {list(loaded)!r}, not {split!r}; pass --split")
                loaded = loaded[split]
            return loaded
        return datasets.load_dataset(name, split=split)
    except UserError:
        raise
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as exc:
        raise UserError(
            f"cannot load dataset {name!r} split {split!r}: {exc}. hf-bpe works offline: pass a folder saved with "
            "Dataset.save_to_disk, or a local dataset script/folder"
        ) from None


def _cmd_train(args: argparse.Namespace) -> int:
    from .corpus import default_corpus, describe_default_corpus
    from .model import SAVED_FILES
    from .trainer import train

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {args.out!r} exists and is not a folder")
    if args.files and args.dataset:
        raise UserError("give either FILE arguments or --dataset, not both")
    # Refuse early, before a long training, when the output would be refused at the end.
    existing = [n for n in SAVED_FILES if (out / n).exists()]
    if existing and not args.force:
        raise UserError(f"{args.out!r} already holds {', '.join(existing)}; pass --force to replace them")
    if args.files:
        corpus = [Path(f) for f in args.files]
    elif args.dataset:
        corpus = _load_dataset(args.dataset, args.split)
    else:
        _log(f"no corpus given: training on the embedded default corpus, {describe_default_corpus()}, "
             "loaded through datasets")
        corpus = default_corpus()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = train(
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
        )
    for warning in caught:
        _log(f"warning: {warning.message}")
    folder = model.save(out, force=args.force)
    _log(f"wrote {model.vocab_size} tokens and {len(model.merges)} merges to {os.fspath(folder)}")
    return 0


def _load_model(directory: str):
    from .model import BPEModel

    return BPEModel.load(directory)


def _cmd_encode(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    options = {"disallowed_special": ()} if args.split_special_tokens else {"allowed_special": "all"}
    if args.text is not None:
        print(" ".join(map(str, model.encode(args.text, **options))))
        return 0
    out = sys.stdout
    for line in sys.stdin:
        text = line[:-1] if line.endswith("\n") else line
        out.write(" ".join(map(str, model.encode(text, **options))) + "\n")
    return 0


def _parse_ids(words: Sequence[str], where: str) -> list[int]:
    ids = []
    for word in words:
        try:
            ids.append(int(word))
        except ValueError:
            raise UserError(f"{where}: {word!r} is not a token id (expected integers)") from None
    return ids


def _cmd_decode(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    if args.ids:
        print(model.decode(_parse_ids(args.ids, "arguments")))
        return 0
    for number, line in enumerate(sys.stdin, start=1):
        sys.stdout.write(model.decode(_parse_ids(line.split(), f"stdin line {number}")) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hf-bpe`` command line; return its exit status.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _DELEGATED:
        try:
            return _delegated(argv[0])(argv[1:])
        except KeyboardInterrupt:
            print("hf-bpe: interrupted", file=sys.stderr)
            return 130
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage + error (status 2) or help (status 0)
        return int(exc.code or 0)
    commands = {"train": _cmd_train, "encode": _cmd_encode, "decode": _cmd_decode}
    try:
        return commands[args.command](args)
    except (UserError, TypeError, ValueError, FileNotFoundError, FileExistsError, PermissionError,
            IsADirectoryError) as exc:
        print(f"hf-bpe: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hf-bpe: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
