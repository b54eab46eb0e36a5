"""`--clone`: a blobless clone of a file:// remote, worked on with shell tools, undone, pushed."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from agent.github.errors import PublishConflict
from agent.session.github import status
from tests.fakellm import Reply, call
from tests.github.conftest import TOKEN

FILES = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}
PR = Reply(tool_calls=[call("create_pull_request", title="Friendlier greeting")])


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", FILES)


def pushed(repo, branch: str) -> list:
    out = repo.store.repo.git.rev_list(f"refs/heads/{branch}", "--not", "refs/heads/main")
    return [repo.store.repo.commit(sha) for sha in out.splitlines()]


async def test_clone_edit_undo_push(make_gh_session, repo, gh_server, isolated_home):
    stages: list[str] = []
    h = await make_gh_session(clone=True, prompt="friendly clone", progress=lambda s, d, t: stages.append(s))
    ws = h.workspace
    root = Path(ws.root)
    assert root.is_relative_to(isolated_home / "cache") and (root / "src" / "greet.py").exists()
    clone = git.Repo(root)
    assert clone.git.config("remote.origin.partialclonefilter") == "blob:none"
    assert clone.active_branch.name == "coder-tui/friendly-clone"
    assert "receiving objects" in stages
    offered = {s["function"]["name"] for s in h.session.registry.schemas(ws)}
    assert {"bash_exec", "create_pull_request", "get_issue"} <= offered

    h.script(Reply(tool_calls=[call("bash_exec", command="echo scratch > notes.txt"),
                               call("write_file", file_path="README.md", content="# Wrong\n")]), Reply(text="1"))
    await h.run("first try")
    assert (root / "notes.txt").exists()
    await h.session.undo()  # back to before the first try: both the shell's file and the edit
    assert not (root / "notes.txt").exists() and (root / "README.md").read_text() == "# Hello\n"

    h.script(Reply(tool_calls=[call("patch_file", file_path="src/greet.py",
                                    patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}])]), PR, Reply(text="2"))
    await h.run("second try")
    assert h.tool_results()[-1].ok, h.tool_results()[-1].error
    commits = pushed(repo, "coder-tui/friendly-clone")
    assert len(commits) == 1 and commits[0].summary == "Friendlier greeting"
    diff = repo.store.repo.git.diff("--name-only", "main", "coder-tui/friendly-clone").split()
    assert diff == ["src/greet.py"]
    assert gh_server.repo("octo/hello").pulls[1]["head"] == "coder-tui/friendly-clone"
    assert TOKEN not in (root / ".git").read_text() + (Path(clone.git_dir).parent.parent / "config").read_text()
    assert status(ws).staged == [] and status(ws).pull_request == 1


async def test_clone_is_reused_and_fetched(make_gh_session, repo, isolated_home):
    first = await make_gh_session(clone=True, prompt="one")
    common = Path(git.Repo(first.workspace.root).common_dir).resolve()
    marker = common / "coder-tui-test-marker"
    marker.write_text("kept")
    newer = repo.store.commit_files("main", {"NEW.md": "new\n"}, "newer")
    second = await make_gh_session(clone=True, prompt="two")
    assert Path(git.Repo(second.workspace.root).common_dir).resolve() == common and marker.exists()
    assert second.workspace.root != first.workspace.root
    assert git.Repo(second.workspace.root).head.commit.hexsha == newer
    assert (Path(second.workspace.root) / "NEW.md").exists()
    assert not (Path(first.workspace.root) / "NEW.md").exists()  # sessions never share files


async def test_push_rebases_onto_a_moved_branch_or_refuses(make_gh_session, repo):
    h = await make_gh_session(clone=True, prompt="moving")
    root = Path(h.workspace.root)
    (root / "README.md").write_text("# Hello there\n")
    first = await h.workspace.publish("first")
    branch = first.branch
    theirs = repo.store.commit_files(branch, {"OTHER.md": "theirs\n"}, "theirs")
    (root / "src" / "greet.py").write_text("def greet(name):\n    return 'Hi ' + name\n")
    second = await h.workspace.publish("second")
    assert second.rebased_onto == theirs
    assert repo.store.repo.commit(second.commit).parents[0].hexsha == theirs

    blocked = repo.store.commit_files(branch, {"src/greet.py": "def greet(name):\n    return 'Yo ' + name\n"}, "x")
    (root / "src" / "greet.py").write_text("def greet(name):\n    return 'Hey ' + name\n")
    with pytest.raises(PublishConflict, match="nothing was pushed"):
        await h.workspace.publish("third")
    assert repo.store.ref_sha(f"refs/heads/{branch}") == blocked
    assert "'Hey '" in git.Repo(root).head.commit.tree["src/greet.py"].data_stream.read().decode()


async def test_resume_a_clone_session(make_gh_session, repo):
    first = await make_gh_session(clone=True, prompt="resume clone")
    first.script(Reply(tool_calls=[call("write_file", file_path="README.md", content="# Resumed\n")]), Reply(text="1"))
    await first.run()
    await first.session.close()  # one writer per session: the first closes before it is resumed
    second = await make_gh_session(clone=True, resume=first.session.session_id, prompt="go on")
    assert second.workspace.root == first.workspace.root
    assert [f.path for f in status(second.workspace).staged] == ["README.md"]
