"""Shared fixtures: where the real reference data lives, and skipping cleanly when it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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

