"""Images in the app's prompt: `@shot.png`, a path dropped (pasted) into the prompt, the refusal for a
model without images, and the resumed conversation's note of them."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from textual import events

from tests.fakellm import Reply, images_in
from tests.media.pictures import png
from tests.tui.conftest import APP_SIZE, ready, type_text, wait_for
from tests.tui.test_app_sessions import idle, notices


def _vision(on: bool) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"vision = {'true' if on else 'false'}\n")


def _url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


async def test_mentioned_and_dropped_images_are_sent(make_app: Any, workspace: Path, fake_llm: Any,
                                                     tmp_path: Path) -> None:
    _vision(True)
    (workspace / "shot.png").write_bytes(png(shade=1))
    dropped = tmp_path / "Screen Shot.png"
    dropped.write_bytes(png(shade=2))
    fake_llm.script(Reply(text="Two squares."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        prompt = app.query_one("#prompt")
        await type_text(pilot, "compare @shot.png with ")
        app.post_message(events.Paste(str(dropped).replace(" ", "\\ ")))  # a terminal's drop
        await wait_for(pilot, lambda: "Screen" in prompt.value, what="the pasted path")
        await pilot.press("enter")
        await idle(pilot)
        sent = fake_llm.requests[-1]["messages"][-1]["content"]
        assert isinstance(sent, list), sent
        assert images_in(fake_llm.requests[-1]) == [_url(png(shade=1)), _url(png(shade=2))], sent[0]
        assert sent[0]["text"].startswith("compare @shot.png with ")
        assert "<attached-files>" not in sent[0]["text"]  # an image is not attached as text
        assert f"images: shot.png, {dropped}" in notices(app)
        session_id = app.bridge.session.session_id
        await app.bridge.shutdown()
    app = make_app("--resume", session_id)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        assert "2 image(s) sent with this prompt" in notices(app)


async def test_an_image_for_a_model_without_images_is_not_sent(make_app: Any, workspace: Path,
                                                               fake_llm: Any) -> None:
    _vision(False)
    (workspace / "shot.png").write_bytes(png())
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "look at @shot.png")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("does not accept images" in n for n in notices(app)), what="the refusal")
        await idle(pilot)
        assert fake_llm.requests == []
        assert any("openai/fake-model does not accept images" in n for n in notices(app))


async def _two_turns(pilot: Any, fake_llm: Any) -> None:
    from tests.fakellm import call

    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="one\n")]), Reply(text="one"),
                    Reply(tool_calls=[call("write_file", file_path="a.txt", content="two\n")]), Reply(text="two"))
    for text in ("make it one", "make it two"):
        await type_text(pilot, text)
        await pilot.press("enter")
        await idle(pilot)


async def test_escape_escape_rewinds_the_conversation_and_the_files(make_app: Any, workspace: Path,
                                                                    fake_llm: Any) -> None:
    from tui.screens.pick import PickScreen

    app = make_app("--mode", "allow")
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await _two_turns(pilot, fake_llm)
        assert (workspace / "a.txt").read_text() == "two\n"
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the prompts to rewind to")
        await pilot.press("enter")  # the newest prompt: "make it two"
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen) and "what" in app.screen.title_text,
                       what="what to restore")
        await pilot.press("enter")  # conversation and files
        await wait_for(pilot, lambda: app.query_one("#prompt").text == "make it two", what="the prompt back")
        assert (workspace / "a.txt").read_text() == "one\n"
        assert any("Rewound to before" in n for n in notices(app))
        fake_llm.script(Reply(text="ok"))
        await pilot.press("enter")  # sent again as it was
        await idle(pilot)
        users = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"]
        assert users[0] == "make it one" and "rewound the conversation" in users[1] and users[-1] == "make it two"
        assert users.count("make it two") == 1


async def test_fork_switches_to_a_copy_and_leaves_the_original(make_app: Any, workspace: Path,
                                                              fake_llm: Any) -> None:
    fake_llm.script(Reply(text="first"), Reply(text="in the fork"))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await idle(pilot)
        original = app.bridge.session.session_id
        path = app.bridge.session.writer.path
        await type_text(pilot, "/fork")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.bridge.session is not None and app.bridge.session.session_id != original
                       and app.bridge.ready, what="the fork")
        before = path.read_bytes()
        await type_text(pilot, "go on")
        await pilot.press("enter")
        await idle(pilot)
        assert [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"] == ["start", "go on"]
        assert path.read_bytes() == before  # the original is left as it was
        assert any(f"session {original} stays as it was" in n for n in notices(app))
