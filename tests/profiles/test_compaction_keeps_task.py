"""Compaction keeps the task: after three compactions the request still carries every remaining
plan step, the todo list, a constraint from the user's first prompt and the changed files, word
for word (asserted on the bodies the scripted provider received)."""

from __future__ import annotations

from typing import Any

from agent.compaction import REST_HEADING, SUMMARY_HEADER, SUMMARY_PROMPT
from agent.planning.models import Plan, Step
from agent.planning.orchestrator import save
from tests.fakellm import Reply, call

WINDOW = 12_000
BIG = "".join(f"line {i}: {'lorem ipsum ' * 6}\n" for i in range(100))
FIRST = "Tidy the notes files. Constraint: never touch anything under vendor/, and keep every file ASCII."
TODOS = [{"id": "1", "content": "write notes one", "status": "completed"},
         {"id": "2", "content": "write notes two", "status": "in_progress"},
         {"id": "3", "content": "check ASCII everywhere", "status": "pending"}]


def _is_summary(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith(SUMMARY_PROMPT)


def scripted(summaries: list[dict[str, Any]]) -> Any:
    """Each turn: write a file, update the todos, read big files until the turn's reads are done."""
    state = {"step": 0, "turn": 0}

    def respond(body: dict[str, Any]) -> Reply:
        if _is_summary(body):
            summaries.append(body)
            return Reply(text=f"## Decisions\nsummary number {len(summaries)}")
        state["step"] += 1
        step = state["step"]
        if step == 1:
            return Reply(tool_calls=[call("todo_write", todos=TODOS)])
        if step % 5 == 2:
            return Reply(tool_calls=[call("write_file", file_path=f"notes{step}.txt", content=f"note {step}\n")])
        if step % 5 == 0:
            return Reply(text=f"turn done at {step}")
        return Reply(tool_calls=[call("read_file", file_path=f"big{step % 3}.txt")])

    return respond


async def test_three_compactions_keep_plan_todos_constraints_and_changed_files(make_session: Any) -> None:
    h = make_session(context_window=WINDOW, small_model="openai/small-model",
                     files={f"big{i}.txt": BIG for i in range(3)})
    save(h.session, Plan(refined_goal="tidy the notes", next_id=4, steps=[
        Step(id="1", title="Collect the notes", status="done", summary="found three"),
        Step(id="2", title="Rewrite notes two", description="ASCII only", status="pending"),
        Step(id="3", title="Final report", status="pending")]))
    summaries: list[dict[str, Any]] = []
    h.llm.responder = scripted(summaries)
    prompts = [FIRST, "go on with the next file", "and the next one", "one more", "and another"]
    for prompt in prompts:
        await h.run(prompt)
        if len(h.of("compacted")) >= 3:
            break
    assert len(h.of("compacted")) >= 3
    third = [i for i, r in enumerate(h.llm.requests) if _is_summary(r)][2]
    request = next(r for r in h.llm.requests[third:] if not _is_summary(r))["messages"]  # the one after it
    carried = request[1]["content"]
    assert carried.startswith(SUMMARY_HEADER) and REST_HEADING in carried
    kept, rest = carried.split(REST_HEADING)
    assert FIRST in kept  # the first prompt's constraint, word for word, three compactions later
    assert "[x] 1. Collect the notes (done)" in kept
    assert "[ ] 2. Rewrite notes two (pending)\n    ASCII only" in kept and "[ ] 3. Final report (pending)" in kept
    assert "[x] 1. write notes one\n[~] 2. write notes two\n[ ] 3. check ASCII everywhere" in kept
    until = h.events.index(h.of("compacted")[2])
    changed = [e.path for e in h.events[:until] if e.type == "file_changed"]
    assert len(changed) >= 3 and "## Files changed so far\n" + "\n".join(f"- {p}" for p in changed) in kept
    assert "## The next step\nPlan step 2: Rewrite notes two (ASCII only)" in kept
    assert kept.count("## The todo list") == 1  # carried once, not once per compaction
    assert f"summary number {len(summaries)}" in rest
    # The summariser was told what is kept, and saw the earlier summary without what it carried
    last = summaries[-1]["messages"]
    assert "Kept word for word beside your summary" in last[0]["content"] and "the todo list (3 items)" in last[0]["content"]
    assert "## The todo list" not in last[1]["content"]
    event = h.of("compacted")[2]
    assert event.kept[1:] == ["the plan (3 steps, 1 done)", "the todo list (3 items)",
                              f"the {len(changed)} changed file(s)", "the next step"]
    assert event.kept[0].startswith("your ") and event.summary.startswith("## Decisions")


async def test_compact_by_hand_says_what_was_kept_and_what_was_summarised(make_session: Any) -> None:
    from agent.compaction import describe

    h = make_session(files={"a.txt": "alpha\n"})
    h.script(Reply(tool_calls=[call("todo_write", todos=TODOS)]), Reply(text="planned"))
    await h.run(FIRST)
    for turn in range(5):
        h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text=f"answer {turn}"))
        await h.run(f"question {turn}")
    h.script(Reply(text="## Decisions\nread a.txt five times"))
    event = await h.session.agent.compact_now()
    assert event is not None and event.manual
    said = describe(event)
    assert said.startswith(f"Compacted {event.replaced_messages} messages: about ")
    assert "Kept word for word: your 6 message(s), the todo list (3 items), the next step." in said
    assert said.endswith("Summarised: the rest of those messages, in 6 words.")
    assert FIRST in h.session.messages[1]["content"]
