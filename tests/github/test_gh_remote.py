"""Opening a repository through the API: one tree fetch, blobs on demand, the overlay, errors."""

from __future__ import annotations

import pytest

from agent.github.errors import BinaryFile, NotFound, PermissionDenied, RepoNotFound
from agent.github.remote import RemoteRepo, work_branch_name
from agent.github.spec import RepoSpec
from agent.workspaces.base import WorkspaceError

FILES = {
    "README.md": "# Hello\n",
    "src/app.py": "def main():\n    return 1\n",
    "src/util/strings.py": "def shout(s):\n    return s.upper()\n",
    "docs/guide.txt": "line one\r\nline two\r\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", FILES)


async def test_open_fetches_the_tree_once_and_blobs_on_demand(gh_server, make_client, repo):
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"), task="Fix the greeting")
    assert remote.ref == "main" and remote.ref_is_branch and remote.can_push
    assert remote.base_commit == repo.store.ref_sha("refs/heads/main")
    assert remote.work_branch == "coder-tui/fix-the-greeting"
    assert len(gh_server.calls("GET", r"/git/trees/")) == 1
    assert gh_server.calls("GET", r"/git/trees/")[0].query == "recursive=1"
    assert gh_server.calls("GET", r"/git/blobs/") == []

    assert remote.file_paths() == sorted(FILES)
    assert remote.is_dir("src/util") and not remote.is_dir("src/app.py")
    assert await remote.read_text("src/app.py") == FILES["src/app.py"]
    await remote.read_text("src/app.py")
    assert len(gh_server.calls("GET", r"/git/blobs/")) == 1  # cached by sha


async def test_crlf_files_read_as_lf_and_keep_their_style_when_staged(make_client, repo):
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    assert await remote.read_text("docs/guide.txt") == "line one\nline two\n"
    await remote.stage("docs/guide.txt", "line one\nline 2\n")
    entry = remote.overlay["docs/guide.txt"]
    assert entry.text == "line one\nline 2\n" and entry.newline == "\r\n"
    assert await remote.read_text("docs/guide.txt") == "line one\nline 2\n"


async def test_binary_files_are_listed_but_not_read(make_client, repo):
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    assert "logo.png" in remote.file_paths()
    with pytest.raises(BinaryFile, match="logo.png is a binary file"):
        await remote.read_text("logo.png")
    with pytest.raises(BinaryFile):
        await remote.stage("logo.png", "text now")


async def test_symlinks_and_submodules_are_explained(gh_server, make_client, repo):
    repo.store.commit_files("main", {"link": "README.md"}, "add link", mode="120000")
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    with pytest.raises(WorkspaceError, match="symbolic link to README.md"):
        await remote.read_text("link")


async def test_overlay_adds_changes_deletes_and_reverts(make_client, repo):
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    await remote.stage("src/new.py", "x = 1\n")
    await remote.stage("README.md", None)
    await remote.stage("src/app.py", "def main():\n    return 2\n")
    assert [(s.path, s.status) for s in remote.staged()] == [
        ("README.md", "deleted"), ("src/app.py", "modified"), ("src/new.py", "added")]
    assert not remote.exists("README.md") and remote.exists("src/new.py")
    assert "README.md" not in remote.file_paths()
    await remote.stage("src/app.py", FILES["src/app.py"])  # back to the commit's text
    await remote.stage("src/new.py", None)  # created then deleted
    assert [s.path for s in remote.staged()] == ["README.md"]


async def test_ref_can_be_a_tag_or_commit(gh_server, make_client, repo):
    first = repo.store.ref_sha("refs/heads/main")
    repo.store.repo.git.tag("v1.0", first)
    repo.store.commit_files("main", {"README.md": "# Changed\n"}, "change")
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello", "v1.0"))
    assert not remote.ref_is_branch and remote.base_commit == first
    assert await remote.read_text("README.md") == "# Hello\n"
    assert remote.pr_base == "main"
    by_sha = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello", first[:10]))
    assert by_sha.base_commit == first


async def test_unknown_ref_and_repository(gh_server, make_client, repo):
    with pytest.raises(NotFound, match="'nope' is not a branch, tag or commit of octo/hello"):
        await RemoteRepo.open(make_client(), RepoSpec("octo", "hello", "nope"))
    with pytest.raises(RepoNotFound, match="repository octo/missing not found"):
        await RemoteRepo.open(make_client(), RepoSpec("octo", "missing"))


async def test_private_repository_needs_a_token(gh_server, make_client):
    gh_server.create_repo("octo/secret", {"a.txt": "a\n"}, private=True)
    with pytest.raises(RepoNotFound, match="if it is private, a token is needed"):
        await RemoteRepo.open(make_client(token=None), RepoSpec("octo", "secret"))
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "secret"))
    assert await remote.read_text("a.txt") == "a\n"


async def test_public_repository_reads_without_token(gh_server, make_client, repo):
    remote = await RemoteRepo.open(make_client(token=None), RepoSpec("octo", "hello"))
    assert await remote.read_text("README.md") == "# Hello\n"
    assert not remote.can_push
    assert all(not r.authenticated for r in gh_server.requests)


async def test_bad_credentials_are_reported_without_the_token(gh_server, make_client, repo):
    with pytest.raises(PermissionDenied) as info:
        await RemoteRepo.open(make_client(token="ghp_wrongwrongwrong"), RepoSpec("octo", "hello"))
    assert "401 Bad credentials" in str(info.value) and "ghp_wrong" not in str(info.value)


async def test_truncated_tree_is_completed_folder_by_folder(gh_server, make_client, repo):
    gh_server.tree_limit = 3
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    assert remote.file_paths() == sorted(FILES)
    assert remote.notes and "too large" in remote.notes[0]


async def test_work_branch_avoids_existing_branches(gh_server, make_client, repo):
    main = repo.store.ref_sha("refs/heads/main")
    repo.store.update_ref("refs/heads/coder-tui/fix-it", main, None)
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"), task="Fix it!")
    assert remote.work_branch == "coder-tui/fix-it-2"


def test_work_branch_name_is_a_short_slug():
    assert work_branch_name("Fix the README typo, please, and also the docs") == "coder-tui/fix-the-readme-typo-please-and"
    assert work_branch_name("").startswith("coder-tui/session-")


async def test_search_prefetch_fetches_each_blob_once_with_progress(gh_server, make_client, repo):
    remote = await RemoteRepo.open(make_client(), RepoSpec("octo", "hello"))
    seen: list[tuple[int, int]] = []
    await remote.prefetch(remote.file_paths(), lambda what, done, total: seen.append((done, total)))
    assert seen[-1] == (len(FILES), len(FILES))
    await remote.prefetch(remote.file_paths())
    assert len(gh_server.calls("GET", r"/git/blobs/")) == len(FILES)
