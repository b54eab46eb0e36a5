"""Fake GitHub routes for issues, issue comments and pull requests (kept in memory, recorded)."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from tests.github.fake_routes_git import REPO, iso
from tests.github.fake_server import ApiError, FakeGitHub, FakeRepo, paginate, read_json


def register(app: web.Application, server: FakeGitHub) -> None:
    routes = IssueRoutes(server)
    add = app.router.add_route
    add("GET", REPO + "/issues", routes.list_issues)
    add("POST", REPO + "/issues", routes.create_issue)
    add("GET", REPO + "/issues/{number:\\d+}", routes.get_issue)
    add("GET", REPO + "/issues/{number:\\d+}/comments", routes.list_comments)
    add("POST", REPO + "/issues/{number:\\d+}/comments", routes.create_comment)
    add("GET", REPO + "/pulls", routes.list_pulls)
    add("POST", REPO + "/pulls", routes.create_pull)
    add("GET", REPO + "/pulls/{number:\\d+}", routes.get_pull)


def add_issue(
    server: FakeGitHub,
    repo: FakeRepo,
    title: str,
    body: str | None = "",
    labels: tuple[str, ...] = (),
    comments: tuple[str, ...] = (),
    state: str = "open",
    author: str = "reporter",
) -> int:
    """Create an issue directly (test setup); returns its number."""
    with server._lock:
        number = repo.take_number()
        now = int(time.time())
        repo.issues[number] = {
            "number": number, "title": title, "body": body, "state": state, "labels": list(labels),
            "user": author, "created": now, "updated": now, "pull": None,
        }
        repo.comments[number] = []
        for text in comments:
            _store_comment(repo, number, text, "commenter")
        return number


def _store_comment(repo: FakeRepo, number: int, body: str, login: str) -> dict[str, Any]:
    repo.next_comment += 1
    comment = {"id": repo.next_comment, "body": body, "user": login, "created": int(time.time())}
    repo.comments.setdefault(number, []).append(comment)
    return comment


class IssueRoutes:
    def __init__(self, server: FakeGitHub) -> None:
        self.s = server

    def issue_json(self, repo: FakeRepo, issue: dict[str, Any]) -> dict[str, Any]:
        number = issue["number"]
        url = self.s.api(repo, f"/issues/{number}")
        data: dict[str, Any] = {
            "id": 10_000 + number, "node_id": f"I_{number}", "number": number, "title": issue["title"],
            "body": issue["body"], "state": issue["state"], "locked": False,
            "labels": [{"id": abs(hash(name)) % 10**6, "name": name, "color": "ededed", "description": "",
                        "url": self.s.api(repo, f"/labels/{name}")} for name in issue["labels"]],
            "user": self.s.user_json(issue["user"]), "assignee": None, "assignees": [], "milestone": None,
            "comments": len(repo.comments.get(number, [])), "created_at": iso(issue["created"]),
            "updated_at": iso(issue["updated"]), "closed_at": None, "url": url,
            "html_url": self.s.html(repo, f"/issues/{number}"), "comments_url": f"{url}/comments",
            "repository_url": self.s.api(repo), "author_association": "NONE",
        }
        if issue["pull"] is not None:
            data["pull_request"] = {"url": self.s.api(repo, f"/pulls/{number}"),
                                    "html_url": self.s.html(repo, f"/pull/{number}")}
        return data

    def comment_json(self, repo: FakeRepo, number: int, comment: dict[str, Any]) -> dict[str, Any]:
        cid = comment["id"]
        return {"id": cid, "node_id": f"IC_{cid}", "body": comment["body"],
                "user": self.s.user_json(comment["user"]), "created_at": iso(comment["created"]),
                "updated_at": iso(comment["created"]), "url": self.s.api(repo, f"/issues/comments/{cid}"),
                "html_url": self.s.html(repo, f"/issues/{number}#issuecomment-{cid}"),
                "issue_url": self.s.api(repo, f"/issues/{number}"), "author_association": "NONE"}

    def _issue(self, repo: FakeRepo, request: web.Request) -> dict[str, Any]:
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None:
            raise ApiError(404, "Not Found")
        return issue

    # -- issues -----------------------------------------------------------------------------
    async def list_issues(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        state = request.query.get("state", "open")
        wanted = {name for name in request.query.get("labels", "").split(",") if name}
        with self.s._lock:
            issues = sorted(repo.issues.values(), key=lambda i: i["number"], reverse=True)
            items = [self.issue_json(repo, i) for i in issues
                     if (state == "all" or i["state"] == state) and wanted <= set(i["labels"])]
        return paginate(request, items)

    async def get_issue(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        with self.s._lock:
            return web.json_response(self.issue_json(repo, self._issue(repo, request)))

    async def create_issue(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True)
        data = await read_json(request)
        title = data.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ApiError(422, "Validation Failed", errors=[{"resource": "Issue", "field": "title",
                                                               "code": "missing_field"}])
        token = self.s.caller(request)
        assert token is not None
        number = add_issue(self.s, repo, title, data.get("body") or "", tuple(data.get("labels") or ()),
                           author=token.login)
        with self.s._lock:
            return web.json_response(self.issue_json(repo, repo.issues[number]), status=201)

    async def list_comments(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        with self.s._lock:
            number = self._issue(repo, request)["number"]
            items = [self.comment_json(repo, number, c) for c in repo.comments.get(number, [])]
        return paginate(request, items)

    async def create_comment(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True)
        data = await read_json(request)
        body = data.get("body")
        if not isinstance(body, str) or not body.strip():
            raise ApiError(422, "Validation Failed", errors=[{"resource": "IssueComment", "field": "body",
                                                               "code": "missing_field"}])
        token = self.s.caller(request)
        assert token is not None
        with self.s._lock:
            issue = self._issue(repo, request)
            comment = _store_comment(repo, issue["number"], body, token.login)
            issue["updated"] = int(time.time())
            return web.json_response(self.comment_json(repo, issue["number"], comment), status=201)

    # -- pulls ------------------------------------------------------------------------------
    def side_json(self, repo: FakeRepo, branch: str, sha: str) -> dict[str, Any]:
        return {"label": f"{repo.owner}:{branch}", "ref": branch, "sha": sha,
                "user": self.s.user_json(repo.owner),
                "repo": {"name": repo.name, "full_name": repo.full_name, "url": self.s.api(repo),
                         "owner": self.s.user_json(repo.owner), "private": repo.private}}

    def pull_json(self, repo: FakeRepo, number: int) -> dict[str, Any]:
        pull, issue = repo.pulls[number], repo.issues[number]
        return {
            "id": 20_000 + number, "node_id": f"PR_{number}", "number": number, "state": issue["state"],
            "title": issue["title"], "body": issue["body"], "draft": pull["draft"], "merged": False,
            "mergeable": None, "user": self.s.user_json(issue["user"]), "created_at": iso(issue["created"]),
            "updated_at": iso(issue["updated"]), "url": self.s.api(repo, f"/pulls/{number}"),
            "html_url": self.s.html(repo, f"/pull/{number}"), "issue_url": self.s.api(repo, f"/issues/{number}"),
            "diff_url": self.s.html(repo, f"/pull/{number}.diff"),
            "head": self.side_json(repo, pull["head"], pull["head_sha"]),
            "base": self.side_json(repo, pull["base"], pull["base_sha"]),
        }

    async def list_pulls(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        state = request.query.get("state", "open")
        head = request.query.get("head", "").rpartition(":")[2]
        base = request.query.get("base", "")
        with self.s._lock:
            items = [self.pull_json(repo, n) for n in sorted(repo.pulls, reverse=True)
                     if (state == "all" or repo.issues[n]["state"] == state)
                     and (not head or repo.pulls[n]["head"] == head)
                     and (not base or repo.pulls[n]["base"] == base)]
        return paginate(request, items)

    async def get_pull(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request)
        number = int(request.match_info["number"])
        with self.s._lock:
            if number not in repo.pulls:
                raise ApiError(404, "Not Found")
            return web.json_response(self.pull_json(repo, number))

    async def create_pull(self, request: web.Request) -> web.Response:
        repo = self.s.find_repo(request, write=True, push=True)
        data = await read_json(request)
        title, head, base = data.get("title"), str(data.get("head", "")), str(data.get("base", ""))
        head = head.split(":", 1)[1] if ":" in head else head
        head_sha = repo.store.ref_sha(f"refs/heads/{head}")
        base_sha = repo.store.ref_sha(f"refs/heads/{base}")
        for field_name, sha in (("head", head_sha), ("base", base_sha)):
            if sha is None:
                raise ApiError(422, "Validation Failed",
                               errors=[{"resource": "PullRequest", "field": field_name, "code": "invalid"}])
        if not isinstance(title, str) or not title.strip():
            raise ApiError(422, "Validation Failed",
                           errors=[{"resource": "PullRequest", "field": "title", "code": "missing_field"}])
        assert head_sha is not None and base_sha is not None
        if repo.store.is_ancestor(head_sha, base_sha):
            raise ApiError(422, "Validation Failed", errors=[{"resource": "PullRequest", "code": "custom",
                                                               "message": f"No commits between {base} and {head}"}])
        token = self.s.caller(request)
        assert token is not None
        with self.s._lock:
            if any(p["head"] == head and p["base"] == base and repo.issues[n]["state"] == "open"
                   for n, p in repo.pulls.items()):
                raise ApiError(422, "Validation Failed", errors=[{
                    "resource": "PullRequest", "code": "custom",
                    "message": f"A pull request already exists for {repo.owner}:{head}."}])
            number = add_issue(self.s, repo, title, data.get("body") or "", author=token.login)
            repo.issues[number]["pull"] = number
            repo.pulls[number] = {"head": head, "base": base, "head_sha": head_sha, "base_sha": base_sha,
                                  "draft": bool(data.get("draft", False))}
            return web.json_response(self.pull_json(repo, number), status=201)
