"""git: read-only git commands for profiles that may inspect history but never change anything.

Not part of the default tool set: a profile offers it by naming `git` (the reviewer does). It runs
in plan mode without asking, so it must neither run a program nor read a file outside the
workspace, whatever the repository's `.git/config` or the model's arguments say:

- subcommands AND options are allow-listed (per subcommand); anything else is refused by name;
- every argument that is not an option (revisions, paths) may not be absolute, hold a `..`
  component, or name something that resolves outside the workspace (`git diff /outside a.py`
  would compare files without any repository);
- git runs with the repository pinned (GIT_DIR, GIT_WORK_TREE: a `core.worktree` or a `.git`
  file naming another folder is not followed), no environment of ours beyond a minimal one, and
  `agent.gitsafe`'s overrides (no fsmonitor, hooks, pager, filters, external diff, editor) plus
  `--no-textconv`, no signature checks (which run `gpg.program`) and no mailmap file.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from agent import gitsafe, paths
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError
from agent.tools.shell import _exec_available, _format, kill_group
from agent.workspaces.base import Workspace

# Options every history command may take (exact, or NAME=VALUE for those ending in "=").
_DIFF = {"-p", "--patch", "-s", "--no-patch", "--stat", "--stat=", "--numstat", "--shortstat", "--summary",
         "--name-only", "--name-status", "--raw", "-U", "--unified=", "-W", "--function-context", "-w",
         "--ignore-all-space", "-b", "--ignore-space-change", "--ignore-blank-lines", "--word-diff",
         "--word-diff=", "--color=", "--no-color", "--diff-filter=", "-M", "--find-renames", "--find-renames=",
         "-C", "--find-copies", "-R", "--relative", "--relative=", "--abbrev", "--abbrev=", "--minimal",
         "--patience", "--histogram", "--diff-algorithm=", "--dirstat", "--dirstat=", "--check", "--full-index",
         "--binary", "-z", "-G", "-S", "--pickaxe-all", "--ignore-submodules", "--compact-summary"}
_LOG = {*_DIFF, "-n", "--max-count=", "--skip=", "--since=", "--after=", "--until=", "--before=", "--author=",
        "--committer=", "--grep=", "-i", "--regexp-ignore-case", "--all-match", "--invert-grep", "-E", "-F",
        "--oneline", "--pretty=", "--format=", "--abbrev-commit", "--no-abbrev-commit", "--decorate",
        "--decorate=", "--no-decorate", "--graph", "--all", "--branches", "--tags", "--remotes", "--first-parent",
        "--merges", "--no-merges", "--reverse", "--follow", "--date=", "--relative-date", "--topo-order",
        "--date-order", "--author-date-order", "--left-right", "--cherry-pick", "--ancestry-path", "--boundary",
        "--full-history", "--simplify-merges", "--parents", "--children", "-L", "--no-walk",
        "-m", "--cc", "--dd", "--min-parents=", "--max-parents=", "--source"}
ALLOWED: dict[str, set[str]] = {
    "status": {"-s", "--short", "-b", "--branch", "--porcelain", "--porcelain=", "--long", "-u", "-uno",
               "-unormal", "-uall", "--untracked-files=", "--ignored", "-z", "--ahead-behind", "--no-ahead-behind",
               "--renames", "--no-renames"},
    "diff": {*_DIFF, "--cached", "--staged", "--merge-base", "--exit-code", "--quiet"},
    "log": _LOG, "whatchanged": _LOG, "show": {*_LOG, "--quiet"},
    "shortlog": {"-n", "--numbered", "-s", "--summary", "-e", "--email", "--all", "--since=", "--until=",
                 "--author=", "--no-merges", "--merges", "--group="},
    "blame": {"-L", "-l", "-t", "-s", "-e", "-w", "-M", "-C", "-p", "--porcelain", "--line-porcelain",
              "--incremental", "--root", "--show-stats", "-c", "-f", "--show-name", "-n", "--show-number",
              "--date=", "--abbrev=", "--reverse", "--first-parent", "--color-lines", "--color-by-age"},
    "grep": {"-i", "--ignore-case", "-w", "--word-regexp", "-v", "--invert-match", "-n", "--line-number",
             "--column", "-l", "--files-with-matches", "-L", "--files-without-match", "-c", "--count", "-h", "-H",
             "--full-name", "-E", "--extended-regexp", "-F", "--fixed-strings", "-G", "--basic-regexp", "-P",
             "--perl-regexp", "-e", "--and", "--or", "--not", "--all-match", "-q", "--quiet", "-A", "-B", "-C",
             "--context=", "--after-context=", "--before-context=", "-p", "--show-function", "-W",
             "--function-context", "--cached", "--max-depth=", "-I", "-o", "--only-matching", "--heading",
             "--break", "-z", "--null", "--threads="},
    "ls-files": {"-c", "--cached", "-d", "--deleted", "-m", "--modified", "-o", "--others", "-i", "--ignored",
                 "-s", "--stage", "-u", "--unmerged", "-k", "--killed", "--directory", "--no-empty-directory",
                 "--exclude-standard", "-z", "--full-name", "--abbrev", "--abbrev=", "--eol", "--deduplicate",
                 "--format=", "-t", "-v"},
    "describe": {"--tags", "--all", "--long", "--abbrev=", "--always", "--contains", "--exact-match",
                 "--first-parent", "--match=", "--exclude=", "--dirty", "--candidates="},
    "rev-parse": {"--short", "--short=", "--abbrev-ref", "--symbolic-full-name", "--verify", "-q", "--quiet",
                  "--show-toplevel", "--show-prefix", "--show-cdup", "--is-inside-work-tree", "--is-bare-repository",
                  "--git-dir", "--absolute-git-dir", "--all", "--branches", "--tags", "--remotes"},
    "branch": {"--list", "-l", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--contains",
               "--no-contains", "--merged", "--no-merged", "--show-current", "--sort=", "--format=", "--points-at",
               "--color=", "--no-color", "--column", "--no-column"},
    "tag": {"--list", "-l", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--sort=", "--format=",
            "--points-at", "--column", "--no-column"},
    "cat-file": {"-t", "-s", "-e", "-p"},
}
READ_ONLY = tuple(ALLOWED)
# Short options that take their value attached (-n5, -U3, -L10,20:a.py, -Sneedle). Any other
# attached text would be more short options bundled (`-iO` opens a pager), so it is refused.
_VALUED = {"-n", "-U", "-L", "-M", "-C", "-S", "-G"}
VALUED: dict[str, set[str]] = {"diff": {"-U", "-M", "-C", "-S", "-G"}, "log": _VALUED, "whatchanged": _VALUED,
                               "show": _VALUED, "blame": {"-L", "-M", "-C"}, "grep": {"-A", "-B", "-C", "-e"},
                               "shortlog": set(), "describe": set(), "tag": {"-n"}}
LISTING_ONLY = ("branch", "tag")
# Switched off on every run: textconv and external diff programs, signature checks (gpg.program),
# a mailmap file the repository's config may point anywhere.
NO_PROGRAMS = {"diff": ["--no-ext-diff", "--no-textconv"], "log": ["--no-ext-diff", "--no-textconv"],
               "show": ["--no-ext-diff", "--no-textconv"], "whatchanged": ["--no-ext-diff", "--no-textconv"],
               "blame": ["--no-textconv"], "grep": ["--no-textconv"]}
TOOL_OVERRIDES = {"log.showSignature": "false", "mailmap.file": "", "mailmap.blob": "", "core.editor": ":",
                  "sequence.editor": ":", "blame.ignoreRevsFile": "", "core.worktree": ""}
REFUSED_FORMAT = ("%G", "%(describe")  # signature placeholders run gpg.program
ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER", "LOGNAME")
TIMEOUT = 30


class GitArgs(ToolArgs):
    args: list[str] = Field(description="git arguments without 'git', e.g. [\"diff\", \"--stat\", \"HEAD~1\"]. "
                                        f"Subcommands: {', '.join(READ_ONLY)}.")


def _option_allowed(sub: str, arg: str) -> bool:
    allowed = ALLOWED[sub]
    if arg in allowed:
        return True
    name, eq, _ = arg.partition("=")
    if eq and f"{name}=" in allowed:
        return True
    return not arg.startswith("--") and arg[:2] in VALUED.get(sub, set())


def check_read_only(args: list[str], root: Path | None = None) -> None:
    """ToolError unless `args` is a git command this tool may run (root: confine paths to it)."""
    if not args:
        raise ToolError(f"give a subcommand, one of: {', '.join(READ_ONLY)}")
    sub, rest = args[0], args[1:]
    if sub not in ALLOWED:
        raise ToolError(f"git {sub} is not allowed: this tool runs read-only commands ({', '.join(READ_ONLY)})")
    options_end = False
    for arg in rest:
        if arg == "--" and not options_end:
            options_end = True
        elif arg.startswith("-") and not options_end:
            if not _option_allowed(sub, arg):
                raise ToolError(f"option {arg!r} is not allowed for git {sub} (this tool allows only options "
                                "that cannot write files, run programs or read outside the workspace)")
            if arg.startswith(("--format", "--pretty")) and any(p in arg for p in REFUSED_FORMAT):
                raise ToolError(f"{arg!r}: signature and describe placeholders are not allowed")
            if arg.startswith("-L") and len(arg) > 2:
                _check_operand(arg[2:].rsplit(":", 1)[-1], root)
        else:
            _check_operand(arg, root)
    if sub in LISTING_ONLY:
        names = [a for a in rest if not a.startswith("-")]
        if names and "--list" not in rest and "-l" not in rest:
            raise ToolError(f"git {sub} with names creates refs; use `git {sub} --list [PATTERN]`")


def _check_operand(arg: str, root: Path | None) -> None:
    """A revision or path: never absolute, never `..`, never resolving outside the workspace."""
    path_part = arg.split(":", 1)[1] if ":" in arg and not arg.startswith(":") else arg
    for text in {arg, path_part}:
        if text.startswith(("/", "~")) or ".." in text.replace("\\", "/").split("/"):
            raise ToolError(f"{arg!r} points outside the workspace; give paths relative to it")
    if root is None or "\0" in arg:
        return
    candidate = root / arg
    if os.path.lexists(candidate) and not _inside(candidate.resolve(), root):
        raise ToolError(f"{arg!r} leads outside the workspace (a symbolic link)")


def _inside(path: Path, root: Path) -> bool:
    return path == root.resolve() or path.is_relative_to(root.resolve())


def repository(root: Path) -> tuple[Path, Path]:
    """(git dir, work tree) for the workspace, found without letting the repository redirect us.

    The nearest `.git` at or above the workspace decides: a folder is used as it is; a `.git`
    file inside the workspace is followed only to a git worktree of coder-tui's own clones or to
    a linked worktree whose repository names this folder back (what `git worktree add` makes).
    """
    for folder in (root, *root.parents):
        marker = folder / ".git"
        if marker.is_dir() and not marker.is_symlink():
            return marker.resolve(), folder
        if marker.is_file() and not marker.is_symlink():
            return _linked(marker), folder
    raise ToolError("this workspace is not a git repository")


def _linked(marker: Path) -> Path:
    try:
        text = marker.read_text(errors="replace").strip()
    except OSError as exc:
        raise ToolError(f"cannot read {marker}: {exc.strerror}") from None
    gitdir = (marker.parent / text.removeprefix("gitdir:").strip()).resolve()
    if text.startswith("gitdir:") and gitdir.is_dir():
        if gitdir.is_relative_to(paths.cache_dir().resolve()):
            return gitdir
        try:
            back = Path((gitdir / "gitdir").read_text().strip())
        except OSError:
            back = None
        if back is not None and back.resolve() == marker.resolve():
            return gitdir
    raise ToolError(f"{marker} names a git folder elsewhere ({text[:120]!r}); the git tool does not follow it")


def git_env(git_dir: Path, work_tree: Path, values: dict[str, str]) -> dict[str, str]:
    """A minimal environment: none of our variables, git pinned to this repository."""
    base = {k: v for k, v in os.environ.items() if k in ENV_KEEP}
    env = gitsafe.environment(values, base=base)
    env.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(work_tree), GIT_CEILING_DIRECTORIES=str(work_tree.parent),
               GIT_CONFIG_NOSYSTEM="1", GIT_EDITOR=":", GIT_SEQUENCE_EDITOR=":", HOME=os.devnull,
               GIT_NO_REPLACE_OBJECTS="1", TERM="dumb")
    return env


def argv(root: Path, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The checked command line and environment for `git ARGS` in the workspace `root`."""
    check_read_only(args, root)
    git_dir, work_tree = repository(root)
    values = {**gitsafe.overrides(work_tree), **TOOL_OVERRIDES}
    values["core.worktree"] = str(work_tree)
    extra = NO_PROGRAMS.get(args[0], []) + (["--ignore-submodules=all"] if args[0] == "status" else [])
    return ["git", *gitsafe.config_flags(values), args[0], *extra, *args[1:]], git_env(git_dir, work_tree, values)


class GitReadOnly(Tool):
    name = "git"
    description = ("Run a read-only git command in the workspace (status, diff, log, show, blame, grep, ...) "
                   "and return its output. Commands that change anything, and options that could run "
                   "programs or read outside the workspace, are refused.")
    Args = GitArgs
    kind = "read"

    def available(self, workspace: Workspace) -> bool:
        return _exec_available(workspace)

    async def run(self, args: GitArgs, ctx: ToolContext) -> str:
        root = Path(str(ctx.workspace.root)).resolve()
        command, env = await asyncio.to_thread(argv, root, list(args.args))
        proc = await asyncio.create_subprocess_exec(
            *command, cwd=str(root), env=env,
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
