"""GitHub API workspace benchmarks against the fake GitHub server on loopback.

Run: python tests/bench/bench_github.py   (or python -m tests.bench for every benchmark)
Figures: time and requests to open a 2,000-file repository, a cold search (every blob fetched,
8 at a time) and a warm one, publishing 2 and 50 files as one commit, and the worst event-loop
stall while all of that runs (PyGithub is called from threads, so the loop should stay free).
The fake server shares this process (and its GIL), so the figures are upper bounds for the
client's own overhead; real GitHub adds its network round trips on top.
Goals: open < 1 s, warm search < 0.5 s, loop stall < 50 ms.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pydantic import SecretStr  # noqa: E402

from agent.github.auth import TokenSource  # noqa: E402
from agent.github.client import ClientSettings, GitHubClient  # noqa: E402
from agent.github.publish import publish  # noqa: E402
from agent.github.remote import RemoteRepo  # noqa: E402
from agent.github.spec import RepoSpec  # noqa: E402
from agent.workspaces import github as github_workspace  # noqa: E402
from agent.workspaces.github import GitHubWorkspace  # noqa: E402
from tests.github.fake_server import FakeGitHub  # noqa: E402

FILES = 2000
TOKEN = "ghp_benchbenchbenchbenchbenchbenchbench"


def populate(server: FakeGitHub, scratch: Path) -> None:
    """A 2,000-file repository, committed with plain git and pushed into the fake's bare repo."""
    repo = server.create_repo("bench/big", {"README.md": "# big\n"})
    work = scratch / "work"
    subprocess.run(["git", "clone", "-q", str(repo.store.path), str(work)], check=True)
    for n in range(FILES - 1):
        path = work / f"pkg{n % 40}" / f"mod{n}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(f"def f{n}_{i}(x):\n    return x + {i}\n" for i in range(25)))
    git = ["git", "-C", str(work), "-c", "user.name=b", "-c", "user.email=b@example.test"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)
    subprocess.run([*git, "push", "-q", "origin", "main"], check=True)


class LoopWatch:
    """The longest the event loop was late for a 5 ms tick."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - before - 0.005)

    def __enter__(self) -> LoopWatch:
        self._task = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def measure(server: FakeGitHub) -> None:
    token = TokenSource(SecretStr(TOKEN), "bench")
    client = GitHubClient(ClientSettings(api_url=server.url, token=token, write_interval=0.0))
    with LoopWatch() as watch:
        before = len(server.requests)
        started = time.perf_counter()
        remote = await RemoteRepo.open(client, RepoSpec("bench", "big"), task="bench")
        print(f"open {FILES} files: {time.perf_counter() - started:.3f} s, {len(server.requests) - before} requests")
        workspace = GitHubWorkspace(remote)
        github_workspace.SEARCH_FILE_CAP = FILES  # measure the whole repository, past the default cap
        pattern = re.compile(r"return x \+ 24$")
        for label in ("cold", "warm"):
            before, started = len(server.requests), time.perf_counter()
            result = await workspace.search(pattern, "", max_results=100_000)
            elapsed = time.perf_counter() - started
            print(f"search {label}: {elapsed:.3f} s, {result.files_searched} files, {len(result.hits)} hits, "
                  f"{len(server.requests) - before} requests")
        for count in (2, 50):
            for n in range(count):
                path = f"pkg{n % 40}/mod{n}.py"
                await remote.stage(path, (await remote.read_text(path)) + f"# edit {count}\n")
            started = time.perf_counter()
            result = await publish(remote)
            print(f"publish {count} files: {time.perf_counter() - started:.3f} s (commit {result.commit[:7]}; "
                  "add about 1 s per write on api.github.com, where writes are spaced a second apart)")
    print(f"worst event-loop stall: {watch.worst * 1000:.1f} ms")
    client.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = FakeGitHub(Path(tmp) / "gh")
        server.add_token(TOKEN, "bench")
        with server:
            populate(server, Path(tmp))
            asyncio.run(measure(server))


if __name__ == "__main__":
    main()
