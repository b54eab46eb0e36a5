"""The read-only `git` tool against a hostile repository and a hostile model (issue 20).

The repository carries every code-running setting git knows (fsmonitor, hooks, pager, filters,
textconv, external diff, editor, gpg program with signatures shown by default) and points its
work tree and mailmap at a folder of secrets; the model asks for every known way out. The tool
runs in plan mode without asking, so none of it may run a program or show the secret.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.security.test_gitconfig import _git, _program, plant

SECRET = "SECRET-KEY-MATERIAL-4711"


def hostile_repository(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, secrets, marks = tmp_path / "repo", tmp_path / "secrets", tmp_path / "marks"
    root.mkdir()
    secrets.mkdir()
    (secrets / "id_rsa").write_text(f"{SECRET}\n")
    (secrets / "mailmap").write_text(f"{SECRET} <a@b> A <a@b>\n")
    (root / "a.py").write_text("print(1)\n")
    (root / "id_rsa").write_text("placeholder\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-qm", "first commit")
    (root / "link").symlink_to(secrets / "id_rsa")
    plant(root, marks)
    programs = root.parent / "repo-programs"
    for key, name in (("core.editor", "editor"), ("gpg.program", "gpg"), ("sequence.editor", "seq-editor")):
        _git(root, "config", key, _program(programs, name, marks))
    _git(root, "config", "log.showSignature", "true")
    _git(root, "config", "mailmap.file", str(secrets / "mailmap"))
    _git(root, "config", "alias.lg", f"!cat {secrets / 'id_rsa'}")
    _git(root, "config", "core.worktree", str(secrets))  # plain `git diff` now shows the secret
    (root / "a.py").write_text("print(2)\n")  # a change for diff, status and the filters to see
    return root, secrets, marks


HOSTILE = [
    ["diff", str(Path("/SECRETS/id_rsa")), "a.py"], ["diff", "../secrets/id_rsa", "a.py"],
    ["diff", "--no-index", "link", "a.py"], ["diff", "link", "a.py"], ["blame", "--contents", "/SECRETS/id_rsa", "a.py"],
    ["blame", "--contents=link", "a.py"], ["diff", "--output=out.txt"], ["diff", "--outp=out.txt"],
    ["diff", "--ext-diff"], ["diff", "--textconv"], ["log", "-p", "--ext-diff"], ["show", "--textconv", "HEAD"],
    ["log", "--show-signature"], ["log", "--format=%G?"], ["diff", "-O/SECRETS/id_rsa"], ["diff", "-Olink"],
    ["grep", "-f", "/SECRETS/id_rsa"], ["grep", "-flink"], ["grep", "-O", "print"], ["grep", "-iOcat", "print"],
    ["grep", "--open-files-in-pager=cat", "print"], ["grep", "--no-index", "SECRET", "/SECRETS"],
    ["grep", "--untracked", "SECRET"], ["grep", "--recurse-submodules", "x"], ["-c", "core.pager=cat", "log"],
    ["-C", "/SECRETS", "log"], ["--git-dir=/SECRETS", "log"], ["--exec-path=/SECRETS", "log"], ["lg"],
    ["log", "--exec=x"], ["cat-file", "--textconv", "HEAD:a.py"], ["cat-file", "--filters", "HEAD:a.py"],
    ["cat-file", "--batch"], ["ls-files", "--exclude-from=/SECRETS/id_rsa", "-o"], ["ls-files", "-X", "link", "-o"],
    ["blame", "-S", "/SECRETS/id_rsa", "a.py"], ["blame", "--ignore-revs-file=/SECRETS/id_rsa", "a.py"],
    ["log", "--output=/SECRETS/x"], ["log", "-L1,1:/SECRETS/id_rsa"], ["log", "-L1,1:../secrets/id_rsa"],
    ["show", "HEAD:../secrets/id_rsa"], ["diff", "~/.ssh/id_rsa"], ["diff", "--submodule=diff"],
    ["branch", "-D", "master"], ["tag", "evil"], ["status", "--porcelain"], ["diff"], ["diff", "--stat"],
    ["log", "-p", "-1"], ["show", "HEAD"], ["shortlog", "-s", "HEAD"], ["blame", "a.py"], ["grep", "-n", "print"],
    ["log", "--format=%an %s"], ["ls-files"], ["show", "HEAD:id_rsa"],
]


async def test_a_hostile_repository_and_model_get_no_program_and_no_secret(make_session: Any, tmp_path: Path) -> None:
    root, secrets, marks = hostile_repository(tmp_path)
    plain = subprocess.run(["git", "-c", "core.fsmonitor=false", "diff", "--no-ext-diff", "--no-textconv"],
                           cwd=root, capture_output=True, text=True)  # what plain git shows
    assert SECRET in plain.stdout
    marks.unlink(missing_ok=True)
    calls = [[a.replace("/SECRETS", str(secrets)) for a in args] for args in HOSTILE]
    h = make_session(mode="plan", profile="reviewer", root=root, max_steps=100)
    h.script(*(Reply(tool_calls=[call("git", args=args)]) for args in calls), Reply(text="done"))
    await h.run("review")
    results = h.of("tool_result")
    assert len(results) == len(calls) == 56
    leaks = [(args, r.output or r.error) for args, r in zip(calls, results, strict=True)
             if SECRET in (r.output or "") + (r.error or "")]
    assert leaks == []
    assert not marks.exists() or marks.read_text() == "", marks.read_text()
    assert not (root / "out.txt").exists() and not (secrets / "x").exists() and not h.approver.requests
    by_args = {" ".join(args): r for args, r in zip(calls, results, strict=True)}
    assert by_args["diff"].ok and "print(2)" in by_args["diff"].output  # the workspace's own change
    assert by_args["status --porcelain"].ok and "a.py" in by_args["status --porcelain"].output
    assert by_args["log --format=%an %s"].ok and "A first commit" in by_args["log --format=%an %s"].output
    refused = sum(1 for r in results if not r.ok)
    assert refused >= 45, [(a, r.error) for a, r in zip(calls, results, strict=True) if r.ok]


async def test_a_git_file_naming_another_project_is_not_followed(make_session: Any, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "private.txt").write_text(f"{SECRET}\n")
    _git(other, "init", "-q")
    _git(other, "add", ".")
    _git(other, "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-qm", SECRET)
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").write_text(f"gitdir: {other / '.git'}\n")
    h = make_session(mode="plan", profile="reviewer", root=root)
    h.script(Reply(tool_calls=[call("git", args=["log", "-p"])]), Reply(text="done"))
    await h.run("review")
    result = h.of("tool_result")[0]
    assert not result.ok and "does not follow it" in result.error and SECRET not in result.error
