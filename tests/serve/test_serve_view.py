"""`serve`'s browser view (`GET /view`, agent/frontends/serve/view.py) in a real headless browser:
the distribution's Chromium (/usr/bin/chromium, `apt-get install chromium`) driven by Playwright,
against `serve` on a loopback socket and the scripted model. Without Chromium the browser tests
are skipped, and say so."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakellm import Reply, call
from tests.serve.conftest import TOKEN, sse_events

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = '<img src=x onerror="window.__pwned = 1">'
HOSTILE_FILE = "<script>window.__pwned = 2</script>\n"
WAIT = 60_000  # ms: the CI machine is busy


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    """A fresh page of a headless Chromium with a fresh profile."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"Chromium is not installed ({CHROMIUM}; Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1100, "height": 800})
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def _turn(serve: Any, prompt: str, events: list[dict[str, Any]]) -> threading.Thread:
    """A streamed turn started by another client (as an editor would), read to its end in a thread."""
    def run() -> None:
        with serve.client() as client, client.stream("POST", "/api/chat", json={
                "messages": [{"role": "user", "content": prompt}]}) as response:
            events.extend(sse_events(response.iter_lines()))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_the_page_follows_a_live_run_and_its_allow_button_answers_the_approval(make_serve, page):
    serve = make_serve(mode="ask", files={"a.txt": "one\n"})
    held = threading.Event()
    serve.llm.script(Reply(text=f"I will write b.txt {HOSTILE} now.", hold=held,
                           tool_calls=[call("write_file", file_path="b.txt", content=HOSTILE_FILE,
                                                       reason=f"to say hi {HOSTILE}")]),
                     Reply(text="Wrote b.txt."))
    events: list[dict[str, Any]] = []
    turn = _turn(serve, f"make b.txt {HOSTILE}", events)
    [session] = serve.wait_for(serve.sessions, "the session to be live")
    page.goto(f"{serve.url}/view#token={TOKEN}")
    assert "token=" not in page.url  # taken from the fragment, then out of the address bar
    page.get_by_role("button", name="make b.txt").click()
    log = page.locator("#log")
    log.get_by_text(f"make b.txt {HOSTILE}").wait_for(timeout=WAIT)  # the prompt, as text
    page.locator("#state", has_text="running").wait_for(timeout=WAIT)
    held.set()  # the model answers now: the page shows it as it streams
    log.get_by_text(f"I will write b.txt {HOSTILE} now.").wait_for(timeout=WAIT)
    card = page.locator(".approval")
    card.get_by_role("button", name="Allow").wait_for(timeout=WAIT)
    assert "b.txt" in card.inner_text() and HOSTILE_FILE.strip() in card.locator("pre.diff").inner_text()
    assert card.locator(".why").inner_text() == f"why: to say hi {HOSTILE}"  # the model's reason, as the app shows it
    assert page.locator("#state").inner_text() == "waits for your approval"
    assert not (serve.root / "b.txt").exists()
    card.get_by_role("button", name="Allow").click()
    card.locator(".outcome", has_text="Allowed").wait_for(timeout=WAIT)
    log.get_by_text("Wrote b.txt.").wait_for(timeout=WAIT)
    log.locator(".complete", has_text="done").wait_for(timeout=WAIT)
    turn.join(WAIT / 1000)
    assert (serve.root / "b.txt").read_text() == HOSTILE_FILE  # the edit landed
    assert events[-1] == {"done": True}
    assert not card.get_by_role("button").count()  # answered: no buttons left
    # hostile text was shown as text: no element made of it, no script run
    assert page.locator("#log img, #log script").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert session["session_id"] in page.url


@pytest.mark.slow
def test_an_approval_answered_elsewhere_shows_resolved_on_the_page(make_serve, page):
    serve = make_serve(mode="ask")
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="c.txt", content="c\n")]), Reply(text="No."))
    events: list[dict[str, Any]] = []
    turn = _turn(serve, "make c.txt", events)
    [session] = serve.wait_for(lambda: [s for s in serve.sessions() if s["pending_approvals"]], "the approval")
    page.goto(f"{serve.url}/view#token={TOKEN}&session={session['session_id']}")
    card = page.locator(".approval")
    card.get_by_role("button", name="Deny").wait_for(timeout=WAIT)
    with serve.client() as client:  # another front end answers
        client.post(f"/api/approvals/{session['pending_approvals'][0]['id']}",
                    json={"decision": "deny", "feedback": "not now"}).raise_for_status()
    card.locator(".outcome", has_text="Denied: not now").wait_for(timeout=WAIT)
    assert not card.get_by_role("button").count()
    turn.join(WAIT / 1000)
    assert not (serve.root / "c.txt").exists()


@pytest.mark.slow
def test_without_the_right_token_the_page_shows_nothing_of_a_session(make_serve, page):
    serve = make_serve()
    serve.llm.script(Reply(text="secret answer"))
    _, events = serve.chat("a secret prompt")
    session_id = events[0]["session_id"]
    for address in (f"{serve.url}/view#session={session_id}",
                    f"{serve.url}/view#token=wrong-token&session={session_id}"):
        page.goto("about:blank")
        page.goto(address)
        page.locator("#login").wait_for(timeout=WAIT)
        if "wrong" in address:
            page.get_by_text("That token was refused").wait_for(timeout=WAIT)
        assert page.locator("#main").is_hidden()
        body = page.locator("body").inner_text()
        assert "secret" not in body and session_id not in body
    # the token typed in the form opens it
    page.locator("#token").fill(TOKEN)
    page.get_by_role("button", name="Connect").click()
    page.get_by_role("button", name="a secret prompt").click()
    page.locator("#log").get_by_text("secret answer").wait_for(timeout=WAIT)


def test_the_page_is_served_without_the_token_with_a_policy_that_allows_only_its_own_script(make_serve):
    serve = make_serve()
    with httpx.Client(base_url=serve.url, timeout=30) as anonymous:
        page = anonymous.get("/view")
        scripts = [anonymous.get(f"/view/{name}.js") for name in ("log", "view")]
        root = anonymous.get("/")
        sessions = anonymous.get("/api/sessions")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert "<script>" not in page.text and 'src="/view/view.js"' in page.text  # no inline script
    for script in scripts:
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        assert "innerHTML" not in script.text and "insertAdjacentHTML" not in script.text
    assert root.status_code == 302 and root.headers["location"] == "/view"
    assert sessions.status_code == 401  # the API still needs the token


@pytest.mark.slow
def test_the_page_starts_a_session_and_continues_it_with_a_prompt(make_serve, page):
    serve = make_serve()
    serve.llm.script(Reply(text="first answer\r\nin two lines \u202eevil"), Reply(text="second answer"))
    page.goto(f"{serve.url}/view#token={TOKEN}")
    page.get_by_role("button", name="New").click()
    page.locator("#prompt").fill("first question")
    page.get_by_role("button", name="Send").click()
    log = page.locator("#log")
    log.get_by_text("first answer").wait_for(timeout=WAIT)
    log.locator(".complete").wait_for(timeout=WAIT)
    [session] = serve.sessions()
    assert session["session_id"] in page.url  # the page follows the session it started
    page.locator("#prompt").fill("second question")
    page.locator("#prompt").press("Control+Enter")
    log.get_by_text("second answer").wait_for(timeout=WAIT)
    assert [s["session_id"] for s in serve.sessions()] == [session["session_id"]]  # the same conversation
    assert serve.llm.requests[1]["messages"][-1]["content"].endswith("second question")
    assert any("first answer" in str(m.get("content")) for m in serve.llm.requests[1]["messages"])
    assert log.get_by_text("first question").count() == 1 and log.get_by_text("second question").count() == 1
    # a Windows line end is a line end; a bidi override is shown, not obeyed
    assert "first answer\nin two lines \\u202eevil" in log.inner_text()
