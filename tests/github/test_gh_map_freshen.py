"""On GitHub (no clone), a file the agent edited and reads again gets its map summary refreshed."""

from __future__ import annotations

from typing import Any

import pytest

from agent.knowledge.builder import MapBuilder
from tests.fakellm import FakeLLM, Reply, call
from tests.knowledge.test_map_build import llm_for
from tests.knowledge.test_map_freshen import Both

FILES = {"README.md": "# Hello\n", "src/util.py": "def shout(text):\n    return text.upper()\n"}


@pytest.fixture
def both() -> Both:
    return Both()


@pytest.fixture
def fake_llm(both: Both) -> Any:
    with FakeLLM(responder=both) as server:
        yield server


async def test_an_edited_file_read_again_is_summarised_again(make_gh_session: Any, gh_server: Any, fake_llm: Any,
                                                             both: Both) -> None:
    gh_server.create_repo("octo/hello", FILES)
    h = await make_gh_session(spec="octo/hello")
    builder = MapBuilder(h.workspace, llm_for(fake_llm))
    try:
        await builder.build()
    finally:
        builder.close()
    assert both.summariser.counts["src/util.py"] == 1
    both.replies += [Reply(tool_calls=[call("read_file", file_path="README.md")]),
                     Reply(tool_calls=[call("write_file", file_path="src/util.py",
                                            content="def shout(text):\n    return text.upper() + '!'\n")]),
                     Reply(tool_calls=[call("read_file", file_path="src/util.py")]), Reply(text="Done.")]
    complete = await h.run("louder")
    assert complete.success
    freshen = h.session.ctx.extras["map_freshen"]
    await freshen.idle()
    assert freshen.refreshed == ["src/util.py"]  # README.md is unchanged: its tree hash matches
    assert both.summariser.counts == {"README.md": 1, "src/util.py": 2}
