"""`coder-tui serve` against a web page and other folders (issue 20): a request through a rebound DNS
name or from another origin gets 403, and only this folder's recorded sessions can be resumed
(real sockets, httpx)."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx

from agent.session.record import SessionStore
from tests.fakellm import Reply
from tests.serve.test_serve_cli import start_serve  # noqa: F401 - the fixture

CHAT = {"messages": [{"role": "user", "content": "hi"}], "stream": False}


def port_of(url: str) -> int:
    return urlsplit(url).port or 80


def refused(response: httpx.Response, what: str) -> bool:
    return response.status_code == 403 and what in response.json()["error"]


def test_a_generated_token_answers_only_loopback_hosts_and_its_own_origin(start_serve):  # noqa: F811
    server = start_serve()
    token = server.banner[1].removeprefix("token: ").strip()
    port = port_of(server.url)
    auth = {"Authorization": f"Bearer {token}"}
    hostile_hosts = [f"evil.example:{port}", f"attacker.test:{port}", f"127.0.0.1.nip.io:{port}",
                     f"127.0.0.1:{port + 1}", "127.0.0.1", f"localhost.:{port}x", "", f"[::1]:{port + 1}",
                     f"0.0.0.0:{port}", f"10.0.0.1:{port}"]
    for host in hostile_hosts:
        for path in ("/api/sessions", "/api/health"):
            response = httpx.get(server.url + path, headers={**auth, "Host": host})
            assert refused(response, "DNS rebinding"), (host, path, response.text)
    hostile_origins = ["http://evil.example", f"http://evil.example:{port}", "null", f"http://localhost:{port + 1}",
                       "file://", "chrome-extension://abc"]
    for origin in hostile_origins:
        response = httpx.post(server.url + "/api/chat", headers={**auth, "Origin": origin}, json=CHAT)
        assert refused(response, "requests from web pages are refused"), (origin, response.text)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        response = httpx.get(server.url + "/api/sessions", headers={**auth, "Host": host,
                                                                     "Origin": f"http://{host}"})
        assert response.status_code == 200, (host, response.text)
    assert httpx.get(server.url + "/api/sessions").status_code == 401  # the token is still needed


def test_a_configured_token_may_be_used_through_another_name_but_not_from_a_page(start_serve):  # noqa: F811
    server = start_serve("--token", "configured-token-42")
    auth = {"Authorization": "Bearer configured-token-42"}
    behind_a_proxy = httpx.get(server.url + "/api/sessions", headers={**auth, "Host": "coder.internal.example"})
    assert behind_a_proxy.status_code == 200
    from_a_page = httpx.get(server.url + "/api/sessions", headers={**auth, "Host": "coder.internal.example",
                                                                    "Origin": "https://evil.example"})
    assert refused(from_a_page, "requests from web pages are refused")
    same_site = httpx.get(server.url + "/api/sessions", headers={**auth, "Host": "coder.internal.example",
                                                                  "Origin": "https://coder.internal.example"})
    assert same_site.status_code == 200


def _recorded_elsewhere(folder: str) -> str:
    writer = SessionStore().create({"workspace": folder, "workspace_kind": "local", "root": folder})
    writer.message({"role": "user", "content": "the other project's secret plan"})
    return writer.session_id


def test_only_this_folders_sessions_are_resumed(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="A1"), Reply(text="B1"))
    elsewhere = _recorded_elsewhere("/home/someone/other-project")
    mine = [serve.chat(text)[1][0]["session_id"] for text in ("first", "second")]
    for ref in (elsewhere, elsewhere[:-3], elsewhere[:8]):
        with serve.client() as client:
            response = client.post("/api/chat", json={**CHAT, "session_id": ref})
        assert response.status_code == 404, (ref, response.text)
        assert "other-project" not in response.text and "secret plan" not in response.text
    with serve.client() as client:
        ambiguous = client.post("/api/chat", json={**CHAT, "session_id": mine[0][:4]})
        assert ambiguous.status_code == 404 and "ambiguous" in ambiguous.json()["error"]
    assert len(serve.llm.requests) == 2  # nothing reached the model for the refused ones


def test_sse_frames_escape_what_json_leaves_raw(make_serve):
    serve = make_serve()
    text = "one\u2028two\u2029 \x85 \u202eevil \x1b[2J"
    serve.llm.script(Reply(text=text))
    payload = {"messages": [{"role": "user", "content": "hi"}]}
    with serve.client() as client, client.stream("POST", "/api/chat", json=payload) as response:
        raw = b"".join(response.iter_bytes()).decode()
    assert not any(char in raw for char in "\u2028\u2029\x85\u202e\x1b")
    frames = [json.loads(line[6:]) for line in raw.split("\n") if line.startswith("data: ")]
    assert "".join(f.get("content", "") for f in frames) == text  # the same text, once decoded
