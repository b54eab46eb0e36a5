"""The app, its session bridge and its boot talk through typed interfaces (tui/ports.py, the
AgentBridge's methods, the CoderApp): the type checker holds them to it, so a call with the wrong
arguments or a field that does not exist fails here, not in front of a user."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEAM = ["tui/app.py", "tui/bridge.py", "tui/boot.py", "tui/ports.py", "tui/startup.py", "tui/quitflow.py",
        "tui/prompting.py", "tui/roomlink.py", "tui/commands.py", "tui/panes.py", "tui/knowledge.py",
        "tui/screens/unpublished.py", "tui/screens/planreview.py", "tui/widgets/approvaldock.py",
        "tui/controller.py", "tui/rebuild.py", "tui/attaching.py"]
PARTS = {"app", "host", "bridge", "session", "workspace", "target", "link", "runner", "options"}


def test_the_app_its_bridge_and_its_boot_type_check(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                           "--cache-dir", str(tmp_path / "mypy"), *SEAM],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_part_of_the_app_is_passed_as_any() -> None:
    untyped = []
    for name in SEAM:
        for node in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg in PARTS and (arg.annotation is None or ast.unparse(arg.annotation) == "Any"):
                        untyped.append(f"{name}:{node.lineno} {node.name}({arg.arg})")
    assert untyped == []
