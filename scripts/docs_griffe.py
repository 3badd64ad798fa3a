"""A griffe extension for the docs site: show a docstring's bare ``>>>`` examples as Python console blocks.

hf_bpe's docstrings end with doctests that the test suite runs (``--doctest-modules``), not under a Google
``Examples:`` header. Rendered as Markdown, such lines would run together and ``x[a][b]`` would read as a link;
fenced as ``pycon`` they show as a session. Loaded by mkdocs.yml (mkdocstrings' ``extensions`` option).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

# An argument line documenting several parameters at once ("    bos_token, eos_token: ..."), which the Google parser
# would take for one parameter named "bos_token, eos_token" (and find no default for).
_GROUPED = re.compile(r"^(\s+)(\w+(?:, \w+)+): (.*)$")
# Sphinx cross-reference roles some docstrings use (":func:`hf_bpe.train`"): shown as code, the role dropped.
_ROLE = re.compile(r":(?:func|meth|class|attr|data|mod|exc|obj|const):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """Return ``text`` with each run of unindented ``>>>`` lines and their output fenced as ``pycon``, Sphinx roles
    (``:func:`name```) as plain code, and an argument line naming several parameters as one line per parameter.

    >>> fence_doctests("See :func:`f`.\\n\\n>>> 1 + 1\\n2").splitlines()
    ['See `f`.', '', '```pycon', '>>> 1 + 1', '2', '```']
    >>> fence_doctests("Args:\\n    a, b: the ends.").splitlines()
    ['Args:', '    a: as `b`.', '    b: (`a`, `b`) the ends.']
    """
    text = _ROLE.sub(r"`\1`", text)
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if (grouped := _GROUPED.match(line)) and not inside:
            indent, names, what = grouped.group(1), grouped.group(2).split(", "), grouped.group(3)
            out += [f"{indent}{name}: as `{names[-1]}`." for name in names[:-1]]
            line = f"{indent}{names[-1]}: ({', '.join(f'`{n}`' for n in names)}) {what}"
        if not inside and line.startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence the doctests of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: ARG002 - griffe's hook signature
        """Rewrite the object's docstring before it is parsed."""
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
