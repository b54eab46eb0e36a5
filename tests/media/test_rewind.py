"""Rewind through the real loop: back to an earlier prompt for the conversation, the files or both;
the model is told; files made by hand are kept; a resumed session continues from the rewind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import open_harness
from tests.fakellm import FakeLLM, Reply, call


async def _two_turns(make_harness: Any) -> Any:
    h = make_harness(files={"a.txt": "zero\n"})
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="one\n")]), Reply(text="now one"),
             Reply(tool_calls=[call("write_file", file_path="a.txt", content="two\n"),
                               call("write_file", file_path="b.txt", content="new\n")]), Reply(text="now two"))
    await h.run("make it one")
    await h.run("make it two")
    (h.root / "hand.txt").write_text("mine\n")  # made by hand after the turns
    return h


def _users(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_points_know_the_files_before_each_prompt(make_harness: Any) -> None:
    from agent.session.rewind import points

    h = await _two_turns(make_harness)
    found = points(h.session)
    assert [p.text for p in found] == ["make it two", "make it one"]
    checkpoints = [e.id for e in h.of("checkpoint")]
    assert [p.checkpoint for p in found] == [checkpoints[1], checkpoints[0]]


async def test_rewind_both_restores_files_and_conversation_and_tells_the_model(make_harness: Any,
                                                                             fake_llm: FakeLLM) -> None:
    from agent.session.rewind import points, rewind

    h = await _two_turns(make_harness)
    second = points(h.session)[0]
    removed, restored = await rewind(h.session, second, "both")
    assert removed == 5  # the prompt, the calls, their two results and the answer
    assert h.read("a.txt") == "one\n" and not (h.root / "b.txt").exists()
    assert h.read("hand.txt") == "mine\n"  # made by hand: kept
    h.script(Reply(text="ok"))
    await h.run("make it three")
    sent = _users(fake_llm.requests[-1]["messages"])
    assert sent[0] == "make it one" and "make it two" not in sent
    assert "rewound the conversation to before their message \"make it two\"" in sent[1]
    assert f"restored checkpoint {restored.id}" in sent[2]
    assert sent[3] == "make it three"
    session_id = h.session.session_id
    await h.session.close()

    resumed = make_harness(resume=session_id)
    assert _users(resumed.session.messages) == sent  # the record continues from the rewind
    assert [m.get("content") for m in resumed.session.restored.history if m["role"] == "user"][-1] == "make it three"
    assert "make it two" not in [m.get("content") for m in resumed.session.restored.history]


async def test_after_rewinding_both_the_models_first_edit_of_a_restored_file_is_taken(make_harness: Any) -> None:
    """Its last read was of the file the rewind undid: read-tracking follows the rewind."""
    from agent.session.rewind import points, rewind

    h = await _two_turns(make_harness)
    await rewind(h.session, points(h.session)[0], "both")
    h.script(Reply(tool_calls=[call("patch_file", file_path="a.txt", patches=[{"old_text": "one", "new_text": "three"}])]),
             Reply(text="done"))
    await h.run("make it three")
    result = h.of("tool_result")[-1]
    assert result.ok, result.error
    assert h.read("a.txt") == "three\n"


async def test_rewind_conversation_only_leaves_the_files(make_harness: Any, fake_llm: FakeLLM) -> None:
    from agent.session.rewind import points, rewind

    h = await _two_turns(make_harness)
    await rewind(h.session, points(h.session)[-1], "conversation")
    assert h.read("a.txt") == "two\n" and h.read("b.txt") == "new\n"
    h.script(Reply(text="ok"))
    await h.run("again")
    sent = _users(fake_llm.requests[-1]["messages"])
    assert len(sent) == 2 and "The files were NOT put back" in sent[0] and sent[1] == "again"


async def test_rewind_files_only_keeps_the_conversation(make_harness: Any) -> None:
    from agent.session.rewind import points, rewind

    h = await _two_turns(make_harness)
    before = len(h.session.messages)
    removed, restored = await rewind(h.session, points(h.session)[-1], "files")
    assert removed == 0 and restored is not None
    assert h.read("a.txt") == "zero\n" and h.read("hand.txt") == "mine\n"
    assert len(h.session.messages) == before + 1 and "restored checkpoint" in h.session.messages[-1]["content"]


async def test_a_compacted_summary_is_not_a_point_to_rewind_to(make_harness: Any) -> None:
    from agent.images import from_bytes
    from agent.session.rewind import points, rewind
    from tests.media.pictures import png

    h = make_harness()
    h.session.config.vision = True
    h.script(*(Reply(text=f"answer {i}") for i in range(4)))
    await h.session.run("look", [from_bytes(png(shade=4), "a.png")])
    for text in ("two", "three", "four"):
        await h.run(text)
    h.script(Reply(text="They talked about a picture."))
    assert await h.session.agent.compact_now() is not None
    texts = [p.text for p in points(h.session)]
    assert texts and not any(t.startswith("[Summary") for t in texts)
    await rewind(h.session, points(h.session)[0], "conversation")
    h.script(Reply(text="ok"))
    await h.run("again")
    session_id = h.session.session_id
    await h.session.close()
    resumed = make_harness(resume=session_id)
    sent = [m for m in resumed.session.messages if m["role"] == "user"]
    assert sent[-1]["content"] == "again" and "rewound the conversation" in sent[-2]["content"]
    await resumed.session.close()
