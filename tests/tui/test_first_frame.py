"""Issue 15 item 16: what is not on the first screen (side panel, slash commands, the other
themes, the task timer) loads after the first frame, in a fresh interpreter as a user starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from tui.cli import launch_parser
from tui.app import CoderApp
from tui.startup import first_frame_shown

DEFERRED = ("tui.commands", "tui.widgets.timeline", "tui.presenter", "tui.widgets.codemap", "tui.knowledge",
            "tui.boot", "litellm")
seen = {}

class Probe(CoderApp):
    async def _first_frame_shown(self):
        seen["before"] = {"modules": [m for m in DEFERRED if m in sys.modules],
                          "themes": sorted(t for t in ("dark", "light", "high-contrast") if t in self.available_themes),
                          "commands": len(self.query_one("#prompt")._commands)}
        await first_frame_shown(self)
        seen["after"] = {"themes": sorted(t for t in ("dark", "light", "high-contrast") if t in self.available_themes),
                         "commands": len(self.query_one("#prompt")._commands),
                         "side": [w.id for w in self.query_one("#side").children]}
        self.workers.cancel_group(self, "boot")
        self.exit(0)

Probe(launch_parser().parse_args([sys.argv[1], "--model", "openai/fake-model", "--api-key", "sk-test"]),
      animate=False).run(headless=True, size=(120, 36))
print(json.dumps(seen))
"""


def test_the_first_frame_holds_only_what_the_first_screen_shows(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == {"modules": [], "themes": ["dark"], "commands": 0}
    after = seen["after"]
    assert after["themes"] == ["dark", "high-contrast", "light"]
    assert after["commands"] > 5  # '/' offers the commands as soon as the screen is up
    assert after["side"] == ["timeline", "codemap", "pane"]
