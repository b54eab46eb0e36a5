"""Images in a prompt, through the real loop: sent as OpenAI image parts to the scripted server
(which checks them as OpenAI does), refused for a model that takes none, recorded in the session
file by reference (the bytes in the session's folder) and sent again after a resume."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.approval import ScriptedApprover
from agent.config import Config
from agent.images import MAX_BYTES, ImageError, from_bytes, from_path
from tests.conftest import TEST_KEY, open_harness
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply, content_problem, images_in
from tests.media.pictures import png


def _config(llm: FakeLLM, **extra: Any) -> Config:
    return Config(model=llm.model, api_base=llm.url, api_key=SecretStr(TEST_KEY), mode="allow", timeout=10.0,
                  max_retries=0, retry_base_delay=0.01, **extra)  # type: ignore[arg-type]


async def test_an_image_reaches_the_model_and_is_recorded_by_reference(fake_llm: FakeLLM, tmp_path: Path) -> None:
    shot = png(shade=7)
    harness = open_harness(fake_llm, tmp_path / "ws", {}, _config(fake_llm, vision=True), ScriptedApprover([]))
    fake_llm.script(Reply(text="a blue square"))
    complete = await harness.session.run("what is this?", [from_bytes(shot, "shot.png")])
    assert complete.success, complete.final_response
    sent = images_in(fake_llm.requests[-1])
    assert sent == ["data:image/png;base64," + base64.b64encode(shot).decode()]
    path, session_id = harness.session.writer.path, harness.session.session_id
    await harness.session.close()

    text = path.read_text()
    assert base64.b64encode(shot).decode() not in text  # no base64 in the JSONL line
    stored = list(path.with_suffix(".media").iterdir())
    assert [p.read_bytes() for p in stored] == [shot]
    assert stored[0].stat().st_mode & 0o077 == 0  # private, as the session file

    resumed = open_harness(fake_llm, tmp_path / "ws", {}, _config(fake_llm, vision=True), ScriptedApprover([]),
                           resume=session_id)
    fake_llm.script(Reply(text="still blue"))
    assert (await resumed.session.run("and now?")).success
    assert images_in(fake_llm.requests[-1]) == sent  # the resumed conversation sends the image again
    await resumed.session.close()


async def test_a_model_without_images_is_refused_before_any_request(fake_llm: FakeLLM, tmp_path: Path) -> None:
    harness = open_harness(fake_llm, tmp_path / "ws", {}, _config(fake_llm, vision=False), ScriptedApprover([]))
    with pytest.raises(ImageError, match=r"openai/fake-model does not accept images"):
        await harness.session.run("look", [from_bytes(png(), "shot.png")])
    assert fake_llm.requests == []
    assert not harness.session.writer.recorded  # nothing recorded for a refused prompt
    await harness.session.close()


def test_litellm_decides_for_models_it_knows() -> None:
    from agent.images import accepts

    assert accepts("openai/gpt-4o", None)
    assert accepts("openai/responses/gpt-4.1", None)  # the Responses route names the same model
    assert not accepts("openai/gpt-3.5-turbo", None)
    assert not accepts("openai/some-local-model", None)  # unknown: not assumed
    assert accepts("openai/some-local-model", True)  # the `vision` setting says so


def test_bad_images_get_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "notes.png").write_text("not an image")
    (tmp_path / "big.png").write_bytes(png() + b"\0" * MAX_BYTES)
    with pytest.raises(ImageError, match=r"notes.png is not a png, jpeg, gif or webp image"):
        from_path(tmp_path / "notes.png")
    with pytest.raises(ImageError, match=r"big.png is 5.2 MB; images are sent up to 5 MB"):
        from_path(tmp_path / "big.png")
    with pytest.raises(ImageError, match=r"gone.png: no such file"):
        from_path(tmp_path / "gone.png")
    with pytest.raises(ImageError, match="is a folder"):
        from_path(tmp_path)


def test_the_fake_server_checks_image_parts_as_openai_does() -> None:
    good = "data:image/png;base64," + base64.b64encode(png()).decode()
    user = lambda url: [{"role": "user", "content": [{"type": "text", "text": "hi"},  # noqa: E731
                                                     {"type": "image_url", "image_url": {"url": url}}]}]
    assert content_problem(user(good)) is None
    assert "unsupported image" in (content_problem(user("data:image/png;base64," + base64.b64encode(b"GIF89a").decode())) or "")
    assert "base64" in (content_problem(user("data:image/png;base64,@@@")) or "")
    assert "only supported by certain models" in (content_problem(user(good), vision=False) or "")
    assert "role 'user'" in (content_problem([{**user(good)[0], "role": "assistant"}]) or "")


async def test_a_text_only_server_answers_400_when_told_the_model_sees(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A wrong `vision = true` for a custom model: the server's refusal is reported, not hidden."""
    fake_llm.vision = False
    harness = open_harness(fake_llm, tmp_path / "ws", {}, _config(fake_llm, vision=True), ScriptedApprover([]))
    complete = await harness.session.run("look", [from_bytes(png(), "shot.png")])
    assert not complete.success
    errors = [json.dumps(e.model_dump()) for e in harness.events if e.type == "error"]
    assert any("only supported by certain models" in e for e in errors), errors
    await harness.session.close()


def test_prompts_name_images_by_mention_and_by_dropped_path(tmp_path: Path) -> None:
    from agent.images import named_in

    root = tmp_path / "ws"
    root.mkdir()
    (root / "shot.png").write_bytes(png())
    drop = tmp_path / "My Shots"
    drop.mkdir()
    (drop / "screen 1.png").write_bytes(png())
    text = f"compare @shot.png with {str(drop / 'screen 1.png').replace(' ', chr(92) + ' ')}, and logo.png"
    assert named_in(text, root) == [("shot.png", root / "shot.png"), (str(drop / "screen 1.png"), drop / "screen 1.png")]
    assert named_in(f"look '{drop / 'screen 1.png'}'", root) == [(str(drop / "screen 1.png"), drop / "screen 1.png")]
    assert named_in(f"see file://{str(drop / 'screen 1.png').replace(' ', '%20')}", root)[0][1] == drop / "screen 1.png"
    assert named_in("a path that is not there: /nowhere/x.png", root) == []


async def test_an_image_reaches_a_model_named_with_the_responses_route(tmp_path: Path) -> None:
    """`--image` with openai/responses/gpt-4.1 was refused: the vision look-up kept `responses/` in the name."""
    shot = png(shade=3)
    with FakeResponses(Reply(text="a square")) as server:
        config = Config(model="openai/responses/gpt-4.1", api_base=server.url, api_key=SecretStr(TEST_KEY),
                        mode="allow", timeout=10.0, max_retries=0)  # type: ignore[arg-type]  # no `vision` set
        harness = open_harness(server, tmp_path / "ws", {}, config, ScriptedApprover([]))  # type: ignore[arg-type]
        try:
            complete = await harness.session.run("what is this?", [from_bytes(shot, "shot.png")])
        finally:
            await harness.session.close()
    assert complete.success, complete.final_response
    sent = server.requests[-1]["input"][-1]
    assert sent["role"] == "user" and sent["content"][1] == {
        "type": "input_image", "image_url": "data:image/png;base64," + base64.b64encode(shot).decode(), "detail": "auto"}
    assert server.requests[-1]["model"] == "gpt-4.1" and server.rejected == []
