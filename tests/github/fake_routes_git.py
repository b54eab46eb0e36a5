"""Fake GitHub routes over git data: repository, branches, refs, trees, blobs, commits, contents."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from aiohttp import web

from tests.github.fake_git import Entry, NotFast, StaleRef, now_stamp
from tests.github.fake_server import ApiError, FakeGitHub, FakeRepo, TokenInfo, paginate, read_json

REPO = "/repos/{owner}/{repo}"
MODES = {"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree", "160000": "commit"}


def register(app: web.Application, server: FakeGitHub) -> None:
    routes = Routes(server)
    add = app.router.add_route
    add("GET", "/rate_limit", routes.rate_limit)
    add("GET", "/user", routes.user)
    add("GET", "/users/{owner}", routes.owner)
    add("GET", "/users/{owner}/repos", routes.owner_repos)
    add("GET", REPO, routes.repository)
    add("GET", REPO + "/branches", routes.branches)
    add("GET", REPO + "/branches/{branch:.+}", routes.branch)
    add("GET", REPO + "/git/ref/{ref:.+}", routes.get_ref)
    add("GET", REPO + "/git/refs/{ref:.+}", routes.get_ref)
    add("POST", REPO + "/git/refs", routes.create_ref)
    add("PATCH", REPO + "/git/refs/{ref:.+}", routes.update_ref)
    add("GET", REPO + "/git/trees/{sha}", routes.get_tree)
    add("POST", REPO + "/git/trees", routes.create_tree)
    add("GET", REPO + "/git/blobs/{sha}", routes.get_blob)
    add("POST", REPO + "/git/blobs", routes.create_blob)
    add("GET", REPO + "/git/commits/{sha}", routes.get_git_commit)
    add("POST", REPO + "/git/commits", routes.create_commit)
    add("GET", REPO + "/commits/{ref:.+}", routes.get_commit)
    add("GET", REPO + "/contents", routes.contents)
    add("GET", REPO + "/contents/{path:.*}", routes.contents)


def b64(data: bytes) -> str:
    # GitHub wraps base64 content at 60 characters
    text = base64.b64encode(data).decode()
    return "\n".join(text[i:i + 60] for i in range(0, len(text), 60)) + ("\n" if text else "")


def iso(stamp: int) -> str:
    return dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Routes:
    def __init__(self, server: FakeGitHub) -> None:
        self.s = server

    # -- account ------------------------------------------------------------------------------
    async def rate_limit(self, request: web.Request) -> web.Response:
        status = self.s.rate_status(self.s.identity(request), self.s.caller(request))
        return web.json_response({"resources": {"core": status, "search": status}, "rate": status})

    async def user(self, request: web.Request) -> web.Response:
        token = self.s.caller(request)
        if token is None:
            raise ApiError(401, "Requires authentication")
        data = self.s.user_json(token.login, token.user_id)
        return web.json_response({**data, "name": token.name, "email": token.email})

    # -- repository and refs ------------------------------------------------------------------
    async def repository(self, request: web.Request) -> web.Response:
        return web.json_response(self.repo_json(self.s.find_repo(request), self.s.caller(request)))

    def repo_json(self, repo: FakeRepo, token: TokenInfo | None) -> dict[str, Any]:
        push = bool(token and token.push)
        return {
            "id": abs(hash(repo.full_name)) % 10**8, "name": repo.name, "full_name": repo.full_name,
            "owner": self.s.user_json(repo.owner), "private": repo.private, "fork": False, "archived": repo.archived,
            "visibility": "private" if repo.private else "public", "description": "",
            "default_branch": repo.default_branch, "url": self.s.api(repo),
            "html_url": self.s.html(repo), "clone_url": repo.store.path.as_uri(),  # a file:// remote: --clone talks real git to it
            "permissions": {"admin": False, "maintain": False, "push": push,
                            "triage": token is not None, "pull": True},
        }

    async def owner(self, request: web.Request) -> web.Response:
        login = request.match_info["owner"]
        if not any(r.owner.lower() == login.lower() for r in self.s.repos.values()):
            raise ApiError(404, "Not Found")
        return web.json_response(self.s.user_json(login))

    async def owner_repos(self, request: web.Request) -> web.Response:
        """GET /users/{owner}/repos: the owner's repositories the caller may see, by name."""
        login, token = request.match_info["owner"].lower(), self.s.caller(request)
        repos = sorted((r for r in self.s.repos.values() if r.owner.lower() == login and (token or not r.private)),
                       key=lambda r: r.name.lower())
        return paginate(request, [self.repo_json(r, token) for r in repos])

    async def branches(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        items = [
            {"name": ref.removeprefix("refs/heads/"), "protected": False,
             "commit": {"sha": sha, "url": self.s.api(repo, f"/commits/{sha}")}}
            for ref, sha in sorted(repo.store.refs("refs/heads/").items())
        ]
        return paginate(request, items)

    async def branch(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        name = request.match_info["branch"]
        sha = repo.store.ref_sha(f"refs/heads/{name}")
        if sha is None:
            raise ApiError(404, "Branch not found")
        return web.json_response({"name": name, "protected": False, "commit": self.commit_json(repo, sha),
                                  "_links": {"self": self.s.api(repo, f"/branches/{name}"),
                                             "html": self.s.html(repo, f"/tree/{name}")}})

    def ref_json(self, repo: FakeRepo, ref: str, sha: str) -> dict[str, Any]:
        return {"ref": ref, "node_id": ref, "url": self.s.api(repo, f"/git/{ref}"),
                "object": {"type": "commit", "sha": sha, "url": self.s.api(repo, f"/git/commits/{sha}")}}

    async def get_ref(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        ref = "refs/" + request.match_info["ref"]
        sha = repo.store.refs(ref).get(ref)
        if sha is None:
            raise ApiError(404, "Not Found")
        return web.json_response(self.ref_json(repo, ref, sha))

    async def create_ref(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        data = await read_json(request)
        ref, sha = str(data.get("ref", "")), str(data.get("sha", ""))
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise ApiError(422, "Reference name must start with 'refs/' and have at least two slashes.")
        if repo.store.object_type(sha) != "commit":
            raise ApiError(422, "Object does not exist")
        try:
            repo.store.update_ref(ref, sha, None)
        except StaleRef as exc:
            raise ApiError(422, "Reference already exists") from exc
        return web.json_response(self.ref_json(repo, ref, sha), status=201)

    async def update_ref(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        ref = "refs/" + request.match_info["ref"]
        data = await read_json(request)
        sha, force = str(data.get("sha", "")), bool(data.get("force", False))
        old = repo.store.refs(ref).get(ref)
        if old is None:
            raise ApiError(422, "Reference does not exist")
        if repo.store.object_type(sha) != "commit":
            raise ApiError(422, "Object does not exist")
        try:
            repo.store.update_ref(ref, sha, old, force=force)
        except (NotFast, StaleRef) as exc:
            raise ApiError(422, "Update is not a fast forward") from exc
        return web.json_response(self.ref_json(repo, ref, sha))

    # -- trees and blobs ----------------------------------------------------------------------
    def tree_json(self, repo: FakeRepo, sha: str, recursive: bool) -> dict[str, Any]:
        entries = repo.store.list_tree(sha, recursive)
        items: list[dict[str, Any]] = []
        for path, entry in entries.items():
            item = {"path": path, "mode": entry.mode, "type": entry.type, "sha": entry.sha,
                    "url": self.s.api(repo, f"/git/{entry.type}s/{entry.sha}")}
            if entry.type == "blob":
                item["size"] = entry.size
            items.append(item)
        # like GitHub, only recursive answers are cut short (at tree_limit entries)
        truncated = recursive and len(items) > self.s.tree_limit
        return {"sha": sha, "url": self.s.api(repo, f"/git/trees/{sha}"),
                "tree": items[: self.s.tree_limit] if truncated else items, "truncated": truncated}

    async def get_tree(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        sha = request.match_info["sha"]
        kind = repo.store.object_type(sha)
        if kind != "tree":
            commit = repo.store.resolve(sha)
            if commit is None:
                raise ApiError(404, "Not Found")
            sha = repo.store.tree_of(commit)
        recursive = request.query.get("recursive", "") not in ("", "0", "false")
        return web.json_response(self.tree_json(repo, sha, recursive))

    async def create_tree(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        data = await read_json(request)
        base = data.get("base_tree")
        if base is not None and repo.store.object_type(str(base)) != "tree":
            raise ApiError(422, "base_tree is not a valid tree oid")
        flat = repo.store.leaves(base) if base else {}
        for item in data.get("tree") or []:
            self._apply_tree_item(repo, flat, item)
        sha = repo.store.write_tree(flat)
        return web.json_response(self.tree_json(repo, sha, False), status=201)

    def _apply_tree_item(self, repo: FakeRepo, flat: dict[str, Entry], item: dict[str, Any]) -> None:
        path, mode, kind = str(item.get("path", "")), str(item.get("mode", "")), item.get("type")
        if not path or path.startswith("/") or path.endswith("/") or "//" in path or ".." in path.split("/"):
            raise ApiError(422, f"tree.path contains a malformed path component: {path!r}")
        if MODES.get(mode) != kind:
            raise ApiError(422, f"Invalid tree info: mode {mode!r} type {kind!r}")
        if "content" in item and item["content"] is not None:
            flat[path] = Entry(mode.lstrip("0"), "blob", repo.store.write_blob(str(item["content"]).encode()))
            return
        sha = item.get("sha")
        if sha is None:  # an explicit null sha deletes the path (a file or a whole folder)
            for key in [k for k in flat if k == path or k.startswith(path + "/")]:
                del flat[key]
            return
        if kind != "commit" and repo.store.object_type(str(sha)) != kind:
            raise ApiError(422, f"tree.sha {sha} is not a valid {kind}")
        for key in [k for k in flat if k == path or k.startswith(path + "/")]:
            del flat[key]
        if kind == "tree":
            for sub, entry in repo.store.leaves(str(sha)).items():
                flat[f"{path}/{sub}"] = entry
        else:
            flat[path] = Entry(mode.lstrip("0"), kind, str(sha))

    async def get_blob(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        sha = request.match_info["sha"]
        data = repo.store.read_blob(sha)
        if data is None:
            raise ApiError(404, "Not Found")
        return web.json_response({"sha": sha, "node_id": sha, "size": len(data), "encoding": "base64",
                                  "url": self.s.api(repo, f"/git/blobs/{sha}"), "content": b64(data)})

    async def create_blob(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        data = await read_json(request)
        content, encoding = data.get("content"), data.get("encoding", "utf-8")
        if not isinstance(content, str) or encoding not in ("utf-8", "base64"):
            raise ApiError(422, "Invalid request: content and encoding (utf-8 or base64) are required")
        raw = base64.b64decode(content) if encoding == "base64" else content.encode()
        sha = repo.store.write_blob(raw)
        return web.json_response({"sha": sha, "url": self.s.api(repo, f"/git/blobs/{sha}")}, status=201)

    # -- commits ------------------------------------------------------------------------------
    def git_commit_json(self, repo: FakeRepo, sha: str) -> dict[str, Any]:
        with repo.store.lock:
            commit = repo.store.repo.commit(sha)
            commit.message  # noqa: B018 - load the object while holding the lock

        def person(actor: Any, stamp: int) -> dict[str, str]:
            return {"name": actor.name, "email": actor.email, "date": iso(stamp)}

        return {
            "sha": sha, "node_id": sha, "url": self.s.api(repo, f"/git/commits/{sha}"),
            "html_url": self.s.html(repo, f"/commit/{sha}"),
            "author": person(commit.author, commit.authored_date),
            "committer": person(commit.committer, commit.committed_date),
            "message": commit.message,
            "tree": {"sha": commit.tree.hexsha, "url": self.s.api(repo, f"/git/trees/{commit.tree.hexsha}")},
            "parents": [{"sha": p.hexsha, "url": self.s.api(repo, f"/git/commits/{p.hexsha}"),
                         "html_url": self.s.html(repo, f"/commit/{p.hexsha}")} for p in commit.parents],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
        }

    def commit_json(self, repo: FakeRepo, sha: str) -> dict[str, Any]:
        git_commit = self.git_commit_json(repo, sha)
        return {
            "sha": sha, "node_id": sha, "url": self.s.api(repo, f"/commits/{sha}"),
            "html_url": git_commit["html_url"], "commit": git_commit, "author": None, "committer": None,
            "parents": [{"sha": p["sha"], "url": self.s.api(repo, f"/commits/{p['sha']}")}
                        for p in git_commit["parents"]],
        }

    async def get_git_commit(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        sha = request.match_info["sha"]
        if repo.store.object_type(sha) != "commit":
            raise ApiError(404, "Not Found")
        return web.json_response(self.git_commit_json(repo, sha))

    async def get_commit(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        ref = request.match_info["ref"]
        sha = repo.store.resolve(ref)
        if sha is None:
            raise ApiError(422, f"No commit found for SHA: {ref}")
        return web.json_response(self.commit_json(repo, sha))

    async def create_commit(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        data = await read_json(request)
        tree, parents = str(data.get("tree", "")), [str(p) for p in data.get("parents") or []]
        if repo.store.object_type(tree) != "tree":
            raise ApiError(422, "Tree SHA does not exist")
        if any(repo.store.object_type(p) != "commit" for p in parents):
            raise ApiError(422, "Parent SHA does not exist or is not a commit object")
        message = data.get("message")
        if not isinstance(message, str) or not message:
            raise ApiError(422, "Invalid request: message is required")
        token = self.s.caller(request)
        assert token is not None
        author = data.get("author") or {}
        who = (author.get("name") or token.name, author.get("email") or token.email, now_stamp())
        sha = repo.store.commit_tree(tree, parents, message, who)
        return web.json_response(self.git_commit_json(repo, sha), status=201)

    # -- contents -----------------------------------------------------------------------------
    async def contents(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        path = request.match_info.get("path", "").strip("/")
        ref = request.query.get("ref") or repo.default_branch
        commit = repo.store.resolve(ref)
        if commit is None:
            raise ApiError(404, f"No commit found for the ref {ref}")
        entries = repo.store.list_tree(repo.store.tree_of(commit), True)
        if path and path not in entries:
            raise ApiError(404, "Not Found")
        if path and entries[path].type == "blob":
            return web.json_response(self.file_json(repo, path, entries[path], ref, with_content=True))
        prefix = f"{path}/" if path else ""
        children = [(p, e) for p, e in entries.items() if p.startswith(prefix) and "/" not in p[len(prefix):]]
        return web.json_response([self.file_json(repo, p, e, ref, with_content=False) for p, e in children])

    def file_json(self, repo: FakeRepo, path: str, entry: Entry, ref: str, with_content: bool) -> dict[str, Any]:
        kinds = {"tree": "dir", "commit": "submodule"}
        kind = "symlink" if entry.mode == "120000" else kinds.get(entry.type, "file")
        data: dict[str, Any] = {
            "type": kind, "name": path.rpartition("/")[2], "path": path, "sha": entry.sha,
            "size": entry.size or 0, "url": self.s.api(repo, f"/contents/{path}?ref={ref}"),
            "git_url": self.s.api(repo, f"/git/{entry.type}s/{entry.sha}"),
            "html_url": self.s.html(repo, f"/blob/{ref}/{path}"),
            "download_url": f"{self.s.url}/raw/{repo.full_name}/{ref}/{path}" if kind == "file" else None,
        }
        if with_content:
            raw = repo.store.read_blob(entry.sha) or b""
            too_large = len(raw) > self.s.contents_max
            data["encoding"] = "none" if too_large else "base64"
            data["content"] = "" if too_large else b64(raw)
        return data
