"""The layers import in one direction only, and no two modules import each other (ARCHITECTURE.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hf_bpe"


def test_architecture_layers_contract_holds():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_architecture_has_no_import_cycles():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("hf_bpe")
    # Tarjan's strongly connected components over every import, lazy (inside a function) ones included.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert cycles == []


def test_architecture_no_python_module_over_700_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700}
    assert long == {}


def test_architecture_public_api_resolves_lazily():
    import hf_bpe

    assert set(hf_bpe.__all__) == {*hf_bpe._EXPORTS, "__version__"}
    for name in hf_bpe.__all__:
        assert getattr(hf_bpe, name) is not None, name
    done = subprocess.run([sys.executable, "-c", "import sys, hf_bpe; print(sorted(m for m in sys.modules "
                           "if m.startswith(('transformers', 'regex', 'hf_bpe.core._core', 'numpy'))))"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
