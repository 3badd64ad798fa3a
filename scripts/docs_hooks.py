"""MkDocs hooks (mkdocs.yml ``hooks:``): write the reference pages that come from the code at every build.

- ``reference/api.md``: one mkdocstrings entry per name of ``hf_bpe.__all__``, grouped by the layer that defines it,
  so a new public name appears in the reference without editing a page (tests/test_docs_site.py checks each one).
- ``reference/cli.md``: every ``hf-bpe`` command with its arguments, read from the argparse parser itself, as
  sentencepiece's ``doc/options.md`` is made from ``spm_train --help``.
- ``reference/sentencepiece-options.md``: the spm_train options ``--spm KEY=VALUE`` / ``train_sentencepiece``
  accept, from the tables the trainer checks them with.

The pages exist only in the built site (mkdocs' generated files); the repository holds no copy that could drift.
A guide page (``docs/guides/*.md``) that ``mkdocs.yml``'s nav does not name is listed under Guides after the others.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# The layer of a defining module -> the heading of its group on the API page, in the page's order.
_GROUPS = {
    "training": "Training",
    "model": "Models",
    "integrations": "Hugging Face: transformers and datasets",
    "tools": "Tools: extend, compare, verify",
    "formats": "Files",
    "core": "Pre-tokenization",
    "errors": "Errors",
    "deprecated": "Deprecated",
}


# The entry points, one per algorithm, shown first in the Training group in this order (``extend`` is defined in
# tools, which reads any base format, but is shown here); the other names follow in ``__all__``'s order.
_ENTRY_POINTS = ("train", "train_sentencepiece", "train_unigram", "train_classic", "train_parity", "train_superbpe",
                 "extend", "extend_sentencepiece")
# Names shown first in their group after the entry points; deprecated names go to a group of their own, last.
_FIRST = (*_ENTRY_POINTS, "train_from_counts", "BPEModel", "UnigramModel", "ClassicModel", "HFBPETokenizer",
          "HFSentencePieceTokenizer", "save_sentencepiece", "tokenize_dataset", "tokenize_files")
_DEPRECATED = {"train_scheme": "train_classic"}
_ALGORITHMS = (
    ("train", "byte-level BPE, merge for merge as `tokenizers`' BpeTrainer", "BPEModel"),
    ("train_sentencepiece", "SentencePiece BPE, piece for piece as `spm_train --model_type=bpe`", "SentencePieceModel"),
    ("train_unigram", "SentencePiece unigram, as `spm_train --model_type=unigram`", "SentencePieceModel"),
    ("train_classic", "classic BPE and WordPiece: the named recipes, or the classic options combined", "ClassicModel"),
    ("train_parity", "parity-aware BPE over one corpus per language", "BPEModel"),
    ("train_superbpe", "SuperBPE (superword tokens after a transition)", "BPEModel"),
    ("extend", "a trained BPE model extended on a new corpus (the base first)", "BPEModel"),
    ("extend_sentencepiece", "a SentencePiece BPE model extended on a new corpus (the base first)",
     "SentencePieceModel"),
)


def _import_checkout() -> Any:
    """Import hf_bpe from this checkout (the one mkdocs builds), not whichever copy the environment installed."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import hf_bpe

    return hf_bpe


def _cell(text: object) -> str:
    """A Markdown table cell holding ``text`` as it is (HTML-escaped; ``|`` cannot end the cell)."""
    return html.escape(str(text)).replace("|", "&#124;").replace("\n", " ")


def _code(text: object) -> str:
    return f"<code>{_cell(text)}</code>"


def api_page() -> str:
    """Return the Markdown of the API reference: a mkdocstrings block per public name, grouped by layer."""
    hf_bpe = _import_checkout()
    exports: dict[str, str] = hf_bpe._EXPORTS  # noqa: SLF001 - the name -> defining module table of the package
    groups: dict[str, list[str]] = {title: [] for title in _GROUPS.values()}
    ordered = [n for n in _FIRST if n in hf_bpe.__all__] + [n for n in hf_bpe.__all__ if n not in _FIRST]
    for name in ordered:
        if name == "__version__":
            continue
        layer = exports[name].lstrip(".").split(".")[0]
        title = ("Deprecated" if name in _DEPRECATED else
                 _GROUPS["training"] if name in _ENTRY_POINTS else _GROUPS.get(layer, "Other"))
        groups[title] = [*groups.get(title, []), name]
    lines = [
        "# Python API",
        "",
        "Every public name of `hf_bpe` (its `__all__`), generated from the docstrings at each build. Import them",
        "from the package: `import hf_bpe; hf_bpe.train(...)`. The guides show them at work; this page is the",
        "contract: arguments, return values and the errors raised.",
        "",
        f"`hf_bpe.__version__` is the package's version (`{hf_bpe.__version__}` in this build).",
        "",
    ]
    for title, names in groups.items():
        if not names:
            continue
        lines += [f"## {title}", ""]
        if title == "Training":
            lines += ["One entry point per algorithm, each with one return type: the corpus comes first (files, a",
                      "`datasets` Dataset or an iterable of str; after the base for the `extend` calls, one per language",
                      "for `train_parity`), every option is keyword-only.", "",
                      "| algorithm | entry point | returns |", "|---|---|---|",
                      *(f"| {what} | `hf_bpe.{name}` | `{returns}` |" for name, what, returns in _ALGORITHMS),
                      ""]
        if title == "Deprecated":
            lines += ["Still working for a release, each with a `DeprecationWarning` naming its replacement:", "",
                      *(f"- `{old}` → `{new}`" for old, new in _DEPRECATED.items()),
                      "- `train(corpus, recipe=...)` → `train_classic(corpus, recipe=...)`",
                      "- `train_sentencepiece(corpus, model_type=\"unigram\")` → `train_unigram(corpus)`", ""]
        for name in names:
            lines += [f"::: hf_bpe.{name}", ""]
    return "\n".join(lines)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return parser._get_formatter()._expand_help(action)  # noqa: SLF001 - argparse's own %(default)s expansion


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | value | default | meaning |", "|---|---|---|---|"]
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public list of a parser's arguments
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):  # noqa: SLF001
            continue
        names = ", ".join(action.option_strings) or action.metavar or action.dest
        takes_value = action.nargs != 0
        value = (action.metavar or action.dest.upper()) if takes_value and action.option_strings else ""
        if takes_value and action.nargs in ("*", "+"):
            value = f"{value or names} ..."
        if action.choices is not None and not isinstance(action.choices, dict):
            value = " / ".join(str(c) for c in action.choices)
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS, [], ()) or not takes_value else _code(default)
        rows.append(f"| {_code(names)} | {_cell(value)} | {shown} | {_cell(_help(parser, action))} |")
    return rows


def cli_page() -> str:
    """Return the Markdown of the command-line reference, read from ``hf-bpe``'s argparse parser."""
    _import_checkout()
    from hf_bpe import cli

    parser = cli._build_parser()  # noqa: SLF001 - the parser main() runs
    lines = [
        "# Command line",
        "",
        "Generated from `hf-bpe`'s own parser at each build, so it says what `hf-bpe COMMAND --help` says. Data go",
        "to stdout and logs to stderr; a user error is one `hf-bpe: error: ...` line and exit status 2. Options may",
        "come before, between or after the FILE arguments. The [CLI guide](../guides/cli.md) shows the commands at",
        "work.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    helps = {choice.dest: choice.help for choice in subparsers._choices_actions}  # noqa: SLF001
    for name in subparsers.choices:
        lines.append(f"| [`{name}`](#hf-bpe-{name}) | {_cell(helps.get(name, ''))} |")
    lines.append("")
    for name, sub in subparsers.choices.items():
        lines += [f"## hf-bpe {name}", "", "```text", sub.format_usage().strip().removeprefix("usage: "), "```", ""]
        if sub.description:
            lines += [sub.description.strip(), ""]
        lines += [*_argument_rows(sub), ""]
        if sub.epilog:
            lines += ["```text", sub.epilog.strip("\n"), "```", ""]
    return "\n".join(lines)


def sentencepiece_options_page() -> str:
    """Return the Markdown of the spm_train options hf_bpe's SentencePiece trainers accept, from their tables."""
    _import_checkout()
    from hf_bpe.training.sentencepiece.bpe import SPM_DEFAULTS
    from hf_bpe.training.sentencepiece.options import SPM_NO_EFFECT, SPM_ONLY, SPM_REFUSED
    from hf_bpe.training.unigram.reference import UNIGRAM_DEFAULTS

    lines = [
        "# SentencePiece options",
        "",
        "`hf_bpe.train_sentencepiece(corpus, vocab_size=N, **options)` and `hf-bpe train --algorithm sentencepiece",
        "--spm KEY=VALUE` take spm_train's options by their own names, with sentencepiece 0.2.3's defaults. Every",
        "field of its `TrainerSpec` and `NormalizerSpec` (and spm_train's flags) is in exactly one table below;",
        "anything else is refused with the closest names. Generated from the tables the trainer checks options",
        "with (`hf_bpe/training/sentencepiece/bpe.py`, `sentencepiece/options.py`, `unigram/reference.py`).",
        "",
        "Defaults are shown as Python values (`train_sentencepiece(byte_fallback=True)`); on the command line",
        "booleans are `true`/`false` and lists are comma-separated (`--spm user_defined_symbols=<a>,<b>`).",
        "",
        "## Reproduced (BPE and unigram)",
        "",
        "Each changes the model exactly as it changes spm_train's (see [Exactness](../exactness.md)). A value that",
        "hf_bpe cannot reproduce exactly is refused with a message that names the option and the reason.",
        "",
        "| option | default |",
        "|---|---|",
        *(f"| `{name}` | {_code(repr(value))} |" for name, value in SPM_DEFAULTS.items()),
        "",
        "## Reproduced, unigram only (`model_type=unigram`)",
        "",
        "| option | default |",
        "|---|---|",
        *(f"| `{name}` | {_code(repr(value))} |" for name, value in UNIGRAM_DEFAULTS.items()),
        "",
        "## Accepted, without effect on a BPE model",
        "",
        "Type-checked, then unused, because they cannot change a BPE model (each checked against spm_train).",
        "The unigram ones among them do shape unigram models (table above).",
        "",
        "| option | spm_train's default | why it has no effect |",
        "|---|---|---|",
        *(f"| `{name}` | {_code(repr(default))} | {_cell(why)} |" for name, (default, why) in SPM_NO_EFFECT.items()),
        "",
        "## Accepted at these values only",
        "",
        "| option | values | why not others |",
        "|---|---|---|",
        *(f"| `{name}` | {', '.join(_code(repr(v)) for v in values)} | {_cell(why)} |"
          for name, (values, why) in SPM_ONLY.items()),
        "",
        "## Refused",
        "",
        "| option | instead |",
        "|---|---|",
        *(f"| `{name}` | {_cell(why)} |" for name, why in SPM_REFUSED.items()),
        "",
    ]
    return "\n".join(lines)


PAGES = {
    "reference/api.md": api_page,
    "reference/cli.md": cli_page,
    "reference/sentencepiece-options.md": sentencepiece_options_page,
}


def _title(page: Path) -> str:
    """The page's first ``# `` heading, or its file name."""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page.stem


def on_config(config: Any) -> Any:
    """List every ``docs/guides/*.md`` page under Guides in the nav, appending those mkdocs.yml does not name yet
    (mkdocs event), so a guide added on a branch is in the site as soon as it is merged."""
    guides = next((entry["Guides"] for entry in config.nav or [] if isinstance(entry, dict) and "Guides" in entry),
                  None)
    if guides is None:
        return config
    listed = {path for entry in guides for path in (entry.values() if isinstance(entry, dict) else [entry])}
    for page in sorted((Path(config.docs_dir) / "guides").glob("*.md")):
        if f"guides/{page.name}" not in listed:
            guides.append({_title(page): f"guides/{page.name}"})
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site's files (mkdocs event)."""
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
