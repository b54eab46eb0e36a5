"""The app's `/live` shows the fleet's unfinished batches under the live sessions, and which waits
for an approval (issue 39), as `coder-tui sessions --live` does (tests/fleet/test_fleet_live.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fleet.conftest import RedisServer
from tests.fleet.test_fleet_live import batches, broker  # noqa: F401 - the fixture, shared
from tests.tui.conftest import APP_SIZE, ready, wait_for
from tests.tui.test_app_sessions import submit


async def test_live_shows_the_batch_that_waits_for_you(make_app: Any, broker: RedisServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_FLEET_BROKER", broker.url)
    batches(broker)
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "/live")
        await wait_for(pilot, lambda: any("Fleet batches:" in n.message for n in app.query("Notice")),
                       what="the live view with the fleet")
        shown = next(n.message for n in app.query("Notice") if "Fleet batches:" in n.message)
        assert "bwait001" in shown and "waiting for you: 1 approval(s)" in shown and "bdone001" not in shown
