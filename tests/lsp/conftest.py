"""The tests about language servers run them (tests/conftest.py turns them off elsewhere)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def language_servers_on(isolated_home: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODER_TUI_LSP", raising=False)
