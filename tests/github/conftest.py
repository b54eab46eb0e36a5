"""Fixtures for GitHub tests: the fake server, clients pointed at it, and a network guard.

Every test here runs with name resolution limited to loopback, and with the API URL variables
pointing at a closed loopback port, so no code path can reach api.github.com or github.com.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.github.auth import NO_TOKEN, TokenSource
from agent.github.client import ClientSettings, GitHubClient
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply
from tests.github.fake_server import FakeGitHub

TOKEN = "ghp_testtokenALICE0123456789abcdef"
READONLY_TOKEN = "ghp_testtokenBOB0123456789abcdefgh"
CLOSED_PORT_URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def no_public_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API URL points at a closed loopback port unless a test sets the fake server's."""
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", CLOSED_PORT_URL)
    for name in ("GITHUB_API_URL", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def gh_server(tmp_path: Path) -> Iterator[FakeGitHub]:
    server = FakeGitHub(tmp_path / "fake-github")
    server.add_token(TOKEN, "alice")
    server.add_token(READONLY_TOKEN, "bob", push=False)
    with server:
        yield server


@pytest.fixture
def make_client(gh_server: FakeGitHub) -> Iterator[Callable[..., GitHubClient]]:
    clients: list[GitHubClient] = []

    def make(token: str | None = TOKEN, **settings: object) -> GitHubClient:
        source = TokenSource(SecretStr(token), "GITHUB_TOKEN") if token else NO_TOKEN
        options: dict[str, object] = {"write_interval": 0.0, **settings}
        client = GitHubClient(ClientSettings(api_url=gh_server.url, token=source, **options))  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@dataclass
class GitHubHarness:
    """An AgentSession on a GitHub workspace, talking to the fake model and the fake GitHub."""

    llm: FakeLLM
    server: FakeGitHub
    opened: Any
    session: Any
    approver: Any
    events: list[Any] = field(default_factory=list)

    @property
    def workspace(self) -> Any:
        return self.opened.workspace

    def script(self, *replies: Reply) -> None:
        self.llm.script(*replies)

    async def run(self, prompt: str = "do it") -> Any:
        return await self.session.run(prompt)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def tool_results(self) -> list[Any]:
        return self.of("tool_result")


@pytest.fixture
async def make_gh_session(fake_llm: FakeLLM, gh_server: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> Any:
    from agent.approval import ScriptedApprover
    from agent.config import Config
    from agent.session.github import GitHubRequest, open_github
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.target import Target

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    created: list[GitHubHarness] = []

    async def make(spec: str = "octo/hello", mode: str = "allow", decisions: list[Any] | None = None,
                   clone: bool = False, issue: int | None = None, prompt: str = "do it",
                   resume: str | None = None, progress: Any = None) -> GitHubHarness:
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode=mode,
                        timeout=10.0, max_retries=1, retry_base_delay=0.01)  # type: ignore[arg-type]
        request = GitHubRequest(spec, clone, issue, prompt, resume)
        opened = await open_github(request, config, progress=progress, settings={"write_interval": 0.0})
        approver = ScriptedApprover(decisions or [])
        harness = GitHubHarness(fake_llm, gh_server, opened, None, approver)
        target = Target(opened.workspace, github=opened)
        harness.session = open_session(target, config, SessionPorts(approver, harness.events.append), resume=resume)
        created.append(harness)
        return harness

    yield make
    for harness in created:
        await harness.session.close()
