"""Shared test fixtures: where the real recordings live."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REALDATA = (REPO / ".." / "shared" / "realdata").resolve()


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The folder of real recordings (../shared/realdata); tests skip nothing: it must exist."""
    assert REALDATA.is_dir(), f"real recordings not found at {REALDATA}"
    return REALDATA
