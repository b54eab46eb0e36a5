"""A ten-repository fleet batch on one, two and three workers: wall time of `coder-tui fleet run`.

Run: python tests/bench/bench_fleet.py   (needs redis-server; or python -m tests.bench for every benchmark)
Each job is a real session on a real worker process: two model turns (the scripted model on
loopback, answering at once, or after DELAY seconds a turn as a stand-in for a real model's
latency), one file written, and one commit published through the fake GitHub's API (which, as
GitHub asks, leaves a second between writes). The wall time runs from `fleet run` to its exit,
the workers started and ready before. Goal: three workers at least twice as fast as one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.conftest import cli  # noqa: E402
from tests.fakellm import FakeLLM, Reply  # noqa: E402
from tests.fleet.conftest import Fleet, RedisServer, edit_then_done, repos_file  # noqa: E402
from tests.github.conftest import TOKEN  # noqa: E402
from tests.github.fake_server import FakeGitHub  # noqa: E402

REPOS = 10
DELAYS = (0.0, 3.0)


def batch(bed: Fleet, home: Path, names: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(cli("fleet", "run", "bump the version", "--repos", str(repos_file(home, names)),
                              "--mode", "allow"), env=bed.client_env(home), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the batch failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


def main() -> None:
    if shutil.which("redis-server") is None:
        print("skipped: redis-server is not installed (apt-get install redis-server)")
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        delay = {"seconds": 0.0}

        def model(body: dict[str, Any]) -> Reply:
            reply = edit_then_done(body)
            reply.delay = delay["seconds"]
            return reply

        github = FakeGitHub(folder / "github")
        github.add_token(TOKEN, "alice")
        with FakeLLM(responder=model) as llm, github:
            bed = Fleet(RedisServer(folder).start(), llm, github, folder)
            try:
                home = folder / "home"
                home.mkdir()
                print(f"{REPOS} repositories, each: 2 model turns, 1 file, 1 published commit")
                for seconds in DELAYS:
                    delay["seconds"] = seconds
                    for workers in (1, 2, 3):
                        bed.keep(workers)
                        names = [f"bench{seconds:g}-{workers}/r{n}" for n in range(1, REPOS + 1)]
                        for name in names:
                            github.create_repo(name, {"README.md": "# project\n"})
                        wall = batch(bed, home, names)
                        print(f"  model turn {seconds:g} s, {workers} worker(s): {wall:6.1f} s wall "
                              f"({wall / REPOS:.1f} s a repository)", flush=True)
                    bed.stop()
                    bed.workers.clear()
            finally:
                bed.stop()
                bed.redis.stop()


if __name__ == "__main__":
    main()
