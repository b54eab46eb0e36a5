"""`coder-tui --resume ID` and `coder-tui attach ID` with an id that names no session: one line and
exit code 2 before the app opens, as `run --resume ID` says it; a real id passes the check without
the session store (agent/session/record.py) being imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, cli_env, run_cli

MISSING = "no session '20991231-nosuch' (see `coder-tui sessions`)\n"


def test_the_app_refuses_an_unknown_resume_id_before_it_opens(isolated_home: Path, tmp_path: Path) -> None:
    done = run_cli(isolated_home, str(tmp_path), "--resume", "20991231-nosuch", timeout=30)
    ran = run_cli(isolated_home, "run", "hi", str(tmp_path), "--resume", "20991231-nosuch", "--model", "openai/x",
                  timeout=30)
    assert done.returncode == ran.returncode == 2
    assert done.stderr == ran.stderr == f"coder-tui: error: --resume: {MISSING}"  # the same line as `run`
    assert done.stdout == ""


def test_attach_refuses_an_unknown_id_before_the_app_opens_and_names_no_flag(isolated_home: Path,
                                                                               tmp_path: Path) -> None:
    runtime = tmp_path / "rt"  # the host's socket, lock and log would be made here
    runtime.mkdir(mode=0o700)
    done = run_cli(isolated_home, "attach", "20991231-nosuch", "--workspace", str(tmp_path), timeout=30,
                   XDG_RUNTIME_DIR=str(runtime))
    assert done.returncode == 2 and done.stderr == f"coder-tui: error: attach: {MISSING}"
    assert not list(runtime.rglob("host*"))  # a running host would have been asked; none was started


PROBE = """
import sys
from agent.session.known import missing_session
print(repr(missing_session(sys.argv[1])), "agent.session.record" in sys.modules)
"""


def _probe(home: Path, ref: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, ref], cwd=ROOT, env=cli_env(home), capture_output=True,
                          text=True, timeout=30, check=True)
    return done.stdout.strip()


def test_a_recorded_session_passes_the_check_without_loading_the_store(isolated_home: Path, tmp_path: Path,
                                                                       fake_llm) -> None:
    from tests.fakellm import Reply

    fake_llm.script(Reply(text="hello"))
    ran = run_cli(isolated_home, "run", "hi", str(tmp_path), "--model", fake_llm.model, "--api-base", fake_llm.url,
                  "--api-key", "sk-test-known-0000", "--mode", "allow")
    assert ran.returncode == 0, ran.stderr
    session_id = ran.stderr.rsplit("session ", 1)[1].strip()
    assert _probe(isolated_home, session_id) == "None False"
    assert _probe(isolated_home, session_id[:12]) == "None False"  # a unique prefix, as --resume takes it
    assert _probe(isolated_home, "20991231-nosuch") == f"{MISSING.strip()!r} True"
