"""``hf-bpe evaluate``: its arguments and its run (the CLI module keeps the other commands)."""

from __future__ import annotations

import argparse
from typing import Any

from .cli_support import check_out, log
from .errors import InputError

__all__ = ["add_evaluate_parser", "cmd_evaluate"]

_EPILOG = """\
examples:
  hf-bpe evaluate my-tok gpt2.tiktoken llama2.model --text en=en.txt --text fi=fi.txt --out eval
  hf-bpe evaluate plain=bpe-tok fair=parity-tok --text en=en.txt --text de=de.txt --text zh=zh.txt \\
      --reference en --out eval --force
  open eval/report.html      # sample lines split into tokens, side by side
"""


def add_evaluate_parser(commands: Any) -> None:
    """Add the ``evaluate`` command to the CLI's subparsers."""
    evaluate = commands.add_parser(
        "evaluate", help="measure tokenizers on named texts: bytes/token, fertility, Rényi efficiency, parity",
        description="Encode each named text with each tokenizer (each line on its own) and report per tokenizer and "
        "text: bytes, characters, words, tokens, bytes per token, tokens per word, Rényi efficiency (order 2.5), "
        "the share of the vocabulary used and the ids never produced; per tokenizer: each text's tokens relative to "
        "the reference text and their Gini coefficient. Writes OUT/report.json, report.md, report.html (sample "
        "lines split into tokens) and report.png (with matplotlib); prints the table.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("tokenizers", nargs="+", metavar="[NAME=]TOKENIZER",
                          help="an hf_bpe or Hugging Face folder, a tokenizer.json, a .tiktoken file or a "
                               "SentencePiece .model (named after the file or folder unless NAME= is given)")
    evaluate.add_argument("--text", action="append", required=True, metavar="NAME=FILE",
                          help="a UTF-8 text file under a name (the report's language column); repeat for each")
    evaluate.add_argument("--reference", default=None, metavar="NAME", help="the text parity is measured against "
                          "(default: the first --text)")
    evaluate.add_argument("--out", required=True, metavar="DIR", help="the report folder")
    evaluate.add_argument("--sample-lines", type=int, default=5, metavar="N",
                          help="lines of each text shown split into tokens in report.html (default 5)")
    evaluate.add_argument("--pattern", default=None, metavar="NAME",
                          help="the pre-tokenizer of a .tiktoken file that is not OpenAI's (gpt2, gpt4, o200k, ...)")
    evaluate.add_argument("--force", action="store_true", help="replace the report files in an existing --out")


def _named(values: list[str], flag: str, *, required: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep and not required:
            name, path = "", value
        elif not sep or not name or not path:
            raise InputError(f"{flag} {value!r:.80} is not NAME=FILE; write e.g. {flag} en=english.txt")
        key = name or path
        if key in out:
            raise InputError(f"{flag}: the name {key!r:.80} is given twice; give each a different NAME=")
        out[key] = path
    return out


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Run ``hf-bpe evaluate``: write the report folder, print the table to stdout."""
    from .tools.evaluate import evaluate
    from .tools.evaluate.markdown import table

    texts = _named(args.text, "--text", required=True)
    named = _named(args.tokenizers, "TOKENIZER", required=False)
    # A bare path is named after its file or folder (evaluate's rule); NAME=PATH keeps its name.
    bare = [path for key, path in named.items() if key == path]
    tokenizers: Any = {key: path for key, path in named.items() if key != path}
    if bare and tokenizers:
        raise InputError("name every TOKENIZER (NAME=PATH) or none, not some of them")
    if args.sample_lines < 0:
        raise InputError(f"--sample-lines must be at least 0, got {args.sample_lines}")
    out = check_out(args.out)
    report = evaluate(bare or tokenizers, texts, reference=args.reference, out=out, force=args.force,
                      sample_lines=args.sample_lines, pattern=args.pattern)
    print(table(report), end="")
    log(f"wrote {', '.join(n for n in (report['files'] or {}).values() if n)} to {args.out}")
    return 0
