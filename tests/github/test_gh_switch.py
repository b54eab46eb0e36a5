"""set_repository_context (seed 001): the model moves a GitHub session to another repository."""

from __future__ import annotations

import pytest

from agent.approval import Decision
from tests.fakellm import Reply, call

HELLO = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}
DOCS = {"guide.md": "# The guide\n\nRead me first.\n"}
SWITCH = Reply(tool_calls=[call("set_repository_context", owner="octo", repo="docs")])


@pytest.fixture
def repos(gh_server):
    gh_server.create_repo("octo/hello", HELLO)
    docs = gh_server.create_repo("octo/docs", DOCS)
    docs.store.commit_files("release", {"guide.md": "# The released guide\n"}, "Release",
                            ("Owner", "owner@example.test"))
    return gh_server


async def test_the_model_switches_repository_and_a_resume_opens_the_new_one(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello")
    h.script(SWITCH, Reply(tool_calls=[call("read_file", file_path="guide.md")]), Reply(text="Read it."))
    complete = await h.run("read the guide in octo/docs")
    assert complete.success
    outputs = [r.output for r in h.tool_results()]
    assert outputs[0].startswith("Now working on octo/docs@main (work branch coder-tui/")
    assert "Read me first." in outputs[1]
    assert h.workspace.label == "github:octo/docs"
    facts = await h.workspace.read_facts()
    assert facts["workspace"].startswith("octo/docs@main")
    session_id = h.session.writer.session_id
    await h.session.close(keep_workspace=True)
    again = await make_gh_session(spec="octo/hello", resume=session_id)
    assert again.workspace.remote.full_name == "octo/docs"
    assert await again.workspace.read_text("guide.md") == DOCS["guide.md"]


async def test_a_branch_is_honoured(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello")
    h.script(Reply(tool_calls=[call("set_repository_context", owner="octo", repo="docs", ref="release"),
                               call("read_file", file_path="guide.md")]), Reply(text="ok"))
    await h.run()
    assert "released guide" in h.tool_results()[1].output
    assert h.workspace.status().ref == "release"


async def test_unpublished_edits_refuse_the_switch_and_stay(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello")
    h.script(Reply(tool_calls=[call("write_file", file_path="README.md", content="# Hi\n")]), SWITCH,
             Reply(text="stopped"))
    await h.run()
    refused = h.tool_results()[-1]
    assert not refused.ok and "1 unpublished change(s) on octo/hello" in refused.error
    assert h.workspace.label == "github:octo/hello"
    assert await h.workspace.read_text("README.md") == "# Hi\n"


async def test_ask_mode_asks_and_a_denial_keeps_the_repository(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello", mode="ask", decisions=[Decision("deny")])
    h.script(SWITCH, Reply(text="staying"))
    await h.run()
    asked = h.of("approval_required")
    assert len(asked) == 1 and "to octo/docs" in str(asked[0].model_dump())
    assert h.workspace.label == "github:octo/hello"


async def test_plan_mode_blocks_the_switch(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello", mode="plan")
    h.script(SWITCH, Reply(text="planned"))
    await h.run()
    assert not h.tool_results()[0].ok
    assert h.workspace.label == "github:octo/hello"


async def test_an_unknown_repository_is_one_clear_error(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello")
    h.script(Reply(tool_calls=[call("set_repository_context", owner="octo", repo="nope")]), Reply(text="ok"))
    await h.run()
    result = h.tool_results()[0]
    assert not result.ok and "octo/nope not found" in result.error
    assert h.workspace.label == "github:octo/hello"


async def test_a_clone_session_is_told_to_start_again(make_gh_session, repos):
    h = await make_gh_session(spec="octo/hello", clone=True)
    h.script(SWITCH, Reply(text="ok"))
    await h.run()
    result = h.tool_results()[0]
    assert not result.ok and "not available in --clone sessions" in result.error
    assert "--github octo/docs --clone" in result.error
    assert h.workspace.label == "github:octo/hello (clone)"
