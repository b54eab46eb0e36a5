"""The fleet as users run it: `coder-tui fleet run/status/approve` against three real worker
processes, a real redis-server, the scripted model and the fake GitHub."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_KEY, cli, write_files
from tests.fakellm import Reply, call
from tests.fleet.conftest import Fleet, edit_then_done, last_user, repo_of, repos_file, turns, wait_until
from tests.github.conftest import TOKEN

# Three worker processes start (and import the model layer) on a busy machine, and a killed worker's
# job waits out the visibility timeout: more than the suite's 120 s default in the worst case.
pytestmark = pytest.mark.timeout(360)
FILES = {"README.md": "# project\n", "setup.cfg": "[metadata]\nversion = 1\n"}


def fleet_cli(fleet: Fleet, home: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli("fleet", *args), env=fleet.client_env(home), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def make_repos(fleet: Fleet, prefix: str, count: int) -> list[str]:
    names = [f"octo/{prefix}{n}" for n in range(1, count + 1)]
    for name in names:
        fleet.github.create_repo(name, FILES)
    return names


def batch_id(stdout: str) -> str:
    return json.loads(stdout.splitlines()[-1])["batch"]["id"]


def status(fleet: Fleet, home: Path, batch: str) -> dict[str, Any]:
    done = fleet_cli(fleet, home, "status", batch, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def commits_on(fleet: Fleet, repo: str, branch: str) -> list[str]:
    git = fleet.github.repo(repo).store.repo.git
    return git.rev_list(f"refs/heads/{branch}", "--not", "refs/heads/main").split()


def test_ten_repositories_each_get_one_outcome_and_no_secret_reaches_redis(three: Fleet, isolated_home: Path) -> None:
    names = make_repos(three, "ten", 10)
    listing = repos_file(isolated_home, names)
    done = fleet_cli(three, isolated_home, "run", "bump the version", "--repos", str(listing), "--mode", "allow")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(any(line.startswith(f"{name}: done: published branch") for line in lines) for name in names), done.stdout
    batch = next(line.split()[1].rstrip(":") for line in lines if line.startswith("batch "))
    report = status(three, isolated_home, batch)
    jobs = report["jobs"]
    assert [j["target"] for j in jobs] == names and {j["state"] for j in jobs} == {"done"}
    branch = f"coder-tui/fleet-{batch}"
    for job, name in zip(jobs, names):
        commits = commits_on(three, name, branch)
        assert job["branch"] == branch and job["commit"] == commits[0] and len(commits) == 1
        assert three.github.repo(name).store.file_at(branch, "README.md").decode() == \
            f"# {name.split('/')[1]}, bumped\n"
        assert job["session"] and job["worker"] and job["attempts"] == 1 and job["tokens"] > 0
        assert job["files"] == ["README.md"]
    diff = fleet_cli(three, isolated_home, "status", batch, "--diff", names[2])
    assert "-# project\n+# ten3, bumped\n" in diff.stdout and diff.stdout.startswith("--- a/README.md")
    assert len({j["worker"] for j in jobs}) > 1  # the batch ran on more than one worker
    everything = three.redis.dump()
    assert TEST_KEY not in everything and TOKEN not in everything
    assert "bump the version" in everything  # (the dump does hold the batch)


def test_a_worker_killed_mid_job_its_job_finishes_on_another_and_is_published_once(three: Fleet,
                                                                                    isolated_home: Path) -> None:
    [name] = make_repos(three, "kill", 1)
    held = three.github.hold("POST", f"^/repos/{name}/pulls$")  # after the branch, before the pull request
    run = subprocess.Popen(cli("fleet", "run", "bump the version", "--repos", str(repos_file(isolated_home, [name])),
                               "--mode", "allow", "--pr"), env=three.client_env(isolated_home), text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert held.arrived.wait(120), "the job never asked for its pull request"
    job = three.redis.client()
    [key] = [k for k in job.scan_iter("coder-tui:fleet:*:job:1") if job.hget(k, "target") == name]
    first = job.hget(key, "worker")
    three.kill(first)  # SIGKILL: the worker's own process, mid-job (its branch published, no pull request)
    held.release.set()
    out, err = run.communicate(timeout=180)
    assert run.returncode == 0, out + err
    batch = key.split(":")[2]
    [report] = status(three, isolated_home, batch)["jobs"]
    assert report["state"] == "done" and report["attempts"] == 2 and report["worker"] != first
    branch = f"coder-tui/fleet-{batch}"
    assert len(commits_on(three, name, branch)) == 1 and report["commit"] == commits_on(three, name, branch)[0]
    assert len(three.github.calls("POST", f"^/repos/{name}/git/refs$")) == 1  # the branch was made once
    assert len(three.github.calls("POST", f"^/repos/{name}/git/commits$")) == 1
    pulls = three.github.repo(name).pulls
    assert len(pulls) == 1 and report["pr_url"].endswith("/pull/1") and pulls[1]["head"] == branch
    assert f"{name}: running attempt 2 on" in out and "published by an earlier attempt" in out


def priced(body: dict[str, Any]) -> Reply:
    """Every request costs $0.25 with gpt-4o's prices (100,000 prompt tokens)."""
    return edit_then_done(body, usage=(100_000, 0))


def test_a_batch_budget_stops_the_running_job_and_the_rest_never_start(three: Fleet, isolated_home: Path) -> None:
    names = make_repos(three, "budget", 5)
    three.llm.responder = priced
    done = fleet_cli(three, isolated_home, "run", "bump the version", "--repos", str(repos_file(isolated_home, names)),
                     "--mode", "allow", "--model", "openai/gpt-4o", "--max-cost", "0.6", "--concurrency", "1",
                     "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    final = json.loads(done.stdout.splitlines()[-1])
    jobs = sorted(final["jobs"], key=lambda j: j["started"] or float("inf"))
    assert [j["state"] for j in jobs] == ["done", "failed", "failed", "failed", "failed"]
    assert jobs[0]["cost"] == 0.5 and jobs[1]["note"] == "stopped: the batch budget is spent"
    assert [j["note"] for j in jobs[2:]] == ["not started: the batch budget is spent"] * 3
    assert [j["started"] for j in jobs[2:]] == [0.0] * 3 and 0.6 <= final["spent"]["cost"] <= 0.75
    assert jobs[0]["finished"] <= jobs[1]["started"]  # --concurrency 1: one after the other
    assert not three.github.repo(names[0]).store.refs("refs/heads/coder-tui/") == []
    assert [n for n in names if three.github.repo(n).store.refs("refs/heads/coder-tui/")] == [jobs[0]["target"]]


def asks_then_follows_the_answer(body: dict[str, Any]) -> Reply:
    """Asks to write README.md; resumed, does what the answer says."""
    said = last_user(body)
    if said.startswith("[fleet]") and "denied" in said:
        return Reply(text="Understood, leaving it as it is.")
    if turns(body) == 0 or said.startswith("[fleet]") and body["messages"][-1].get("role") == "user":
        name = repo_of(body).split("/")[-1]
        return Reply(tool_calls=[call("write_file", file_path="README.md", content=f"# {name}, bumped\n")])
    return Reply(text="Done.")


def test_a_parked_approval_answered_later_resumes_its_job(three: Fleet, isolated_home: Path) -> None:
    yes, no = make_repos(three, "ask", 2)
    three.llm.responder = asks_then_follows_the_answer
    first = fleet_cli(three, isolated_home, "run", "bump the version", "--repos",
                      str(repos_file(isolated_home, [yes, no])), "--mode", "ask")
    assert first.returncode == 3, first.stdout + first.stderr  # both wait: their workers are free again
    assert f"{yes}: parked: waits for approval: write_file: README.md" in first.stdout
    batch = next(line.split()[1].rstrip(":") for line in first.stdout.splitlines() if line.startswith("batch "))
    shown = fleet_cli(three, isolated_home, "approve", batch)
    assert "asks to run write_file" in shown.stdout and "+# ask1, bumped" in shown.stdout
    answered = fleet_cli(three, isolated_home, "approve", batch, yes)
    assert f"{yes}: answered; queued to resume" in answered.stdout, answered.stdout + answered.stderr
    denied = fleet_cli(three, isolated_home, "approve", batch, "--all", "--deny", "--feedback", "not in this one")
    assert f"{no}: answered; queued to resume" in denied.stdout and yes not in denied.stdout  # the one still asking
    followed = fleet_cli(three, isolated_home, "status", batch, "--follow")
    assert followed.returncode == 0, followed.stdout + followed.stderr
    jobs = {j["target"]: j for j in status(three, isolated_home, batch)["jobs"]}
    assert jobs[yes]["state"] == "done" and jobs[yes]["branch"] == f"coder-tui/fleet-{batch}"
    assert three.github.repo(yes).store.file_at(jobs[yes]["branch"], "README.md").decode() == "# ask1, bumped\n"
    assert jobs[no]["state"] == "done" and jobs[no]["note"] == "no changes" and not jobs[no]["branch"]
    assert "leaving it" in jobs[no]["answer_text"]
    for job in jobs.values():  # resumed: the same session, continued from its record
        record = fleet_cli(three, isolated_home, "status", batch, "--record", job["target"]).stdout
        kinds = [json.loads(line).get("data", {}).get("type") for line in record.splitlines()]
        assert kinds.count("run_started") == 2 and job["attempts"] == 2
    resumed = [r for r in three.llm.requests if "[fleet] While this job waited" in json.dumps(r["messages"][-1])]
    assert len(resumed) == 2


def test_owner_star_queues_every_repository_of_the_owner(three: Fleet, isolated_home: Path) -> None:
    names = make_repos(three, "star", 3)
    three.github.create_repo("elsewhere/other", FILES)
    queued = fleet_cli(three, isolated_home, "run", "look around", "--repos", "octo/*", "--detach", "--json",
                       "--no-publish", "--mode", "plan")
    assert queued.returncode == 0, queued.stderr
    batch = queued.stdout.strip()
    followed = fleet_cli(three, isolated_home, "status", batch, "--follow")
    assert followed.returncode == 0, followed.stdout + followed.stderr
    targets = [j["target"] for j in status(three, isolated_home, batch)["jobs"]]
    assert set(names) <= set(targets) and "elsewhere/other" not in targets


def test_scheduled_tasks_run_on_the_fleet_and_are_recorded_here(three: Fleet, isolated_home: Path,
                                                                 tmp_path: Path) -> None:
    from agent.session.tasks import task_store
    from agent.workspaces.local import LocalWorkspace

    folder = write_files(tmp_path / "proj", {"README.md": "# project\n"})
    tasks = task_store(LocalWorkspace(folder))
    task = tasks.schedule("bump the version", delay_seconds=0)
    tasks.close()
    done = subprocess.run(cli("tasks", "run-due", "--fleet", "--workspace", str(folder), "--mode", "allow"),
                          env=three.client_env(isolated_home), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"task {task.id} sent to the fleet as batch" in done.stderr + done.stdout
    assert (folder / "README.md").read_text() == "# proj, bumped\n"  # a worker edited the folder
    tasks = task_store(LocalWorkspace(folder))
    finished = tasks.get(task.id)
    tasks.close()
    assert finished.status == "completed" and finished.session_id
    assert finished.notes[-1].startswith("changed 1 file(s) (fleet batch ")


def test_exploration_runs_on_the_fleet(three: Fleet, isolated_home: Path, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "mapped", {"greet.py": "def greet(name):\n    return 'Hi ' + name\n"})
    three.llm.responder = lambda body: Reply(text="Greets people by name.")
    done = fleet_cli(three, isolated_home, "run", "--action", "explore", "--repos",
                     str(repos_file(tmp_path, [str(folder)])), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    [job] = json.loads(done.stdout.splitlines()[-1])["jobs"]
    assert job["state"] == "done" and job["note"] == "explored: explore folder /", job


def test_queued_jobs_survive_a_broker_restart(fleet: Fleet, isolated_home: Path, tmp_path: Path) -> None:
    """Redis with its append-only file, restarted while jobs wait in the queue: none is lost."""
    from tests.fleet.conftest import RedisServer

    names = make_repos(fleet, "restart", 2)
    fleet.llm.responder = edit_then_done
    broker = RedisServer(tmp_path).start()
    bed = Fleet(broker, fleet.llm, fleet.github, tmp_path)
    try:
        queued = fleet_cli(bed, isolated_home, "run", "bump the version", "--repos",
                           str(repos_file(isolated_home, names)), "--mode", "allow", "--detach", "--json")
        assert queued.returncode == 0, queued.stderr
        assert broker.client().llen("coder-tui-fleet") == 2  # nobody has taken them yet
        broker.stop()
        broker.start()  # the same folder and port: it reads its append-only file back
        bed.keep(1)
        followed = fleet_cli(bed, isolated_home, "status", queued.stdout.strip(), "--follow")
        assert followed.returncode == 0, followed.stdout + followed.stderr
        assert all(f"{name}: done: published branch" in followed.stdout for name in names)
    finally:
        bed.stop()
        broker.stop()
