"""Launch to first answer (issue 22): `coder-tui run "say hi"` side by side with `claude -p "say hi"`.

Run: python tests/bench/first_answer.py [--pairs N] [--claude | --claude-bin PATH]

Both talk to the same scripted Anthropic-compatible server (tests/fake_anthropic.py, in this
process) and answer HELLO_WORD. Each figure is process start to exit with the answer on stdout,
the median of N interleaved rounds (a busy moment hits all alike). Ours is timed two ways:
`warm`, through a session host already running (the default path once one runs: the bench
starts one first, in its own runtime folder, and stops it at the end), and `cold`, with no host
(`--no-host`: the whole run in-process, litellm imported; the byte-code and the file cache are
warm, as on any run but the first after a boot or an upgrade). `--claude` installs
@anthropic-ai/claude-code from npm into a temporary folder first and points it at the server
(ANTHROPIC_BASE_URL, a dummy key); `--claude-bin PATH` (or CODER_TUI_BENCH_CLAUDE) uses one
installed already; without either, or when npm cannot install it, it says why and times ours alone.

Also printed, medians of the same number of launches: `serve` readiness (launch to the
"listening on" banner, to GET /api/health answered, and to the first streamed text of a turn
posted at once), `acp` readiness (launch to the `initialize` answer, and to the first
agent_message_chunk of a prompt sent at once), and the app's first frame and first answer (a
prompt typed as soon as the first frame shows), without a host and with a warm one (whose model
library makes the app's requests until the app's own has loaded: agent/llm_borrow.py). Goals: run no slower than `claude -p`; serve and
acp ready within 0.5 s; the app's first streamed text within 1 s on a quiet machine.
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
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.ptyrun import PtyProgram  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402
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


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from start to exit; the answer must be on stdout."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    took = time.perf_counter() - started
    if HELLO_WORD not in done.stdout:
        raise RuntimeError(f"{argv[0]} did not answer (exit {done.returncode}): {(done.stdout + done.stderr)[-600:]}")
    return took


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


def side_by_side(url: str, env: dict[str, str], work: Path, pairs: int, claude: Path | None) -> None:
    host = start_host(env, work)
    try:
        timed(ours(url), env, work)  # through the host: it has imported litellm once this returns
        timed(ours(url, "--no-host"), env, work)  # byte-code and file cache warmed once for all
        if claude is not None:
            timed([str(claude), "-p", "say hi"], claude_env(env, url), work)
        warm: list[float] = []
        cold: list[float] = []
        theirs: list[float] = []
        for _ in range(pairs):
            warm.append(timed(ours(url), env, work))
            cold.append(timed(ours(url, "--no-host"), env, work))
            if claude is not None:
                theirs.append(timed([str(claude), "-p", "say hi"], claude_env(env, url), work))
    finally:
        host.terminate()
        host.wait(60)
    print(f"coder-tui run 'say hi', warm (a host runs)         median {spread(warm, pairs)}")
    print(f"coder-tui run 'say hi', cold (no host, in-process) median {spread(cold, pairs)}")
    if theirs:
        print(f"claude -p 'say hi'                                 median {spread(theirs, pairs)}")
        for name, mine in (("warm", warm), ("cold", cold)):
            ratio = statistics.median(mine) / statistics.median(theirs)
            print(f"ratio coder-tui {name} / claude: {ratio:.2f} (goal <= 1.0)")


def spread(values: list[float], pairs: int) -> str:
    return f"{median_ms(values)}   (n={pairs}, {min(values) * 1000:.0f}-{max(values) * 1000:.0f} ms)"


def stop_started_host(env: dict[str, str]) -> None:
    """The session host a front end started on demand in the bench's runtime folder, stopped."""
    import fcntl
    import signal

    lock = Path(env["XDG_RUNTIME_DIR"]) / "coder-tui" / "host.lock"
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
    cold = [app_first(url, {**env, "CODER_TUI_HOST": "off"}, work) for _ in range(runs)]
    print(f"app, no host: first frame {median_ms([a[0] for a in cold])}, first text of a prompt typed at once "
          f"{median_ms([a[1] for a in cold])} (goal <= 1000 ms on a quiet machine)")
    stop_started_host(env)  # serve's runs started one: this part starts its own and waits for it to be warm
    host = start_host(env, work)
    try:
        wait_lending(env)
        warm = [app_first(url, env, work) for _ in range(runs)]
    finally:
        host.terminate()
        host.wait(60)
    print(f"app, a warm host runs: first frame {median_ms([a[0] for a in warm])}, first text of a prompt typed "
          f"at once {median_ms([a[1] for a in warm])} (its model requests are the host's until litellm loads)")


def wait_lending(env: dict[str, str]) -> None:
    """Until the host started in `env`'s runtime folder would lend a model request (it has loaded litellm)."""
    import socket

    from agent.llm_wire import ambient_env, code_stamp

    probe = json.dumps({"type": "model", "id": 1, "probe": True, "env": ambient_env(env), "code": code_stamp()})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(Path(env["XDG_RUNTIME_DIR"]) / "coder-tui" / "host.sock"))
            conn.sendall(probe.encode() + b"\n")
            answer = json.loads(conn.makefile("rb").readline())
        if answer["ok"]:
            return
        if "still loading" not in answer["error"]:
            raise RuntimeError(f"the session host will not lend: {answer['error']}")
        time.sleep(0.2)
    raise RuntimeError("the session host did not load litellm in 180 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=7, help="interleaved pairs (default 7)")
    parser.add_argument("--claude", action="store_true", help="install Claude Code from npm and time it too")
    parser.add_argument("--claude-bin", metavar="PATH", default=os.environ.get("CODER_TUI_BENCH_CLAUDE"),
                        help="an installed `claude` to time (default: $CODER_TUI_BENCH_CLAUDE)")
    parser.add_argument("--only", choices=("run", "ready"), help="only the side by side, or only the readiness")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, \
            FakeAnthropic(responder=lambda body: Reply(text=HELLO_WORD, usage=(100, 3))) as server:
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
            side_by_side(server.url, env, work, args.pairs, claude)
        if args.only != "run":
            readiness(server.url, env, work, max(3, args.pairs // 2))


if __name__ == "__main__":
    main()
