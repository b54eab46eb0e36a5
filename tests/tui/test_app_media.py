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
