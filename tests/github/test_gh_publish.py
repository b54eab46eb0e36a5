"""Publishing the overlay: exactly one commit on the work branch, real history in the bare repo."""

from __future__ import annotations

import git
import pytest

from agent.github.errors import GitHubError, PermissionDenied, PublishConflict, TokenRequired
from agent.github.publish import publish
from agent.github.remote import RemoteRepo
from agent.github.spec import RepoSpec
from tests.github.conftest import READONLY_TOKEN

FILES = {
    "README.md": "# Hello\n\nA small project.\n",
    "src/app.py": "def main():\n    print('hi')\n    return 0\n\n\ndef helper():\n    return 42\n",
    "docs/notes.txt": "alpha\r\nbeta\r\n",
}


@pytest.fixture
def repo(gh_server):
    fake = gh_server.create_repo("octo/hello", FILES)
    fake.store.commit_files("main", {"bin/run.sh": "#!/bin/sh\necho run\n"}, "add script", mode="100755")
    return fake


def changed_files(store, commit: str) -> dict[str, str]:
    out = store.repo.git.diff_tree("--no-commit-id", "--name-status", "-r", f"{commit}^", commit)
    return {line.split("\t")[1]: line.split("\t")[0] for line in out.splitlines()}


async def open_remote(make_client, task="Improve the app", **kwargs) -> RemoteRepo:
    return await RemoteRepo.open(make_client(**kwargs), RepoSpec("octo", "hello"), task=task)


async def test_two_edits_become_one_commit_on_the_work_branch(gh_server, make_client, repo):
    main_before = repo.store.ref_sha("refs/heads/main")
    remote = await open_remote(make_client)
    await remote.stage("src/app.py", FILES["src/app.py"].replace("'hi'", "'hello'"))
    await remote.stage("README.md", FILES["README.md"] + "More.\n")
    result = await publish(remote)

    head = repo.store.ref_sha("refs/heads/coder-tui/improve-the-app")
    assert result.commit == head and result.created_branch and result.rebased_onto is None
    commit = repo.store.repo.commit(head)
    assert [p.hexsha for p in commit.parents] == [main_before]
    assert changed_files(repo.store, head) == {"README.md": "M", "src/app.py": "M"}
    assert repo.store.file_at(head, "src/app.py").decode() == FILES["src/app.py"].replace("'hi'", "'hello'")
    assert commit.message.startswith("Update README.md and src/app.py\n")
    assert "- modified: src/app.py (+1 -1)" in commit.message
    assert commit.author.name == "Alice"
    assert repo.store.ref_sha("refs/heads/main") == main_before  # never the default branch
    repo.store.fsck()
    # afterwards the overlay is empty and the workspace reads the published commit
    assert remote.staged() == [] and remote.base_commit == head and remote.published_head == head
    assert "'hello'" in await remote.read_text("src/app.py")


async def test_second_publish_adds_one_more_commit(make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# One\n")
    first = await publish(remote, "First pass")
    await remote.stage("README.md", "# Two\n")
    await remote.stage("src/new.py", "x = 1\n")
    second = await publish(remote, "Second pass")
    commit = repo.store.repo.commit(second.commit)
    assert [p.hexsha for p in commit.parents] == [first.commit]
    assert commit.summary == "Second pass"
    assert changed_files(repo.store, second.commit) == {"README.md": "M", "src/new.py": "A"}
    assert not second.created_branch


async def test_deletes_new_files_modes_and_line_ends(make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("docs/notes.txt", "alpha\nbeta\ngamma\n")
    await remote.stage("bin/run.sh", "#!/bin/sh\necho running\n")
    await remote.stage("README.md", None)
    await remote.stage("pkg/deep/mod.py", "VALUE = 1\n")
    result = await publish(remote)
    store = repo.store
    assert changed_files(store, result.commit) == {
        "README.md": "D", "bin/run.sh": "M", "docs/notes.txt": "M", "pkg/deep/mod.py": "A"}
    assert store.file_at(result.commit, "docs/notes.txt") == b"alpha\r\nbeta\r\ngamma\r\n"
    assert store.leaves(store.tree_of(result.commit))["bin/run.sh"].mode == "100755"
    store.fsck()


async def test_large_files_are_uploaded_as_blobs(gh_server, make_client, repo):
    remote = await open_remote(make_client)
    big = "".join(f"line {n}\n" for n in range(20_000))
    await remote.stage("data/big.txt", big)
    result = await publish(remote)
    assert len(gh_server.calls("POST", r"/git/blobs$")) == 1
    assert repo.store.file_at(result.commit, "data/big.txt").decode() == big


async def test_publish_needs_a_token_and_push_permission(gh_server, make_client, repo):
    anonymous = await open_remote(make_client, token=None)
    await anonymous.stage("README.md", "# Changed\n")
    with pytest.raises(TokenRequired, match="needs a GitHub token: set GITHUB_TOKEN or GH_TOKEN"):
        await publish(anonymous)
    readonly = await open_remote(make_client, token=READONLY_TOKEN)
    await readonly.stage("README.md", "# Changed\n")
    with pytest.raises(PermissionDenied, match="403") as info:
        await publish(readonly)
    assert READONLY_TOKEN not in str(info.value)
    assert readonly.staged()  # nothing lost
    assert set(repo.store.refs("refs/heads/")) == {"refs/heads/main"}


async def test_refuses_the_default_branch(make_client, repo):
    remote = await open_remote(make_client)
    remote.work_branch = "main"
    await remote.stage("README.md", "# Changed\n")
    with pytest.raises(GitHubError, match="refusing to publish to main"):
        await publish(remote)


async def test_nothing_to_publish(make_client, repo):
    remote = await open_remote(make_client)
    with pytest.raises(GitHubError, match="nothing to publish"):
        await publish(remote)


async def test_moved_branch_is_rebased_when_changes_do_not_overlap(make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# One\n\nA small project.\n")
    first = await publish(remote)
    # someone pushes to the work branch: another file, and the far end of the file we edit
    other = repo.store.commit_files(remote.work_branch, {
        "CHANGELOG.md": "- something\n",
        "src/app.py": FILES["src/app.py"].replace("return 42", "return 43"),
    }, "their change")
    await remote.stage("src/app.py", FILES["src/app.py"].replace("'hi'", "'hello'"))
    result = await publish(remote)
    assert result.rebased_onto == other and result.parent == other
    assert repo.store.is_ancestor(first.commit, result.commit)
    text = repo.store.file_at(result.commit, "src/app.py").decode()
    assert "'hello'" in text and "return 43" in text
    assert repo.store.file_at(result.commit, "CHANGELOG.md") == b"- something\n"
    assert changed_files(repo.store, result.commit) == {"src/app.py": "M"}
    assert await remote.read_text("CHANGELOG.md") == "- something\n"


async def test_moved_branch_with_overlapping_changes_is_refused(make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# One\n")
    await publish(remote)
    theirs = repo.store.commit_files(remote.work_branch, {"src/app.py": FILES["src/app.py"].replace("'hi'", "'hey'")},
                                     "their change")
    await remote.stage("src/app.py", FILES["src/app.py"].replace("'hi'", "'hello'"))
    with pytest.raises(PublishConflict, match=r"changes overlap them in src/app.py"):
        await publish(remote)
    assert repo.store.ref_sha(f"refs/heads/{remote.work_branch}") == theirs
    assert [s.path for s in remote.staged()] == ["src/app.py"]  # the edit is kept


async def test_existing_branch_with_unknown_history_is_rebased_onto(make_client, repo):
    remote = await open_remote(make_client)
    remote.work_branch = "feature/shared"
    repo.store.commit_files("main", {}, "noop")  # main moves too; irrelevant for the work branch
    base = remote.base_commit
    repo.store.update_ref("refs/heads/feature/shared", base, None)
    theirs = repo.store.commit_files("feature/shared", {"docs/notes.txt": "alpha\r\nbeta\r\n\r\n"}, "theirs")
    await remote.stage("README.md", "# Shared\n")
    result = await publish(remote)
    assert result.rebased_onto == theirs
    assert repo.store.repo.commit(result.commit).parents[0].hexsha == theirs


async def test_race_on_the_ref_update_is_planned_again(gh_server, make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# One\n")
    await publish(remote)
    await remote.stage("src/app.py", FILES["src/app.py"] + "# end\n")
    gh_server.inject("PATCH", r"/git/refs/heads/", 422, "Update is not a fast forward")
    result = await publish(remote)
    assert repo.store.ref_sha(f"refs/heads/{remote.work_branch}") == result.commit
    assert len(gh_server.calls("PATCH", r"/git/refs/heads/")) == 2


async def test_published_history_is_readable_by_git(tmp_path, make_client, repo):
    remote = await open_remote(make_client)
    await remote.stage("src/app.py", "print('rewritten')\n")
    result = await publish(remote)
    clone = git.Repo.clone_from(str(repo.store.path), tmp_path / "clone", branch=remote.work_branch)
    assert (tmp_path / "clone" / "src" / "app.py").read_text() == "print('rewritten')\n"
    assert clone.head.commit.hexsha == result.commit


async def test_rebase_reads_files_too_large_for_the_contents_api_from_blobs(gh_server, make_client, repo):
    gh_server.contents_max = 16
    remote = await open_remote(make_client)
    await remote.stage("README.md", "# One\n\nA small project.\n")
    await publish(remote)
    theirs = FILES["src/app.py"].replace("'hi'", "'hey'")
    repo.store.commit_files(remote.work_branch, {"src/app.py": theirs}, "theirs")
    await remote.stage("src/app.py", FILES["src/app.py"] + "# end\n")
    blobs_before = len(gh_server.calls("GET", r"/git/blobs/"))
    result = await publish(remote)
    assert result.rebased_onto is not None
    assert len(gh_server.calls("GET", r"/contents/src/app.py")) == 1
    assert len(gh_server.calls("GET", r"/git/blobs/")) == blobs_before + 1
    assert repo.store.file_at(result.commit, "src/app.py").decode() == theirs + "# end\n"


async def test_other_encodings_round_trip_through_blobs(gh_server, make_client, repo):
    repo.store.commit_files("main", {"latin.txt": "caf\xe9\n".encode("latin-1"),
                                     "bom.txt": b"\xef\xbb\xbfwith bom\r\n"}, "encodings")
    remote = await open_remote(make_client)
    assert await remote.read_text("latin.txt") == "caf\xe9\n"
    await remote.stage("latin.txt", "caf\xe9 cr\xe8me\n")
    await remote.stage("bom.txt", "with bom\nand more\n")
    result = await publish(remote)
    assert repo.store.file_at(result.commit, "latin.txt") == "caf\xe9 cr\xe8me\n".encode("latin-1")
    assert repo.store.file_at(result.commit, "bom.txt") == b"\xef\xbb\xbfwith bom\r\nand more\r\n"
    assert len(gh_server.calls("POST", r"/git/blobs$")) == 1  # latin-1 is not UTF-8: uploaded as a blob
