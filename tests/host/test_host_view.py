"""`serve`'s browser view (agent/frontends/serve/view.py) on a session live in the session host:
the page follows it through serve, and an approval answered by another front end of the host shows
resolved on the page, and by whom. In headless Chromium (skipped without it, as in
tests/serve/test_serve_view.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.host.client import HostClient
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import next_of
from tests.serve.conftest import TOKEN, make_serve  # noqa: F401 - make_serve is a fixture
from tests.serve.test_serve_view import WAIT, page  # noqa: F401 - page is a fixture


@pytest.fixture
def background() -> Iterator[Any]:
    """An event loop in a thread for the host's clients (the page's driver runs its own in this one)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(90)

    yield run
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


@pytest.mark.slow
def test_the_page_shows_who_answered_an_approval_of_a_host_session(fake_llm: FakeLLM, ws: Path, start_host,
                                                                   make_serve, page, background) -> None:
    host = start_host()
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="b.txt", content="b\n")]), Reply(text="Wrote it."))
    terminal = background(HostClient.connect(host.socket))
    try:
        opened = background(terminal.request("open", session="new", client="terminal", options=host.options(fake_llm, ws)))
        background(terminal.request("prompt", text="write b.txt"))
        asked = background(next_of(terminal, "approval_required"))
        serve = make_serve()
        page.goto(f"{serve.url}/view#token={TOKEN}&session={opened['session_id']}")
        card = page.locator(".approval")
        card.get_by_role("button", name="Allow").wait_for(timeout=WAIT)
        assert "b.txt" in card.inner_text()
        background(terminal.request("approve", approval_id=asked["approval_id"], decision="allow_once"))
        card.locator(".outcome", has_text="Allowed by terminal").wait_for(timeout=WAIT)
        page.locator("#log").get_by_text("Wrote it.").wait_for(timeout=WAIT)
    finally:
        background(terminal.close())
    assert (ws / "b.txt").read_text() == "b\n"
