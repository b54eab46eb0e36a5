"""The fake GitHub server itself behaves like GitHub where the client depends on it."""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.github.conftest import READONLY_TOKEN, TOKEN


@pytest.fixture
def repo(gh_server):
    return gh_server.create_repo("octo/hello", {"README.md": "# Hello\n", "big.txt": "x" * 5000})


def api(gh_server, token: str | None = TOKEN) -> httpx.Client:
    headers = {"Authorization": f"token {token}"} if token else {}
    return httpx.Client(base_url=gh_server.url, headers=headers)


def test_rate_limit_headers_on_every_answer(gh_server, repo):
    with api(gh_server) as client:
        for path in ("/repos/octo/hello", "/repos/octo/nope", "/rate_limit"):
            response = client.get(path)
            assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(response.headers)
        assert client.get("/rate_limit").json()["resources"]["core"]["used"] == 2


def test_writes_need_a_token_and_push(gh_server, repo):
    body = {"content": "hi", "encoding": "utf-8"}
    with api(gh_server, None) as anonymous:
        assert anonymous.post("/repos/octo/hello/git/blobs", json=body).status_code == 401
    with api(gh_server, READONLY_TOKEN) as readonly:
        assert readonly.post("/repos/octo/hello/git/blobs", json=body).status_code == 403
    with api(gh_server, "ghp_unknown") as bad:
        response = bad.get("/repos/octo/hello")
        assert response.status_code == 401 and response.json()["message"] == "Bad credentials"
    with api(gh_server) as client:
        assert client.post("/repos/octo/hello/git/blobs", json=body).status_code == 201


def test_non_fast_forward_ref_updates_are_refused(gh_server, repo):
    store = repo.store
    main = store.ref_sha("refs/heads/main")
    side = store.commit_files("side", {"a": "a"}, "unrelated root")  # no common history
    with api(gh_server) as client:
        response = client.patch("/repos/octo/hello/git/refs/heads/main", json={"sha": side})
        assert response.status_code == 422 and "not a fast forward" in response.json()["message"]
        assert store.ref_sha("refs/heads/main") == main
        ahead = store.commit_files("main", {"b": "b"}, "ahead")
        store.update_ref("refs/heads/main", main, ahead, force=True)
        assert client.patch("/repos/octo/hello/git/refs/heads/main", json={"sha": ahead}).status_code == 200
        assert client.post("/repos/octo/hello/git/refs", json={"ref": "refs/heads/main", "sha": ahead}).status_code == 422


def test_contents_too_large_leaves_content_empty(gh_server, repo):
    gh_server.contents_max = 1000
    with api(gh_server) as client:
        small = client.get("/repos/octo/hello/contents/README.md").json()
        assert small["encoding"] == "base64" and base64.b64decode(small["content"]) == b"# Hello\n"
        big = client.get("/repos/octo/hello/contents/big.txt").json()
        assert big["encoding"] == "none" and big["content"] == ""
        blob = client.get(f"/repos/octo/hello/git/blobs/{big['sha']}").json()
        assert base64.b64decode(blob["content"]) == b"x" * 5000
        listing = client.get("/repos/octo/hello/contents").json()
        assert sorted(e["name"] for e in listing) == ["README.md", "big.txt"]


def test_injected_failures_and_pagination(gh_server, repo):
    gh_server.inject("GET", r"^/repos/octo/hello$", 404, times=1)
    for n in range(5):
        gh_server.add_issue("octo/hello", f"issue {n}")
    with api(gh_server) as client:
        assert client.get("/repos/octo/hello").status_code == 404
        assert client.get("/repos/octo/hello").status_code == 200
        page = client.get("/repos/octo/hello/issues", params={"per_page": 2})
        assert [i["number"] for i in page.json()] == [5, 4]
        assert 'rel="next"' in page.headers["link"] and "page=2" in page.headers["link"]


def test_created_objects_are_valid_git(gh_server, repo):
    with api(gh_server) as client:
        main = repo.store.ref_sha("refs/heads/main")
        tree = client.post("/repos/octo/hello/git/trees", json={
            "base_tree": repo.store.tree_of(main),
            "tree": [{"path": "a/b/c.txt", "mode": "100644", "type": "blob", "content": "deep\n"},
                     {"path": "README.md", "mode": "100644", "type": "blob", "sha": None}]}).json()
        commit = client.post("/repos/octo/hello/git/commits",
                             json={"message": "m", "tree": tree["sha"], "parents": [main]}).json()
        assert commit["author"]["name"] == "Alice"
    assert sorted(repo.store.leaves(tree["sha"])) == ["a/b/c.txt", "big.txt"]
    repo.store.fsck()
