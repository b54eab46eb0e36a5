"""Issue 15 item 16: what is not on the first screen (side panel, slash commands, the other
themes, the task timer, Textual's TextArea behind the prompt) loads after the first frame, in a
fresh interpreter as a user starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from tui.cli import launch_parser
from tui.app import CoderApp
from tui.startup import first_frame_shown

DEFERRED = ("tui.commands", "tui.widgets.timeline", "tui.presenter", "tui.widgets.codemap", "tui.knowledge",
            "tui.boot", "litellm", "tui.widgets.prompt", "textual.widgets._text_area", "tree_sitter",
            "importlib.resources")
seen = {}

class Probe(CoderApp):
    async def _first_frame_shown(self):
        seen["before"] = {"modules": [m for m in DEFERRED if m in sys.modules],
                          "themes": sorted(t for t in ("dark", "light", "high-contrast") if t in self.available_themes),
                          "prompt": [type(w).__name__ for w in self.query_one("#main").children]}
        await first_frame_shown(self)
        seen["after"] = {"themes": sorted(t for t in ("dark", "light", "high-contrast") if t in self.available_themes),
                         "commands": len(self.query_one("#prompt")._commands),
                         "prompt": [type(w).__name__ for w in self.query_one("#main").children],
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
    assert seen["before"] == {"modules": [], "themes": ["dark"], "prompt": ["Transcript", "PromptStandIn"]}
    after = seen["after"]
    assert after["themes"] == ["dark", "high-contrast", "light"]
    assert after["commands"] > 5  # '/' offers the commands as soon as the screen is up
    assert after["prompt"] == ["Transcript", "PromptInput"]
    assert after["side"] == ["timeline", "codemap", "pane"]


STYLES_PROBE = """
import json, sys
from textual.css.stylesheet import Stylesheet
from tui.cli import launch_parser
from tui.app import CoderApp

parsed, reparsed = [], []
parse_rules, reparse = Stylesheet._parse_rules, Stylesheet.reparse

def counting_parse_rules(self, css, read_from, *args, **kwargs):
    if (css, read_from, *args, *kwargs.values()) not in self._parse_cache:
        parsed.append(read_from[0].rsplit("/", 1)[-1])
    return parse_rules(self, css, read_from, *args, **kwargs)

def counting_reparse(self):
    reparsed.append(1)
    reparse(self)

Stylesheet._parse_rules, Stylesheet.reparse = counting_parse_rules, counting_reparse
seen = {}

class Probe(CoderApp):
    async def _first_frame_shown(self):
        names = set().union(*(rule.selector_names for rule in self.stylesheet.rules))
        seen.update(app_tcss_parses=parsed.count("app.tcss"), reparses=len(reparsed),
                    side_selectors=sorted(n for n in names if "timeline" in n.lower() or "pane" in n.lower()),
                    theme=self.theme, classes=sorted(c for c in self.classes if c.startswith("-")),
                    background=self.stylesheet._variables["background"],
                    filter_is_light=self._filters[0]._terminal_theme is self.ansi_theme_light)
        self.exit(0)

Probe(launch_parser().parse_args([sys.argv[1], "--model", "openai/fake-model", "--api-key", "sk-test",
                                  "--theme", sys.argv[2]]), animate=False).run(headless=True, size=(120, 36))
print(json.dumps(seen))
"""


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_first_frame_parses_each_stylesheet_once_in_the_chosen_theme(tmp_path: Path, theme: str) -> None:
    """Assigning App.theme in __init__ queued a re-parse of every stylesheet (and emptied the parse
    cache), so app.tcss was parsed three times; the side panel's styles wait for the side panel."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", STYLES_PROBE, str(tmp_path), theme], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert (seen["app_tcss_parses"], seen["reparses"], seen["side_selectors"]) == (1, 0, [])
    # Everything Textual's theme watcher would have set: the theme's classes, colours and ANSI filter.
    from tui.themes import builtin_theme

    light = theme == "light"
    assert seen["theme"] == theme
    assert seen["classes"] == sorted([f"-theme-{theme}", "-light-mode" if light else "-dark-mode"])
    assert seen["background"] == builtin_theme(theme).to_color_system().generate()["background"]
    assert seen["filter_is_light"] is light
