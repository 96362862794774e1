"""Shared fixtures: every test runs with its own temporary data folder."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Point ATTN_TUTOR_HOME at a fresh temp dir so no test touches real progress."""
    home = tmp_path_factory.mktemp("attn-home")
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(home))
    return home
