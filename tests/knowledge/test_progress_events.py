"""The map's and the explorer's progress reports are typed events (agent.events); `--json` prints
them with the same fields, in the same order, as the plain dicts they replaced."""

from __future__ import annotations

import io
import json

from agent import events as ev
from agent.frontends.knowledge import Reporter


def test_json_lines_are_byte_identical_to_the_dicts_they_replaced() -> None:
    status = {"type": "explore_status", "files": 4, "summarised": 2, "pending": 2, "folders": 1,
              "last": {"step": "summarise", "path": "a.py"}, "running_pid": None}
    before = [
        {"type": "map_progress", "phase": "parse", "done": 1, "total": 3, "path": "a.py"},
        {"type": "map_plan", "summaries": 3, "prompt_tokens": 900, "completion_tokens": 300, "estimated_cost": 0.0125,
         "text": "3 file(s) to summarise with m: about 1,200 tokens, roughly $0.0125"},
        {"type": "map_plan", "summaries": 0, "prompt_tokens": 0, "completion_tokens": 0, "estimated_cost": None,
         "text": "0 file(s)"},
        {"type": "explore_step", "kind": "folder", "path": "", "text": "explore folder /: 4 file(s) (4 python)"},
        {"type": "explore_error", "path": "b.py", "text": "could not summarise b.py: binary"},
        {"type": "explore_idle", "text": "everything is current; checking for changes every 30 s"},
        {"type": "explore_wait", "seconds": 2, "text": "GitHub rate limit reached; waiting until 11:00:00 (2 s)"},
        {**status, "type": "explore_progress", "phase": "explore", "done": 2, "total": 4, "path": "a.py"},
    ]
    typed = [ev.MapProgress(phase="parse", done=1, total=3, path="a.py"),
             ev.MapPlan(summaries=3, prompt_tokens=900, completion_tokens=300, estimated_cost=0.0125,
                        text="3 file(s) to summarise with m: about 1,200 tokens, roughly $0.0125"),
             ev.MapPlan(summaries=0, prompt_tokens=0, completion_tokens=0, estimated_cost=None, text="0 file(s)"),
             ev.ExploreStep(kind="folder", path="", text="explore folder /: 4 file(s) (4 python)"),
             ev.ExploreStepFailed(path="b.py", text="could not summarise b.py: binary"),
             ev.ExploreIdle(text="everything is current; checking for changes every 30 s"),
             ev.ExploreWait(seconds=2, text="GitHub rate limit reached; waiting until 11:00:00 (2 s)"),
             ev.ExploreProgress(**{k: v for k, v in status.items() if k != "type"}, done=2, total=4, path="a.py")]
    out = io.StringIO()
    reporter = Reporter(as_json=True, out=out)
    for event in typed:
        reporter.event(event)
    assert out.getvalue().splitlines() == [json.dumps(d) for d in before]
    assert [ev.parse_event(d) for d in before] == typed  # and they parse back as the same events


def test_readable_output_draws_progress_and_says_the_notes() -> None:
    out, err = io.StringIO(), io.StringIO()
    reporter = Reporter(as_json=False, out=out, err=err)
    reporter.event(ev.MapProgress(phase="summarise", done=3, total=3, path="c.py"))
    reporter.event(ev.ExploreStepFailed(path="b.py", text="could not summarise b.py: binary"))
    reporter.event({"type": "map_done", "text": "done"})
    assert err.getvalue().splitlines() == ["summarise [" + "#" * 30 + "] 3/3 c.py",
                                           "could not summarise b.py: binary", "done"]
    assert out.getvalue() == ""
