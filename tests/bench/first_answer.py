"""Launch to first answer (issues 22, 32): `coder-tui run "say hi"` side by side with `claude -p "say hi"`.

Run: python tests/bench/first_answer.py [--pairs N] [--claude | --claude-bin PATH] [--codex-bin PATH]

All talk to the same scripted Anthropic-compatible server (tests/fake_anthropic.py, in this
process) and answer HELLO_WORD. Each round runs each program once, interleaved (a busy moment hits
all alike); each figure is the median of N rounds: process start to the answer's first text on
stdout, to exit, the CPU time (user + system) and the peak resident size of the process. Ours is
timed `cold`: no session host (CODER_TUI_HOST=off, a fresh empty runtime folder each run), the
whole run in-process; the byte-code and the file cache are warm, as on any run but the first
after a boot or an upgrade. With `--warm`, also through a session host already running (the
bench starts one). `--claude` installs @anthropic-ai/claude-code from npm into a temporary folder
first and points it at the server (ANTHROPIC_BASE_URL, a dummy key); `--claude-bin PATH` (or
CODER_TUI_BENCH_CLAUDE) uses one installed already; without either, or when npm cannot install
it, it says why and times ours alone. `--codex-bin PATH` adds `codex exec` (against a scripted
OpenAI Responses server of the same script: codex speaks only that API to a custom provider).

Also printed, medians of launches: `serve` readiness (launch to the "listening on" banner, to GET
/api/health answered, and to the first streamed text of a turn posted at once), `acp` readiness
(launch to the `initialize` answer, and to the first agent_message_chunk of a prompt sent at
once), and the app's first frame and first answer (a prompt typed as soon as the first frame
shows) with no host. Goals (issue 32): cold `run` at most 0.6x `claude -p` to the first text and
to exit, at most 0.7x its CPU, under 90 MiB resident; serve and acp ready within 0.5 s; the app's
first streamed text within 1 s of launch on a quiet machine. The load average is printed with
the figures: take them when it is low.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.ptyrun import PtyProgram  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402
from tests.fake_responses import FakeResponses  # noqa: E402
from tests.fakellm import Reply  # noqa: E402

HELLO_WORD = "hello-from-the-scripted-model"
MODEL = "anthropic/claude-sonnet-4-5"
KEY = "sk-ant-bench-0000"
TOKEN = "bench-token"


def child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN", "_BASE_URL"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-code cached after the first start, as for a user
    env.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", HOME=str(home / "home"),
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_RUNTIME_DIR=str(home / "rt"), CODER_TUI_HOST="auto")
    (home / "rt").mkdir(mode=0o700, exist_ok=True)
    return env


def ours(url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tui.cli", "run", "say hi", "--model", MODEL, "--api-base", url,
            "--api-key", KEY, "--mode", "allow", *extra]


def start_host(env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """`coder-tui host` in the bench's runtime folder, once it listens."""
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "host", "--idle", "900"], env=env, cwd=cwd, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if "listening on" not in line:
        raise RuntimeError(f"the session host did not start: {line}{proc.stderr.read()[-600:]}")
    return proc


@dataclass
class Sample:
    first: float  # seconds from start to the answer's first text on stdout
    wall: float  # to exit
    cpu: float  # user + system seconds of the process (and the children it waited for)
    rss: float  # peak resident MiB


def measured(argv: list[str], env: dict[str, str], cwd: Path) -> Sample:
    """One run, read as it streams; the answer must be on stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out, first = b"", 0.0
    while chunk := os.read(proc.stdout.fileno(), 65536):
        out += chunk
        if not first and HELLO_WORD[:8].encode() in out:
            first = time.perf_counter() - started
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if HELLO_WORD.encode() not in out:
        raise RuntimeError(f"{argv[0]} did not answer (exit {proc.returncode}): {(out + err)[-600:]!r}")
    return Sample(first, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from start to exit; the answer must be on stdout."""
    return measured(argv, env, cwd).wall


def cold_env(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """No session host, and a new empty runtime folder (nothing a previous run left there)."""
    runtime = Path(tempfile.mkdtemp(prefix="rt", dir=scratch))
    runtime.chmod(0o700)
    return dict(env, CODER_TUI_HOST="off", XDG_RUNTIME_DIR=str(runtime))


def install_claude(folder: Path) -> tuple[Path | None, str]:
    """(the claude executable, "") or (None, why not)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None, "npm or node is not installed"
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                           "@anthropic-ai/claude-code"], capture_output=True, text=True, timeout=600)
    exe = folder / "node_modules" / ".bin" / "claude"
    if done.returncode != 0 or not exe.exists():
        return None, f"npm install @anthropic-ai/claude-code failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return exe, ""


def claude_env(env: dict[str, str], url: str) -> dict[str, str]:
    return dict(env, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=KEY, DISABLE_AUTOUPDATER="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")


def serve_ready(url: str, env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Launch to (banner, health answered, first streamed text of a turn posted right away)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(cwd), "--port", "0", "--mode", "allow",
                             "--token", TOKEN, "--model", MODEL, "--api-base", url, "--api-key", KEY],
                            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        banner = time.perf_counter() - started
        if not line.startswith("listening on"):
            raise RuntimeError(f"serve did not start: {line!r}")
        base = line.split()[-1]
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as client:
            client.get("/api/health").raise_for_status()
            health = time.perf_counter() - started
            body = {"messages": [{"role": "user", "content": "say hi"}]}
            text = ""
            with client.stream("POST", "/api/chat", json=body) as response:
                for line in response.iter_lines():
                    data = json.loads(line[6:]) if line.startswith("data: ") else {}
                    text += data.get("content") or ""
                    if HELLO_WORD[:5] in text:  # the answer's first streamed piece
                        return banner, health, time.perf_counter() - started
        raise RuntimeError("serve's stream ended without the answer")
    finally:
        proc.terminate()
        proc.wait(30)


def acp_ready(url: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Launch to (the initialize answer, the first agent_message_chunk of a prompt sent at once)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "acp", "--model", MODEL, "--api-base", url,
                             "--api-key", KEY, "--mode", "allow"], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        send = _sender(proc)
        send(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        initialized = _answer(proc, lambda m: m.get("id") == 1)
        ready = time.perf_counter() - started
        send(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id = initialized and _answer(proc, lambda m: m.get("id") == 2)["result"]["sessionId"]
        send(3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "say hi"}]})
        _answer(proc, lambda m: m.get("method") == "session/update"
                and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
        return ready, time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(30)


def _sender(proc: subprocess.Popen[str]) -> Callable[[int, str, dict[str, object]], None]:
    def send(request_id: int, method: str, params: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
    return send


def _answer(proc: subprocess.Popen[str], wanted: Callable[[dict[str, object]], bool]) -> dict[str, object]:
    assert proc.stdout is not None
    for line in proc.stdout:
        message = json.loads(line)
        if "error" in message:
            raise RuntimeError(f"acp answered an error: {message['error']}")
        if wanted(message):
            return message
    raise RuntimeError("acp closed its output")


def app_first(url: str, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Launch to (the first frame, the first streamed text of a prompt typed as soon as it shows)."""
    program = PtyProgram([sys.executable, "-m", "tui.cli", str(cwd), "--model", MODEL, "--api-base", url,
                          "--api-key", KEY, "--mode", "allow"], env, cwd=str(cwd))
    try:
        frame = program.wait_for(b"Ask the agent", timeout=60)
        mark = len(program.plain)
        os.write(program.master, b"say hi\r")
        return frame, program.wait_for(HELLO_WORD.encode(), timeout=120, after=mark)
    finally:
        program.close()


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:6.0f} ms"


def side_by_side(url: str, env: dict[str, str], work: Path, pairs: int, claude: Path | None,
                 codex: Path | None, warm_too: bool, openai_url: str = "") -> None:
    programs: dict[str, Callable[[], Sample]] = {
        "coder-tui run, cold (no host)": lambda: measured(ours(url), cold_env(env, work.parent), work)}
    if claude is not None:
        programs["claude -p"] = lambda: measured([str(claude), "-p", "say hi"], claude_env(env, url), work)
    if codex is not None:
        programs["codex exec"] = lambda: measured(codex_argv(codex, openai_url), codex_env(env), work)
    host = start_host(env, work) if warm_too else None
    if host is not None:
        programs["coder-tui run, warm (a host runs)"] = lambda: measured(ours(url), env, work)
    try:
        for run in programs.values():  # byte-code, the file cache and the host warmed once for all
            run()
        samples: dict[str, list[Sample]] = {name: [] for name in programs}
        for _ in range(pairs):
            for name, run in programs.items():
                samples[name].append(run())
    finally:
        if host is not None:
            host.terminate()
            host.wait(60)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min); {os.cpu_count()} CPUs")
    print(f"{'':38} {'first text':>11} {'exit':>9} {'CPU':>9} {'RSS':>9}   (medians of {pairs} rounds)")
    for name, taken in samples.items():
        print(f"{name:38} {ms(taken, 'first')} {ms(taken, 'wall')} {ms(taken, 'cpu')} "
              f"{statistics.median(s.rss for s in taken):6.0f} MiB")
    ours_cold, theirs = samples["coder-tui run, cold (no host)"], samples.get("claude -p")
    if theirs:
        ratios = {what: median(ours_cold, what) / median(theirs, what) for what in ("first", "wall", "cpu")}
        print(f"cold / claude -p: first text {ratios['first']:.2f}, exit {ratios['wall']:.2f} (goal <= 0.6), "
              f"CPU {ratios['cpu']:.2f} (goal <= 0.7); RSS goal < 90 MiB")


def median(samples: list[Sample], what: str) -> float:
    return statistics.median(getattr(s, what) for s in samples)


def ms(samples: list[Sample], what: str) -> str:
    return f"{median(samples, what) * 1000:6.0f} ms"


def codex_argv(codex: Path, url: str) -> list[str]:
    return [str(codex), "exec", "--skip-git-repo-check", "-c", "model_provider=bench", "-c",
            f'model_providers.bench={{name="bench", base_url="{url}", wire_api="responses"}}', "-m", "bench-model",
            "say hi"]


def codex_env(env: dict[str, str]) -> dict[str, str]:
    return dict(env, OPENAI_API_KEY=KEY)


def stop_started_host(env: dict[str, str]) -> None:
    """The session hosts front ends started on demand in the bench's runtime folder, stopped."""
    for lock in (Path(env["XDG_RUNTIME_DIR"]) / "coder-tui").glob("host*.lock"):
        _stop_holder(lock)


def _stop_holder(lock: Path) -> None:
    import fcntl
    import signal

    try:
        with lock.open() as held:
            try:
                fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return  # nobody holds it: no host runs
            except BlockingIOError:
                pid = int(held.read().strip() or 0)
    except (OSError, ValueError):
        return
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until it has let go of its lock and socket
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def readiness(url: str, env: dict[str, str], work: Path, runs: int) -> None:
    try:
        _readiness(url, env, work, runs)
    finally:
        stop_started_host(env)


def _readiness(url: str, env: dict[str, str], work: Path, runs: int) -> None:
    serve = [serve_ready(url, env, work) for _ in range(runs)]
    print(f"serve: banner {median_ms([s[0] for s in serve])}, health answered {median_ms([s[1] for s in serve])} "
          f"(goal <= 500 ms), first text of a turn posted at once {median_ms([s[2] for s in serve])}")
    acp = [acp_ready(url, env, work) for _ in range(runs)]
    print(f"acp: initialize answered {median_ms([a[0] for a in acp])} (goal <= 500 ms), "
          f"first text of a prompt sent at once {median_ms([a[1] for a in acp])}")
    cold = [app_first(url, cold_env(env, work.parent), work) for _ in range(runs)]
    print(f"app, no host: first frame {median_ms([a[0] for a in cold])}, first text of a prompt typed at once "
          f"{median_ms([a[1] for a in cold])} (goal <= 1000 ms on a quiet machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=7, help="interleaved pairs (default 7)")
    parser.add_argument("--claude", action="store_true", help="install Claude Code from npm and time it too")
    parser.add_argument("--claude-bin", metavar="PATH", default=os.environ.get("CODER_TUI_BENCH_CLAUDE"),
                        help="an installed `claude` to time (default: $CODER_TUI_BENCH_CLAUDE)")
    parser.add_argument("--codex-bin", metavar="PATH", help="an installed `codex` to time too (codex exec)")
    parser.add_argument("--warm", action="store_true", help="also time `run` through a session host already running")
    parser.add_argument("--only", choices=("run", "ready"), help="only the side by side, or only the readiness")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, \
            FakeAnthropic(responder=lambda body: Reply(text=HELLO_WORD, usage=(100, 3))) as server, \
            FakeResponses(responder=lambda body: Reply(text=HELLO_WORD, usage=(100, 3))) as openai_server:
        home, work = Path(tmp), Path(tmp) / "ws"
        work.mkdir()
        env = child_env(home)
        claude = Path(args.claude_bin) if args.claude_bin else None
        if claude is not None and not os.access(claude, os.X_OK):
            print(f"skipping claude -p: {claude} is not an executable")
            claude = None
        if args.claude and claude is None:
            claude, why = install_claude(home / "claude")
            if claude is None:
                print(f"skipping claude -p: {why}")
        if args.only != "ready":
            codex = Path(args.codex_bin) if args.codex_bin else None
            side_by_side(server.url, env, work, args.pairs, claude, codex, args.warm, openai_server.url)
        if args.only != "run":
            readiness(server.url, env, work, max(3, args.pairs // 2))


if __name__ == "__main__":
    main()
