"""The documentation site builds with warnings as errors, and its API reference has every public name.

The build is ``mkdocs build --strict`` on ``mkdocs.yml`` into a temporary folder (the ``docs`` extra, which the
``test`` extra includes); the reference pages it generates come from ``scripts/docs_hooks.py``.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.docs, pytest.mark.slow]


def _mkdocs_missing() -> str | None:
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"{module} is not installed (pip install -e '.[docs]')"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _mkdocs_missing()
    if reason is not None:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in ("index.html", "getting-started/index.html", "guides/byte-level-bpe/index.html",
                 "reference/api/index.html", "reference/cli/index.html", "reference/sentencepiece-options/index.html",
                 "exactness/index.html", "benchmarks/index.html", "architecture/index.html", "changelog/index.html"):
        assert (site / page).is_file(), f"{page} is missing from the built site"


def test_every_public_name_has_an_entry_in_the_api_reference(site):
    import hf_bpe

    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="([^"]+)"', page))
    missing = [name for name in hf_bpe.__all__ if name != "__version__" and f"hf_bpe.{name}" not in anchors]
    assert not missing, f"public names without an entry in the API reference: {missing}"
    assert "hf_bpe.__version__" in page or "__version__" in page


@pytest.mark.parametrize("cls", ["BPEModel", "UnigramModel", "ClassicModel", "HFBPETokenizer",
                                 "HFSentencePieceTokenizer"])
def test_the_public_methods_of_the_model_classes_are_in_the_reference(site, cls):
    import hf_bpe

    page = html.unescape((site / "reference" / "api" / "index.html").read_text(encoding="utf-8"))
    klass = getattr(hf_bpe, cls)
    methods = [name for name, value in vars(klass).items()
               if not name.startswith("_") and callable(getattr(klass, name, None)) and getattr(value, "__doc__", None)]
    assert methods, cls
    missing = [m for m in methods if f'id="hf_bpe.{cls}.{m}"' not in page]
    assert not missing, f"{cls}'s public methods without an entry: {missing}"


def test_the_cli_reference_lists_every_command_and_option(site):
    from hf_bpe import cli

    page = html.unescape((site / "reference" / "cli" / "index.html").read_text(encoding="utf-8"))
    parser = cli._build_parser()  # noqa: SLF001 - the parser main() runs
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")  # noqa: SLF001
    for name, sub in commands.choices.items():
        assert f"hf-bpe {name}" in page
        for action in sub._actions:  # noqa: SLF001
            for option in action.option_strings:
                assert option in page, f"hf-bpe {name} {option} is missing from the CLI reference"


def test_a_guide_missing_from_the_nav_is_listed_under_guides(tmp_path):
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "scripts" / "docs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "known.md").write_text("# Known\n", encoding="utf-8")
    (tmp_path / "guides" / "new-job.md").write_text("Intro\n\n# A new job\n", encoding="utf-8")
    config = SimpleNamespace(nav=[{"Home": "index.md"}, {"Guides": [{"Known": "guides/known.md"}]}],
                             docs_dir=str(tmp_path))
    hooks.on_config(config)
    assert config.nav[1]["Guides"] == [{"Known": "guides/known.md"}, {"A new job": "guides/new-job.md"}]
