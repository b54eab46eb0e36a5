"""`coder-tui serve` in a background thread on a real loopback socket, against the scripted model;
clients speak HTTP to it (httpx here, Node's fetch in test_serve_node.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from tests.conftest import TEST_KEY, write_files
from tests.fakellm import FakeLLM

TOKEN = "test-token-0123456789"


class ServeThread:
    """The server's own event loop in a thread, as `coder-tui serve` runs it (minus argv)."""

    def __init__(self, root: Path, config: Any, max_body: int, max_live: int, rate_limit: int = 30,
                 grace: float = 30.0, hub: dict[str, Any] | None = None) -> None:
        self.root, self.config, self.max_body, self.max_live = root, config, max_body, max_live
        self.hub = hub  # the session options serve's sessions open with in the session host (None: in-process)
        self.rate_limit, self.grace = rate_limit, grace
        self.loop = asyncio.new_event_loop()
        self.url = ""
        self._started = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="serve-test", daemon=True)

    def start(self) -> ServeThread:
        self._thread.start()
        if not self._started.wait(30):
            raise RuntimeError("the serve test server did not start")
        if self._failure is not None:
            raise self._failure
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._setup())
        except BaseException as exc:  # reported by start()
            self._failure = exc
            self._started.set()
            return
        self._started.set()
        self.loop.run_forever()

    async def _setup(self) -> None:
        from agent.frontends.serve.main import Opener, listen
        from agent.frontends.serve.sessions import Sessions
        from agent.session.target import TargetSpec, open_target

        spec = TargetSpec(workspace=str(self.root))
        self.opener = Opener(spec, self.config, await open_target(spec, self.config))
        host = None
        if self.hub is not None:
            from agent.frontends.serve.sessions import InHost

            host = InHost(self.hub, self.root, self.opener.label)
        sessions = Sessions(self.config, self.opener, max_live=self.max_live, grace=self.grace, host=host)
        self.server = await listen(sessions, TOKEN, "127.0.0.1", 0, self.max_body, rate_limit=self.rate_limit)
        self.url = self.server.url

    def stop(self) -> None:
        async def shutdown() -> None:
            await self.server.runner.cleanup()
            await self.opener.close()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.loop.close()


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The data objects of an SSE stream (one `data:` line each, as the server sends them)."""
    for line in lines:
        if line.startswith("data: "):
            yield json.loads(line[6:])


@dataclass
class Serve:
    llm: FakeLLM
    root: Path
    url: str
    headers: dict[str, str] = field(default_factory=lambda: {"Authorization": f"Bearer {TOKEN}"})

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=60, **kwargs)

    def chat(self, text: str, **body: Any) -> tuple[httpx.Response, list[dict[str, Any]]]:
        """A whole streamed turn: the response and its events."""
        payload = {"messages": [{"role": "user", "content": text}], **body}
        with self.client() as client, client.stream("POST", "/api/chat", json=payload) as response:
            return response, list(sse_events(response.iter_lines()))

    def sessions(self) -> list[dict[str, Any]]:
        with self.client() as client:
            return client.get("/api/sessions").json()["sessions"]

    def wait_for(self, condition: Callable[[], Any], what: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def make_serve(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Callable[..., Serve]]:
    from agent.config import Config

    started: list[ServeThread] = []

    def make(mode: str = "allow", files: dict[str, str] | None = None, max_body: int = 1 << 20,
             workflow: str = "direct", timeout: float = 20.0, max_live: int = 64, rate_limit: int = 30,
             grace: float = 30.0, hub: bool = False) -> Serve:
        root = write_files(tmp_path / "ws", files or {})
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode=mode,
                        timeout=timeout, max_retries=0, retry_base_delay=0.01, workflow=workflow)  # type: ignore[arg-type]
        options = {"workspace": str(root), "model": fake_llm.model, "api_base": fake_llm.url, "api_key": TEST_KEY,
                   "mode": mode, "workflow": workflow}
        thread = ServeThread(root, config, max_body, max_live, rate_limit, grace, options if hub else None).start()
        started.append(thread)
        return Serve(fake_llm, root, thread.url)

    yield make
    for thread in started:
        thread.stop()
