"""Hold litellm's import in a `coder-tui` subprocess, to see what works before the model layer is loaded.

`gate_env(folder, ...)` writes a sitecustomize.py into `folder` and returns environment entries
that put it first on the subprocess's path and send every model through litellm
(CODER_TUI_MODEL_PATH=litellm: the built-in clients never import it). In that process:
- the import of `litellm` writes the file `started` and then waits until the file `gate` exists
  (when a gate is given), holding only litellm's own module lock, as a slow import does;
- the import of each module named in `wait_for_litellm` waits until litellm's import has started
  (it fails after a minute: the process never started loading litellm without it).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT

HOOK = '''
import importlib.machinery, os, sys, time

_STARTED = os.environ["CODER_TUI_TEST_LITELLM_STARTED"]
_GATE = os.environ.get("CODER_TUI_TEST_LITELLM_GATE")
_AFTER = set(filter(None, os.environ.get("CODER_TUI_TEST_AFTER_LITELLM", "").split(",")))


def _wait(path, limit):
    deadline = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class _Held:
    # waits in exec_module: find_spec runs under the global import lock, which would hold every import
    def __init__(self, loader, name):
        self.loader, self.name = loader, name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        if self.name == "litellm":
            open(_STARTED, "w").close()
            if _GATE:
                _wait(_GATE, 600)
        elif not _wait(_STARTED, 60):
            raise ImportError(f"{self.name} was imported before litellm's import started (import gate)")
        self.loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name != "litellm" and name not in _AFTER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Held(spec.loader, name)
        return spec


sys.meta_path.insert(0, _Gate())
'''


def gate_env(folder: Path, gate: Path | None = None, wait_for_litellm: tuple[str, ...] = ()) -> dict[str, str]:
    """Environment entries for a subprocess whose litellm import is watched (and held by `gate`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(HOOK)
    env = {"PYTHONPATH": f"{folder}:{ROOT}", "CODER_TUI_TEST_LITELLM_STARTED": str(folder / "started"),
           "CODER_TUI_MODEL_PATH": "litellm",
           "CODER_TUI_TEST_AFTER_LITELLM": ",".join(wait_for_litellm)}
    if gate is not None:
        env["CODER_TUI_TEST_LITELLM_GATE"] = str(gate)
    return env
