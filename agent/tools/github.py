"""GitHub tools: issues, issue comments and pull requests of the repository being worked on.

Offered only in workspaces linked to a GitHub repository (the API workspace and `--clone`
workspaces). Reading issues is a read; commenting and opening a pull request reach the network
and change things on GitHub, so they are `network` tools: blocked in plan mode, asked in ask mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import Field

from agent.tools.base import Proposal, Tool, ToolArgs, ToolContext, ToolError, ToolKind

if TYPE_CHECKING:
    from agent.github.issues import PullRequestInfo
    from agent.github.publish import Publisher
    from agent.github.remote import RemoteRepo
    from agent.workspaces.base import Workspace

MAX_COMMENT_SHOWN = 4000


class GitHubLink(Protocol):
    """What a GitHub-linked workspace offers these tools (its `github` attribute)."""

    remote: RemoteRepo
    publisher: Publisher

    async def open_pull_request(self, title: str, body: str = "", draft: bool = False) -> PullRequestInfo: ...


def linked(workspace: Workspace) -> GitHubLink | None:
    return getattr(workspace, "github", None)


class _GitHubTool(Tool):
    kind: ClassVar[ToolKind] = "read"

    def available(self, workspace: Workspace) -> bool:
        return linked(workspace) is not None

    def link(self, ctx: ToolContext) -> GitHubLink:
        link = linked(ctx.workspace)
        if link is None:
            raise ToolError("this workspace is not a GitHub repository")
        return link


class GetIssueArgs(ToolArgs):
    number: int = Field(ge=1, description="Issue (or pull request) number.")


class GetIssue(_GitHubTool):
    name = "get_issue"
    description = "Read a GitHub issue of this repository: title, state, labels, description and every comment."
    Args = GetIssueArgs

    async def run(self, args: GetIssueArgs, ctx: ToolContext) -> str:
        from agent.github.issues import get_issue

        issue, comments = await get_issue(self.link(ctx).remote, args.number)
        kind = "Pull request" if issue.is_pull else "Issue"
        lines = [f"{kind} #{issue.number} [{issue.state}] {issue.title}", f"by {issue.author} · {issue.url}"]
        if issue.labels:
            lines.append("labels: " + ", ".join(issue.labels))
        lines += ["", issue.body.strip() or "(no description)"]
        for comment in comments:
            body = comment.body.strip()
            if len(body) > MAX_COMMENT_SHOWN:
                body = body[:MAX_COMMENT_SHOWN] + " […]"
            lines += ["", f"--- comment by {comment.author} ({comment.created_at})", body]
        return "\n".join(lines)


class ListIssuesArgs(ToolArgs):
    state: Literal["open", "closed", "all"] = Field(default="open", description="Which issues to list.")
    labels: list[str] = Field(default_factory=list, description="Only issues carrying all these labels.")
    limit: int = Field(default=30, ge=1, le=100, description="Most issues to list (newest first).")


class ListIssues(_GitHubTool):
    name = "list_issues"
    description = "List issues of this GitHub repository (newest first, pull requests excluded)."
    Args = ListIssuesArgs

    async def run(self, args: ListIssuesArgs, ctx: ToolContext) -> str:
        from agent.github.issues import list_issues

        issues = await list_issues(self.link(ctx).remote, args.state, args.labels, args.limit)
        if not issues:
            return f"no {args.state} issues" + (f" labelled {', '.join(args.labels)}" if args.labels else "")
        lines = []
        for issue in issues:
            labels = f" ({', '.join(issue.labels)})" if issue.labels else ""
            lines.append(f"#{issue.number} [{issue.state}] {issue.title}{labels} · {issue.comments} comment(s)")
        return "\n".join(lines)


class AddIssueCommentArgs(ToolArgs):
    issue_number: int = Field(ge=1, description="Issue (or pull request) to comment on.")
    body: str = Field(min_length=1, description="The comment, in GitHub Markdown.")


class AddIssueComment(_GitHubTool):
    name = "add_issue_comment"
    description = "Post a comment on a GitHub issue or pull request of this repository (the user approves it)."
    Args = AddIssueCommentArgs
    kind: ClassVar[ToolKind] = "network"

    def key_argument(self, args: dict[str, Any]) -> str:
        return f"#{args.get('issue_number')}"

    async def prepare(self, args: AddIssueCommentArgs, ctx: ToolContext) -> Proposal:
        remote = self.link(ctx).remote
        return Proposal(summary=f"comment on issue #{args.issue_number} of {remote.full_name}:\n\n{args.body}")

    async def run(self, args: AddIssueCommentArgs, ctx: ToolContext) -> str:
        from agent.github.issues import add_issue_comment

        comment = await add_issue_comment(self.link(ctx).remote, args.issue_number, args.body)
        return f"Commented on issue #{args.issue_number}: {comment.url}"


class CreatePullRequestArgs(ToolArgs):
    title: str = Field(min_length=1, description="Pull request title (also the commit subject).")
    body: str = Field(default="", description="Pull request description, in GitHub Markdown.")
    draft: bool = Field(default=False, description="Open it as a draft.")


class CreatePullRequest(_GitHubTool):
    name = "create_pull_request"
    description = (
        "Publish every unpublished change as one commit on the work branch and open a pull request into "
        "the base branch (or report the one already open for the branch). The user approves it first."
    )
    Args = CreatePullRequestArgs
    kind: ClassVar[ToolKind] = "network"

    def key_argument(self, args: dict[str, Any]) -> str:
        return str(args.get("title", ""))

    async def prepare(self, args: CreatePullRequestArgs, ctx: ToolContext) -> Proposal:
        link = self.link(ctx)
        pending = "publish the unpublished changes as one commit and " if link.publisher.has_unpublished() else ""
        draft = "draft " if args.draft else ""
        summary = (f"{pending}open a {draft}pull request on {link.remote.full_name} from "
                   f"{link.publisher.branch} into {link.remote.pr_base}: {args.title}")
        return Proposal(summary=summary + (f"\n\n{args.body}" if args.body else ""))

    async def run(self, args: CreatePullRequestArgs, ctx: ToolContext) -> str:
        info = await self.link(ctx).open_pull_request(args.title, args.body, args.draft)
        lines = []
        if info.published is not None:
            files = ", ".join(f.path for f in info.published.files)
            lines.append(f"Published commit {info.published.commit[:12]} on {info.head}: {files}.")
        verb = "Opened" if info.created else "A pull request was already open:"
        lines.append(f"{verb} pull request #{info.number} ({info.head} → {info.base}): {info.url}")
        return "\n".join(lines)


class SetRepositoryContextArgs(ToolArgs):
    owner: str = Field(min_length=1, description="Owner (user or organisation) of the repository.")
    repo: str = Field(min_length=1, description="Repository name.")
    ref: str | None = Field(default=None, description="Branch, tag or commit to start from (default: the "
                                                      "repository's default branch).")


class SetRepositoryContext(_GitHubTool):
    """Seed 001's repository switch. A `network` tool: it changes what the whole session works on
    (and later edits and pull requests go there), so the user approves it in ask mode, and plan
    mode, which must not change anything, blocks it."""

    name = "set_repository_context"
    description = (
        "Switch this session to another GitHub repository (and branch): the file tools, the map and publishing "
        "then work there. Refused while this repository has unpublished changes (open a pull request first)."
    )
    Args = SetRepositoryContextArgs
    kind: ClassVar[ToolKind] = "network"
    examples = ({"owner": "octo", "repo": "docs"}, {"owner": "octo", "repo": "hello", "ref": "release-2"})

    def key_argument(self, args: dict[str, Any]) -> str:
        return _spec(args.get("owner"), args.get("repo"), args.get("ref"))

    async def prepare(self, args: SetRepositoryContextArgs, ctx: ToolContext) -> Proposal:
        remote = self.link(ctx).remote
        target = _spec(args.owner, args.repo, args.ref)
        return Proposal(summary=f"switch this session from {remote.full_name}@{remote.ref} to {target}")

    async def run(self, args: SetRepositoryContextArgs, ctx: ToolContext) -> str:
        from agent.github.switch import switch_repository

        self.link(ctx)
        now = await switch_repository(ctx.workspace, _spec(args.owner, args.repo, args.ref))
        return f"Now working on {now}."


def _spec(owner: Any, repo: Any, ref: Any) -> str:
    return f"{owner}/{repo}" + (f"@{ref}" if ref else "")


GITHUB_TOOLS: list[type[Tool]] = [GetIssue, ListIssues, AddIssueComment, CreatePullRequest, SetRepositoryContext]
