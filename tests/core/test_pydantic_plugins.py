"""coder-tui's process looks for no pydantic plugins (agent/pydantic_plugins.py): the search
imports importlib.metadata and reads every installed distribution's entry points the first time
any model builds its validator, tens of milliseconds of every launch (issue 22)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

BUILD = """
import json, sys
{before}
from pydantic import BaseModel, Field, ValidationError
class Hook(BaseModel):
    command: str = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, le=3600)
try:
    Hook(command="")
    rejected = False
except ValidationError:
    rejected = True
import pydantic.plugin._loader as loader
print(json.dumps({{"metadata": "importlib.metadata" in sys.modules, "plugins": list(loader.get_plugins()),
                  "group": loader.PYDANTIC_ENTRY_POINT_GROUP, "valid": Hook(command="x").timeout, "rejected": rejected}}))
"""


def built(before: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", BUILD.format(before=before)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_models_build_and_validate_without_the_plugin_search() -> None:
    skipped = built("from agent.pydantic_plugins import skip; skip()")
    assert skipped == {"metadata": False, "plugins": [], "group": "pydantic", "valid": 60.0, "rejected": True}
    searched = built("")  # pydantic's own loader: the search imports importlib.metadata
    assert searched["metadata"] is True and searched["valid"] == 60.0 and searched["rejected"] is True


def test_every_command_skips_it() -> None:
    code = ("import sys, tui.cli\n"
            "try:\n    tui.cli.main(['sessions', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sys.modules['pydantic.plugin._loader'].__doc__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "agent/pydantic_plugins.py" in done.stdout
