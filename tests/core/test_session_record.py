"""The session record: a session has a file from its first prompt (issue 26 item 3), and damaged
lines of any shape are set aside on resume, never a traceback (issue 20)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.session.record import SessionStore, load
from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply, call


def _sessions(home: Path) -> list[Path]:
    folder = home / "data" / "coder-tui" / "sessions"
    return sorted(folder.glob("*.jsonl")) if folder.exists() else []


def test_a_session_without_a_prompt_leaves_no_file(isolated_home: Path) -> None:
    store = SessionStore()
    writer = store.create({"workspace": "/tmp/w"})
    writer.state("overlay", {"a": 1})
    writer.close()
    assert _sessions(isolated_home) == [] and not writer.recorded
    writer = store.create({"workspace": "/tmp/w"})
    writer.state("overlay", {"a": 1})
    writer.message({"role": "user", "content": "hello"})
    writer.close()
    data = load(writer.path)  # the lines that waited for the prompt come first, in order
    assert data.meta["workspace"] == "/tmp/w" and data.state == {"overlay": {"a": 1}}
    assert data.messages == [{"role": "user", "content": "hello"}]


def test_last_and_the_listing_skip_empty_sessions(isolated_home: Path) -> None:
    store = SessionStore()
    writer = store.create({"workspace": "/tmp/w"})
    writer.message({"role": "user", "content": "real work"})
    writer.close()
    # a file an older version left for a launch that never got a prompt, newer than the real one
    empty = store.directory / "20990101-000000-abcdef.jsonl"
    empty.write_text(json.dumps({"t": 1, "kind": "meta", "data": {"session_id": empty.stem,
                                                                   "workspace": "/tmp/w", "created": 2e9}}) + "\n")
    os.utime(empty, (2e9, 2e9))
    assert store.resolve("last", workspace="/tmp/w") == writer.path
    assert [s.id for s in store.list()] == [writer.session_id]
    out = subprocess.run(cli("sessions"), env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.count("\n") == 1 and "real work" in out.stdout


# -- damaged lines ------------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
KINDS = st.sampled_from(["meta", "message", "event", "state", "compaction", "other"])
SHAPED = st.fixed_dictionaries({"t": st.just(1.0), "kind": KINDS, "data": JSON})
# a line with a plausible outer shape and a wrong inside, JSON of any shape, or no JSON at all
DAMAGE = st.one_of(SHAPED.map(json.dumps), JSON.map(json.dumps), st.text(max_size=30).filter(lambda s: "\n" not in s))
TARGETED = [  # the shapes that crashed --resume before
    {"kind": "message", "data": "text"}, {"kind": "message", "data": {"role": "user", "content": 5}},
    {"kind": "message", "data": {"role": "assistant", "tool_calls": [{"id": 1}]}},
    {"kind": "meta", "data": []}, {"kind": "state", "data": {"value": 1}},
    {"kind": "state", "data": {"key": "plan", "value": {"steps": "x"}}},
    {"kind": "compaction", "data": {"summary": None}},
    {"kind": "event", "data": {"type": "plan_updated", "todos": [{"id": 1}]}},
    {"kind": "event", "data": {"type": "usage", "total_prompt_tokens": "many"}}, ["a list"], 42,
]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(damage=st.lists(DAMAGE, min_size=2, max_size=8))
def test_damaged_lines_of_any_shape_are_set_aside(damage: list[str], tmp_path_factory: Any) -> None:
    path = tmp_path_factory.mktemp("s") / "x.jsonl"
    good = [{"t": 1, "kind": "meta", "data": {"session_id": "x", "workspace": "/w"}},
            {"t": 1, "kind": "message", "data": {"role": "user", "content": "first"}}]
    lines = [json.dumps(good[0]), *damage[: len(damage) // 2], json.dumps(good[1]), *damage[len(damage) // 2:]]
    path.write_text("\n".join(lines) + "\n")
    data = load(path)  # never raises
    assert {"role": "user", "content": "first"} in data.messages
    for message in data.messages:
        assert isinstance(message, dict) and message["role"] in ("system", "user", "assistant", "tool")
    assert data.damaged_lines <= len(damage)


async def test_resume_after_many_corruptions_warns_and_continues(make_harness: Any, fake_llm: FakeLLM,
                                                                  isolated_home: Path) -> None:
    from agent.session.notes import resume_notes

    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="answer"))
    await h.run("first")
    path, session_id = h.session.writer.path, h.session.session_id
    await h.session.close()
    with open(path, "a", encoding="utf-8") as handle:
        for record in TARGETED:
            handle.write(json.dumps({"t": 1, **record} if isinstance(record, dict) else record) + "\n")
    h2 = make_harness(resume=session_id)
    assert h2.session.restored.damaged_lines == len(TARGETED)
    notes = resume_notes(h2.session)
    assert notes and f"{len(TARGETED)} damaged line(s)" in notes[0]
    h2.script(Reply(text="still here"))
    assert (await h2.run("again")).final_response == "still here"
    assert h2.session.unfinished_plan is None


def test_run_resume_of_a_damaged_session_prints_a_warning(fake_llm: FakeLLM, tmp_path: Path,
                                                          isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    base = ("--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", "sk-test-0000", "--json")
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    first = subprocess.run(cli("run", "first", "--workspace", str(ws), *base), env=cli_env(isolated_home),
                           capture_output=True, text=True, timeout=120)
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    path = _sessions(isolated_home)[0]
    with open(path, "a", encoding="utf-8") as handle:
        for record in TARGETED:
            handle.write(json.dumps({"t": 1, **record} if isinstance(record, dict) else record) + "\n")
    second = subprocess.run(cli("run", "again", "--resume", session_id, *base), env=cli_env(isolated_home),
                            capture_output=True, text=True, timeout=120, cwd=ws)
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
    warnings = [e["message"] for line in second.stdout.splitlines() if (e := json.loads(line))["type"] == "warning"]
    assert any(f"{len(TARGETED)} damaged line(s)" in w for w in warnings), warnings
