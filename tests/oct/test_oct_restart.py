"""The OCT server restarts mid-session: the test server dies (connections cut, rooms gone) and
comes back on the same port; the Node host reconnects more slowly than the agent, so the agent is
first told the room does not exist. It rejoins once the host is back, and an edit made while the
server was down reaches the host's document (and only then counts as done)."""

from __future__ import annotations

import asyncio

from tests.fakellm import Reply, call
from tests.oct.test_oct_agent import DOC, rig, wait_for  # noqa: F401 - rig is a fixture

EDIT = call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content="a = 2")


async def test_edit_made_while_the_server_is_down_reaches_the_host(rig, oct_server):  # noqa: F811
    r = await rig("a = 1\n")
    phases: list[str] = []
    r.client.listeners.append(lambda what, detail: phases.append(r.client.status.phase))
    # The model answers one second after the request, by then the server is down.
    r.llm.script(Reply(delay=1.0, tool_calls=[EDIT]), Reply(text="Set a to 2."))
    await r.type("# @agent set a to 2\n")
    await wait_for(lambda: len(r.llm.requests) == 1)
    await oct_server.crash()
    await wait_for(lambda: r.of("tool_call"), 30)  # the edit is made while the server is down
    await asyncio.sleep(1.0)
    await oct_server.start_again(host_delay=2.0)  # the host is back 2 s after the agent first tries

    final = await r.host.wait_text(DOC, equals="a = 2\n# @agent set a to 2\n", timeout=60)
    assert final == "a = 2\n# @agent set a to 2\n"  # the edit arrived
    await wait_for(lambda: r.agent.answered == 1, 60)
    assert oct_server.refused_guests >= 1  # the agent did come back before the host had
    result = r.of("tool_result")[0]
    assert result.ok, result.error
    assert not r.client.closed.is_set() and r.client.status.phase == "joined"
    assert "reconnecting" in phases
    # still in the room: the next prompt is answered too
    r.llm.script(Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1,
                                        new_content="a = 3")]), Reply(text="Set a to 3."))
    await r.type("# @agent set a to 3\n")
    final = await r.host.wait_text(DOC, equals="a = 3\n# @agent set a to 2\n# @agent set a to 3\n", timeout=60)
    assert final.startswith("a = 3\n")


async def test_edit_that_never_reaches_the_room_is_not_reported_done(rig, oct_server, node_host):  # noqa: F811
    r = await rig("a = 1\n", grace=4.0)
    r.llm.script(Reply(delay=1.0, tool_calls=[EDIT]), Reply(text="I could not."))
    await r.type("# @agent set a to 2\n")
    await wait_for(lambda: len(r.llm.requests) == 1)
    await oct_server.crash()
    await node_host.stop()  # the host is gone for good: the room never comes back
    await oct_server.start_again()
    await wait_for(lambda: r.of("tool_result"), 60)
    result = r.of("tool_result")[0]
    assert not result.ok
    assert "changed only coder-tui's copy: the room connection ended before it reached the others" in result.error
    await wait_for(lambda: len(r.llm.requests) == 2, 30)
    told = [m for m in r.llm.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "nobody else sees it" in told  # the model is told, and so is the user (the failed result)
    assert r.client.closed.is_set() and r.client.lost
    assert oct_server.refused_guests >= 1
