"""`coder-tui run --image PATH` (repeatable) and `run --fork ID`, as a user runs them."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fakellm import FakeLLM, Reply, images_in
from tests.media.pictures import png


def _vision(home: Path, on: bool = True) -> None:
    config = home / "config" / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"vision = {'true' if on else 'false'}\n")


def _run(home: Path, llm: FakeLLM, ws: Path, *args: str) -> object:
    return run_cli(home, "run", *args, "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
                   "--api-key", "sk-test-x", "--mode", "allow")


def test_run_sends_every_image_given(fake_llm: FakeLLM, isolated_home: Path, tmp_path: Path) -> None:
    _vision(isolated_home)
    (tmp_path / "a.png").write_bytes(png(shade=1))
    (tmp_path / "b.png").write_bytes(png(shade=2))
    fake_llm.script(Reply(text="two squares"))
    done = _run(isolated_home, fake_llm, tmp_path, "compare these", "--image", str(tmp_path / "a.png"),
                "--image", str(tmp_path / "b.png"))
    assert done.returncode == 0, done.stderr
    assert images_in(fake_llm.requests[0]) == [
        "data:image/png;base64," + base64.b64encode(png(shade=s)).decode() for s in (1, 2)]


def test_run_refuses_images_for_a_model_without_them(fake_llm: FakeLLM, isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png())
    done = _run(isolated_home, fake_llm, tmp_path, "look", "--image", str(tmp_path / "a.png"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "coder-tui: error: openai/fake-model does not accept images (not in litellm's list of models that take "
        "images); use a model that does, or set `vision = true` in the config if it does"]
    assert fake_llm.requests == []


def test_run_names_a_bad_image(fake_llm: FakeLLM, isolated_home: Path, tmp_path: Path) -> None:
    _vision(isolated_home)
    (tmp_path / "notes.png").write_text("text")
    done = _run(isolated_home, fake_llm, tmp_path, "look", "--image", str(tmp_path / "notes.png"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"coder-tui: error: --image {tmp_path / 'notes.png'} is not a png, jpeg, gif or webp image"
    assert fake_llm.requests == []


@pytest.mark.timeout(360)
def test_fork_continues_a_copy_and_leaves_the_original(fake_llm: FakeLLM, isolated_home: Path, tmp_path: Path) -> None:
    _vision(isolated_home)
    (tmp_path / "a.png").write_bytes(png(shade=3))
    fake_llm.script(Reply(text="first answer"), Reply(text="other direction"))
    first = _run(isolated_home, fake_llm, tmp_path, "start", "--image", str(tmp_path / "a.png"), "--json")
    assert first.returncode == 0, first.stderr
    original_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    sessions = isolated_home / "data" / "coder-tui" / "sessions"
    original = (sessions / f"{original_id}.jsonl").read_bytes()

    second = run_cli(isolated_home, "run", "try another way", "--fork", original_id, "--model", fake_llm.model,
                     "--api-base", fake_llm.url, "--api-key", "sk-test-x", "--json")
    assert second.returncode == 0, second.stderr
    fork_id = json.loads(second.stdout.splitlines()[0])["session_id"]
    assert fork_id != original_id
    assert (sessions / f"{original_id}.jsonl").read_bytes() == original  # byte for byte as it was
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[2]["content"] == "first answer" and sent[3]["content"] == "try another way"
    assert len(images_in(fake_llm.requests[-1])) == 1  # the copy has the image too
    header = json.loads((sessions / f"{fork_id}.jsonl").read_text().splitlines()[0])["data"]
    assert header["session_id"] == fork_id and header["forked_from"] == original_id


def test_fork_of_an_unknown_session_is_a_usage_error(fake_llm: FakeLLM, isolated_home: Path) -> None:
    done = run_cli(isolated_home, "run", "x", "--fork", "nope", "--model", fake_llm.model, "--api-base", fake_llm.url)
    assert done.returncode == 2
    assert done.stderr.strip() == "coder-tui: error: --fork: no session 'nope' (see `coder-tui sessions`)"


@pytest.mark.timeout(360)  # three cold CLI runs on a busy machine
def test_fork_of_a_session_another_process_has_open(fake_llm: FakeLLM, isolated_home: Path, tmp_path: Path) -> None:
    """The original's lock is respected: it is only read (a --resume of it would be refused)."""
    from agent.session.record import SessionStore

    fake_llm.script(Reply(text="first"), Reply(text="forked"))
    first = _run(isolated_home, fake_llm, tmp_path, "start", "--json")
    original_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    path = isolated_home / "data" / "coder-tui" / "sessions" / f"{original_id}.jsonl"
    writer, _ = SessionStore(path.parent).reopen(path)  # this process holds the session now
    try:
        before = path.read_bytes()
        resumed = run_cli(isolated_home, "run", "x", "--resume", original_id, "--model", fake_llm.model,
                          "--api-base", fake_llm.url, "--api-key", "sk-test-x")
        assert resumed.returncode == 2 and "in use" in resumed.stderr
        forked = run_cli(isolated_home, "run", "other way", "--fork", original_id, "--model", fake_llm.model,
                         "--api-base", fake_llm.url, "--api-key", "sk-test-x")
        assert forked.returncode == 0, forked.stderr
        assert path.read_bytes() == before
    finally:
        writer.close()
