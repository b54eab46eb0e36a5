"""git: read-only git commands for profiles that may inspect history but never change anything.

Not part of the default tool set: a profile offers it by naming `git` (the reviewer does). It runs
git directly (no shell) with a fixed list of subcommands, and refuses the options that would
write files, run external programs or change configuration.
"""

from __future__ import annotations

import asyncio

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError
from agent.tools.shell import _exec_available, _format, child_env, kill_group
from agent.workspaces.base import Workspace

READ_ONLY = ("status", "diff", "log", "show", "blame", "ls-files", "grep", "shortlog", "describe",
             "rev-parse", "branch", "tag", "cat-file", "whatchanged")
# Options that write (--output), run programs (--ext-diff, textconv filters, -c core.pager=...),
# read outside the repository (--no-index), or change refs (branch/tag with names create them;
# only their listing forms are allowed).
REFUSED_PREFIXES = ("--output", "--ext-diff", "--textconv", "-c", "--exec", "--config", "--upload-pack",
                    "-o", "--open-files-in-pager", "-O", "--no-index")
# The repository's own config may name diff drivers and filters that run programs: switched off.
NO_PROGRAMS = {"diff": ["--no-ext-diff", "--no-textconv"], "log": ["--no-ext-diff", "--no-textconv"],
               "show": ["--no-ext-diff", "--no-textconv"], "whatchanged": ["--no-ext-diff", "--no-textconv"]}
LISTING_ONLY = {"branch": {"--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--contains",
                           "--merged", "--no-merged", "--show-current"},
                "tag": {"--list", "-l", "-n", "--contains", "--merged", "--no-merged"}}
TIMEOUT = 30


class GitArgs(ToolArgs):
    args: list[str] = Field(description="git arguments without 'git', e.g. [\"diff\", \"--stat\", \"HEAD~1\"]. "
                                        f"Subcommands: {', '.join(READ_ONLY)}.")


def check_read_only(args: list[str]) -> None:
    if not args:
        raise ToolError(f"give a subcommand, one of: {', '.join(READ_ONLY)}")
    sub, rest = args[0], args[1:]
    if sub not in READ_ONLY:
        raise ToolError(f"git {sub} is not allowed: this tool runs read-only commands ({', '.join(READ_ONLY)})")
    for arg in rest:
        if arg.startswith(REFUSED_PREFIXES) and arg not in ("-O0",):
            raise ToolError(f"option {arg!r} is not allowed (it could write files or run programs)")
    if sub in LISTING_ONLY:
        extra = [a for a in rest if a not in LISTING_ONLY[sub] and not a.startswith("-")]
        if extra and "--list" not in rest and "-l" not in rest:
            raise ToolError(f"git {sub} with names creates refs; use `git {sub} --list [PATTERN]`")


class GitReadOnly(Tool):
    name = "git"
    description = ("Run a read-only git command in the workspace (status, diff, log, show, blame, grep, ...) "
                   "and return its output. Commands that change anything are refused.")
    Args = GitArgs
    kind = "read"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def run(self, args: GitArgs, ctx: ToolContext) -> str:
        check_read_only(args.args)
        env = {**child_env(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
        proc = await asyncio.create_subprocess_exec(
            "git", "--no-pager", args.args[0], *NO_PROGRAMS.get(args.args[0], []), *args.args[1:],
            cwd=str(ctx.workspace.root), env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
        try:
            async with asyncio.timeout(TIMEOUT):
                out, err = await proc.communicate()
        except (TimeoutError, asyncio.CancelledError) as exc:
            await kill_group(proc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ToolError(f"git {args.args[0]} took more than {TIMEOUT} s and was stopped") from None
        return _format(f"exit code: {proc.returncode}", out, err)
