"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from drawn_dice import PHOTOS


@pytest.fixture
def photos() -> Path:
    """The labelled dice photos; tests using them skip when they are not here."""
    if not (PHOTOS / "images").is_dir():
        pytest.skip(f"dice photos not found at {PHOTOS} (set BUNCO_DICE_PHOTOS)")
    return PHOTOS
