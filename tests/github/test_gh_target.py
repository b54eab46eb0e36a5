"""open_target on GitHub repositories: the issue becomes the prompt, the GitHub tools come with
the target, the session is bound to it, and failures are one TargetError with a hint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.approval import QueueApprover
from agent.config import Config
from agent.events import Retrying
from agent.session.open import open_session
from agent.session.ports import SessionPorts
from agent.session.record import SessionStore
from agent.session.target import TargetError, TargetSpec, open_target
from tests.github.conftest import TOKEN

FAST = {"write_interval": 0.0}


@pytest.fixture
def on_fake_github(gh_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("CODER_TUI_GITHUB_API_URL", gh_server.url)
    gh_server.create_repo("octo/hello", {"README.md": "# Hello\n"})
    return gh_server


async def test_an_issue_becomes_the_prompt_and_the_github_tools_come_along(on_fake_github: Any,
                                                                         tmp_path: Path) -> None:
    number = on_fake_github.add_issue("octo/hello", "Crash on start", "It crashes.", comments=("Same here",))
    spec = TargetSpec(github="octo/hello", issue=number, prompt="keep the fix small")
    target = await open_target(spec, Config(), settings=FAST)
    assert (target.kind, target.label) == ("github", "github:octo/hello")
    assert target.prompt.startswith("Resolve GitHub issue #1: Crash on start\n\nIt crashes.")
    assert "Same here" in target.prompt and target.prompt.endswith("\n\nkeep the fix small")
    registry = target.registry()
    assert registry is not None and {"get_issue", "create_pull_request"} <= set(registry.names)
    session = open_session(target, Config(model="openai/x"), SessionPorts(QueueApprover(), lambda event: None),
                           store=SessionStore(tmp_path / "sessions"))
    assert "get_issue" in session.registry.names
    assert target.github is not None and target.github.client.notify == session.emit  # waits become events
    await session.close()
    await target.close()


async def test_rate_limit_waits_while_opening_go_to_emit(on_fake_github: Any) -> None:
    seen: list[Any] = []
    on_fake_github.exhaust_rate_limit(reset_in=1.0)
    target = await open_target(TargetSpec(github="octo/hello"), Config(), emit=seen.append, settings=FAST)
    await target.close()
    assert seen and isinstance(seen[0], Retrying)
    assert "GitHub rate limit reached while reading octo/hello" in seen[0].why


@pytest.mark.parametrize("spec, message", [
    ("octo/missing", "--github: repository octo/missing not found on GitHub"),
    ("not a repo", "--github: 'not a repo' is not a repository; use OWNER/REPO"),
])
async def test_a_repository_that_cannot_open_is_a_target_error(on_fake_github: Any, spec: str,
                                                               message: str) -> None:
    with pytest.raises(TargetError) as info:
        await open_target(TargetSpec(github=spec), Config(), settings=FAST)
    assert info.value.message.startswith(message) and "repository or token" in info.value.hint


async def test_resuming_an_unknown_session_on_github_is_a_resume_error(on_fake_github: Any,
                                                                       tmp_path: Path) -> None:
    with pytest.raises(TargetError) as info:
        await open_target(TargetSpec(github="octo/hello", resume="nope"), Config(),
                          store=SessionStore(tmp_path / "sessions"), settings=FAST)
    assert info.value.message.startswith("--resume: no session 'nope'") and "coder-tui sessions" in info.value.hint
