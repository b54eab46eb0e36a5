"""A host whose installed code changed under it (an upgrade, an edit of an editable install)
takes no new client and leaves once its last one is done (agent/host/codewatch.py): the next
front end starts a host of the new code instead of being served by the old one for up to its
idle time."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, cli_env
from tests.host.conftest import listening_on, wait_listening

pytestmark = pytest.mark.slow


def listing(path: Path) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(60)
        conn.connect(str(path))
        conn.sendall(b'{"type": "list", "id": 1}\n')
        return json.loads(conn.makefile("rb").readline())


def test_a_host_whose_code_changed_takes_no_new_client_and_leaves_when_its_last_is_done(
        isolated_home: Path, runtime_dir: Path, tmp_path: Path, start_host: Any) -> None:
    code = tmp_path / "installed"  # the host runs this copy of the code, as from an installed package
    for package in ("agent", "tui"):
        shutil.copytree(ROOT / package, code / package, ignore=shutil.ignore_patterns("__pycache__"))
    env = cli_env(isolated_home, XDG_RUNTIME_DIR=str(runtime_dir), PYTHONPATH=str(code))
    old = subprocess.Popen([sys.executable, "-m", "tui.cli", "host", "--idle", "300"], cwd=code, env=env, text=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        sock = listening_on(wait_listening(old, timeout=120))
        with socket.socket(socket.AF_UNIX) as client:  # a client of the old host, still connected
            client.settimeout(60)
            client.connect(str(sock))
            client.sendall(b'{"type": "list", "id": 1}\n')
            assert json.loads(client.makefile("rb").readline())["ok"]
            upgraded = code / "agent" / "textsafe.py"
            upgraded.write_text(upgraded.read_text(encoding="utf-8") + "\n# upgraded\n", encoding="utf-8")
            deadline = time.monotonic() + 120
            while sock.exists():  # it stops listening at once...
                assert time.monotonic() < deadline, "the host did not notice the installed code changed"
                time.sleep(0.1)
            assert old.poll() is None  # ...but serves the client it has
            new = start_host()  # a host of the new code takes the socket and the lock over
            assert listing(new.socket)["ok"]
        assert old.wait(60) == 0  # its last client gone, the old host leaves
        assert old.stderr is not None and "the installed code changed" in old.stderr.read()
        assert listing(new.socket)["ok"]  # and left the new host's socket in place
    finally:
        if old.poll() is None:
            old.kill()
            old.wait(60)
