"""Seed 003's StreamAgent: a stream profile with `save_code_blocks = true` proposes the answer's
code blocks that name a file as those files, through the approvals of the mode."""

from __future__ import annotations

from typing import Any

import pytest

from agent.approval import Decision
from agent.codeblocks import named_blocks
from agent.profiles import user_dir
from tests.fakellm import Reply

ANSWER = ("Two files:\n\n**src/app.py**\n```python\nprint('hi')\n```\n\n"
          "```python title=\"src/util.py\"\nX = 1\n```\n\nAn example, not a file:\n```sh\nls\n```\n")


@pytest.fixture
def writer_profile() -> None:
    folder = user_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "writer.toml").write_text('description = "writes files"\nagent = "stream"\nsave_code_blocks = true\n')


async def test_code_blocks_become_files_through_approval(make_session: Any, writer_profile: None) -> None:
    h = make_session(mode="ask", profile="writer", files={"src/util.py": "X = 0\n"},
                     decisions=[Decision("allow_once"), Decision("deny", feedback="keep it")])
    h.script(Reply(text=ANSWER))
    complete = await h.run("make an app")
    assert complete.completion_reason == "answered" and len(h.llm.requests) == 1
    assert "tools" not in h.llm.requests[0]  # the stream agent still offers no tools
    assert [r.tool for r in h.approver.requests] == ["write_file", "write_file"]
    assert h.read("src/app.py") == "print('hi')\n" and h.read("src/util.py") == "X = 0\n"  # the second was denied
    assert [(e.path, e.lines) for e in h.of("file_ready")] == [("src/app.py", 1)]


async def test_plan_mode_saves_nothing_and_the_ask_profile_never_proposes(make_session: Any,
                                                                         writer_profile: None) -> None:
    h = make_session(mode="plan", profile="writer")
    h.script(Reply(text=ANSWER))
    await h.run("make an app")
    assert not h.of("file_ready") and not (h.root / "src" / "app.py").exists()
    ask = make_session(mode="allow", profile="ask", root=h.root.parent / "other")
    ask.script(Reply(text=ANSWER))
    await ask.run("make an app")
    assert not ask.of("tool_call") and not (ask.root / "src").exists()


def test_only_blocks_that_name_a_relative_path_are_files() -> None:
    text = ("```python ../escape.py\nx\n```\n\n/etc/passwd\n```\nroot\n```\n\n`a/b.txt`:\n```\none\n```\n\n"
            "```text a/b.txt\ntwo\n```\n")
    assert named_blocks(text) == [("a/b.txt", "two\n")]  # the later block for a path wins


def test_run_prints_the_saved_files(fake_llm: Any, isolated_home: Any, tmp_path: Any, writer_profile: None) -> None:
    from tests.conftest import TEST_KEY, run_cli, write_files

    ws = write_files(tmp_path / "ws", {"README.md": "x\n"})
    fake_llm.script(Reply(text=ANSWER))
    done = run_cli(isolated_home, "run", "make an app", "--workspace", str(ws), "--model", fake_llm.model,
                   "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--mode", "allow", "--profile", "writer")
    assert done.returncode == 0, done.stderr
    assert "saved src/app.py (1 line) from a code block" in done.stderr  # not "(1 lines)"
    assert (ws / "src" / "util.py").read_text() == "X = 1\n"
