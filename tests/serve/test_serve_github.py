"""`coder-tui serve --github`: a session per chat on the repository through the API (fake GitHub);
a completed turn's edits become one commit on the work branch, as with `coder-tui run --github`."""

from __future__ import annotations

import httpx

from tests.fakellm import Reply, call
from tests.github.conftest import TOKEN, gh_server  # noqa: F401 - the fixture
from tests.serve.test_serve_cli import ServeProcess

FILES = {"README.md": "# Hello\n", "src/greet.py": "def greet(name):\n    return 'Hello ' + name\n"}


def test_serve_on_a_github_repository_publishes_each_completed_turn(gh_server, fake_llm, isolated_home):  # noqa: F811
    repo = gh_server.create_repo("octo/hello", FILES)
    env = {"GITHUB_TOKEN": TOKEN, "CODER_TUI_GITHUB_API_URL": gh_server.url, "CODER_TUI_SERVE_TOKEN": "t0ken-1234"}
    server = ServeProcess(isolated_home, None, fake_llm, "--github", "octo/hello", "--mode", "allow", **env)
    try:
        assert server.banner[2].startswith("workspace: github:octo/hello")
        fake_llm.script(Reply(tool_calls=[call("patch_file", file_path="src/greet.py", reason="friendlier",
                                               patches=[{"old_text": "'Hello '", "new_text": "'Hi '"}])]),
                        Reply(text="Done."))
        response = httpx.post(server.url + "/api/chat", headers={"Authorization": "Bearer t0ken-1234"}, timeout=120,
                              json={"messages": [{"role": "user", "content": "be friendlier"}], "stream": False})
        body = response.json()
        assert body["errors"] == [] and body["content"] == "Done."
        assert body["diffs"][0]["file"] == "src/greet.py" and body["diffs"][0]["reason"] == "friendlier"
        published = body["published"]
        assert published["type"] == "published" and published["files"] == ["src/greet.py"]
    finally:
        assert server.stop() == 0
    branches = [ref.removeprefix("refs/heads/") for ref in repo.store.refs("refs/heads/")]
    [branch] = [name for name in branches if name != "main"]
    assert branch == published["branch"]
    assert repo.store.repo.git.diff("--name-only", "main", branch).split() == ["src/greet.py"]
    assert TOKEN not in "".join(server.banner)
