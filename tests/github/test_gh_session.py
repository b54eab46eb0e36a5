"""The agent loop on a GitHub repository without a clone: a scripted model, the fake GitHub."""

from __future__ import annotations

import pytest

from agent.approval import Decision
from agent.session.github import open_pr, status
from tests.fakellm import Reply, call

FILES = {
    "README.md": "# Hello\n\nA greeting library.\n",
    "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n",
    "src/util.py": "def shout(text):\n    return text.upper()\n",
}
EDIT_TWO = Reply(tool_calls=[
    call("patch_file", file_path="src/greet.py", patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}]),
    call("write_file", file_path="README.md", content="# Hello\n\nA friendlier greeting library.\n"),
])
PR = Reply(tool_calls=[call("create_pull_request", title="Friendlier greeting", body="As asked.")])


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", FILES)


def work_commits(repo, branch: str) -> list:
    store = repo.store
    out = store.repo.git.rev_list(f"refs/heads/{branch}", "--not", "refs/heads/main")
    return [store.repo.commit(sha) for sha in out.splitlines()]


async def test_run_that_edits_two_files_publishes_exactly_one_commit(make_gh_session, repo, gh_server):
    main = repo.store.ref_sha("refs/heads/main")
    h = await make_gh_session(prompt="friendlier greeting")
    h.script(EDIT_TWO, PR, Reply(text="Done."))
    complete = await h.run("friendlier greeting")
    assert complete.success, [e for e in h.events if e.type in ("error", "tool_result")]
    branch = h.workspace.remote.work_branch
    assert branch == "coder-tui/friendlier-greeting"
    commits = work_commits(repo, branch)
    assert len(commits) == 1
    changed = set(repo.store.repo.git.diff("--name-only", "main", branch).split())
    assert changed == {"README.md", "src/greet.py"}
    assert commits[0].summary == "Friendlier greeting"
    pull = gh_server.repo("octo/hello").pulls[1]
    assert pull["head"] == branch and pull["base"] == "main"
    assert "Opened pull request #1" in h.tool_results()[-1].output
    assert [e.path for e in h.of("file_changed")] == ["src/greet.py", "README.md"]
    assert repo.store.ref_sha("refs/heads/main") == main  # never the default branch
    repo.store.fsck()


async def test_ask_mode_deny_leaves_nothing(make_gh_session, repo, gh_server):
    h = await make_gh_session(mode="ask", decisions=[Decision("deny"), Decision("deny"), Decision("deny")])
    h.script(EDIT_TWO, PR, Reply(text="Understood."))
    await h.run()
    assert [e.decision for e in h.of("approval_resolved")] == ["deny", "deny", "deny"]
    assert h.workspace.remote.overlay == {}
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}
    assert gh_server.repo("octo/hello").pulls == {}
    assert gh_server.calls("POST", r".") == []


async def test_plan_mode_blocks_comments_and_pull_requests(make_gh_session, repo, gh_server):
    gh_server.add_issue("octo/hello", "Be friendlier", "Say hi")
    h = await make_gh_session(mode="plan")
    h.script(Reply(tool_calls=[call("get_issue", number=1), call("add_issue_comment", issue_number=1, body="on it"),
                               PR.tool_calls[0]]), Reply(text="ok"))
    await h.run()
    results = h.tool_results()
    assert results[0].ok and "Issue #1 [open] Be friendlier" in results[0].output
    assert not results[1].ok and "blocked in plan mode" in results[1].error
    assert not results[2].ok and "blocked in plan mode" in results[2].error
    assert gh_server.repo("octo/hello").comments[1] == []


async def test_ask_mode_comment_is_asked_then_posted(make_gh_session, repo, gh_server):
    gh_server.add_issue("octo/hello", "Be friendlier", "Say hi")
    h = await make_gh_session(mode="ask", decisions=[Decision("allow_once")])
    h.script(Reply(tool_calls=[call("add_issue_comment", issue_number=1, body="Working on it.")]), Reply(text="ok"))
    await h.run()
    approval = h.of("approval_required")[0]
    assert approval.kind == "network" and "comment on issue #1 of octo/hello" in approval.summary
    assert gh_server.repo("octo/hello").comments[1][-1]["body"] == "Working on it."


async def test_moved_branch_is_rebased_by_the_tool(make_gh_session, repo):
    h = await make_gh_session(prompt="two steps")
    h.script(Reply(tool_calls=[call("write_file", file_path="README.md", content="# Hi\n\nA greeting library.\n")]),
             PR, Reply(text="first"))
    await h.run()
    branch = h.workspace.remote.work_branch
    repo.store.commit_files(branch, {"src/util.py": "def shout(text):\n    return text.upper() + '!'\n"}, "theirs")
    h.script(Reply(tool_calls=[call("patch_file", file_path="src/greet.py",
                                    patches=[{"old_text": "'Hello '", "new_text": "'Hey '"}])]),
             Reply(tool_calls=[call("create_pull_request", title="More")]), Reply(text="second"))
    await h.run("more")
    assert "A pull request was already open" in h.tool_results()[-1].output
    head = repo.store.ref_sha(f"refs/heads/{branch}")
    assert "'Hey '" in repo.store.file_at(head, "src/greet.py").decode()
    assert "'!'" in repo.store.file_at(head, "src/util.py").decode()
    assert len(work_commits(repo, branch)) == 3  # ours, theirs, ours rebased on theirs


async def test_moved_branch_with_a_conflict_is_refused_and_the_edit_kept(make_gh_session, repo):
    h = await make_gh_session(prompt="conflict")
    h.script(Reply(tool_calls=[call("write_file", file_path="README.md", content="# Hi\n")]), PR, Reply(text="1"))
    await h.run()
    branch = h.workspace.remote.work_branch
    theirs = repo.store.commit_files(branch, {"src/greet.py": "def greet(name):\n    return 'Yo ' + name\n"}, "theirs")
    h.script(Reply(tool_calls=[call("patch_file", file_path="src/greet.py",
                                    patches=[{"old_text": "'Hello '", "new_text": "'Hey '"}])]),
             Reply(tool_calls=[call("create_pull_request", title="More")]), Reply(text="2"))
    await h.run("more")
    error = h.tool_results()[-1].error
    assert "changes overlap them in src/greet.py" in error and "Nothing was published" in error
    assert repo.store.ref_sha(f"refs/heads/{branch}") == theirs
    assert [s.path for s in status(h.workspace).staged] == ["src/greet.py"]


async def test_no_shell_tools_and_the_model_is_told_why(make_gh_session, repo):
    h = await make_gh_session()
    offered = {s["function"]["name"] for s in h.session.registry.schemas(h.workspace)}
    assert {"read_file", "patch_file", "search_code", "create_pull_request", "get_issue"} <= offered
    assert not offered & {"bash_exec", "shell_open", "shell_exec"}
    prompt = await h.session.system_prompt()
    assert "without a clone, so there is no shell" in prompt and "coder-tui/" in prompt


async def test_read_list_search_and_project_info(make_gh_session, repo, monkeypatch):
    import agent.workspaces.github as ghws

    monkeypatch.setattr(ghws, "SEARCH_FILE_CAP", 2)
    seen: list[tuple[str, int, int]] = []
    h = await make_gh_session()
    h.session.ctx.extras["progress"] = lambda what, done, total: seen.append((what, done, total))
    h.script(Reply(tool_calls=[call("list_dir", path="src"), call("search_code", pattern="def "),
                               call("get_project_info"), call("read_file", file_path="src/util.py")]),
             Reply(text="ok"))
    await h.run()
    listing, search, info, read = (r.output for r in h.tool_results())
    assert "greet.py" in listing and "util.py" in listing
    assert "searched the first 2 of 3 files" in search
    assert "kind: GitHub repository" in info and "files (not ignored): 3" in info
    assert "return text.upper()" in read
    assert seen and seen[-1] == ("search", 2, 2)


async def test_issue_becomes_the_task_and_names_the_branch(make_gh_session, repo, gh_server):
    gh_server.add_issue("octo/hello", "Greeting is rude", "Make it polite.", comments=("Agreed.",))
    h = await make_gh_session(issue=1, prompt="")
    assert h.opened.prompt.startswith("Resolve GitHub issue #1: Greeting is rude")
    assert "Agreed." in h.opened.prompt
    assert h.workspace.remote.work_branch == "coder-tui/issue-1-greeting-is-rude"


async def test_status_and_pr_command(make_gh_session, repo, gh_server):
    h = await make_gh_session(prompt="status")
    h.script(EDIT_TWO, Reply(text="edited"))
    await h.run()
    summary = status(h.workspace)
    assert summary.repository == "octo/hello" and summary.ref == "main"
    assert [s.path for s in summary.staged] == ["README.md", "src/greet.py"]
    assert summary.rate is not None and summary.rate.limit == 5000 and summary.rate.remaining < 5000
    info = await open_pr(h.workspace)
    assert info.created and info.published is not None
    assert gh_server.repo("octo/hello").issues[info.number]["title"] == "Update README.md and src/greet.py"
    assert status(h.workspace).staged == [] and status(h.workspace).pull_request == info.number


async def test_resume_keeps_the_unpublished_overlay(make_gh_session, repo, gh_server):
    first = await make_gh_session(prompt="resume me")
    first.script(EDIT_TWO, Reply(text="edited, not published"))
    await first.run()
    branch = first.workspace.remote.work_branch
    session_id = first.session.session_id
    assert gh_server.calls("POST", r".") == []  # nothing left the machine
    await first.session.close()  # one writer per session: the resumed one opens after

    second = await make_gh_session(resume=session_id, prompt="publish")
    remote = second.workspace.remote
    assert remote.work_branch == branch
    assert [s.path for s in remote.staged()] == ["README.md", "src/greet.py"]
    assert "'Hi '" in await second.workspace.read_text("src/greet.py")
    second.script(PR, Reply(text="published"))
    await second.run("publish it")
    assert len(work_commits(repo, branch)) == 1
    assert set(repo.store.repo.git.diff("--name-only", "main", branch).split()) == {"README.md", "src/greet.py"}
    await second.session.close()

    third = await make_gh_session(resume=session_id, prompt="after")
    assert third.workspace.remote.overlay == {}  # published paths were recorded as cleared
    assert third.workspace.remote.published_head == repo.store.ref_sha(f"refs/heads/{branch}")


async def test_rate_limit_wait_becomes_a_retrying_event(make_gh_session, repo, gh_server):
    h = await make_gh_session()
    gh_server.exhaust_rate_limit(reset_in=1.0)
    h.script(Reply(tool_calls=[call("read_file", file_path="src/util.py")]), Reply(text="ok"))
    await h.run()
    retrying = h.of("retrying")
    assert retrying and "GitHub rate limit reached while reading blob" in retrying[0].why
    assert h.tool_results()[0].ok


async def test_resume_restores_file_text_that_looks_like_a_secret(make_gh_session, repo):
    text = 'API_KEY = "sk-test-abcdefghijklmnopqrstuvwxyz012345"  # fixture\n'
    first = await make_gh_session(prompt="secret looking")
    first.script(Reply(tool_calls=[call("write_file", file_path="src/keys.py", content=text)]), Reply(text="ok"))
    await first.run()
    session_file = first.session.writer.path
    assert "sk-test-abcdefghijklmnopqrstuvwxyz012345" not in session_file.read_text()
    await first.session.close()  # one writer per session
    second = await make_gh_session(resume=first.session.session_id, prompt="go on")
    assert await second.workspace.read_text("src/keys.py") == text
