"""Repository specs, the API address and token discovery."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from agent.github.auth import discover_token, redact
from agent.github.client import DEFAULT_API_URL, resolve_api_url
from agent.github.errors import GitHubError, InvalidRepoSpec
from agent.github.spec import RepoSpec, parse_repo_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("octo/hello", RepoSpec("octo", "hello")),
        ("octo/hello@main", RepoSpec("octo", "hello", "main")),
        ("octo/hello@feature/x-1", RepoSpec("octo", "hello", "feature/x-1")),
        ("octo/hello.js@v1.2.3", RepoSpec("octo", "hello.js", "v1.2.3")),
        ("https://github.com/octo/hello", RepoSpec("octo", "hello")),
        ("https://github.com/octo/hello.git", RepoSpec("octo", "hello")),
        ("https://github.com/octo/hello/", RepoSpec("octo", "hello")),
        ("https://github.com/octo/hello/tree/release/2.0", RepoSpec("octo", "hello", "release/2.0")),
        ("github.com/octo/hello", RepoSpec("octo", "hello")),
        ("http://www.github.com/octo/hello", RepoSpec("octo", "hello")),
        ("git@github.com:octo/hello.git", RepoSpec("octo", "hello")),
        ("  octo/hello  ", RepoSpec("octo", "hello")),
    ],
)
def test_accepted_forms(text, expected):
    assert parse_repo_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no repository given"),
        ("hello", "is not a repository; use OWNER/REPO"),
        ("a/b/c", "is not a repository"),
        ("-octo/hello", "is not a GitHub owner name"),
        ("octo/he llo", "is not a repository name"),
        ("octo/..", "is not a repository name"),
        ("octo/hello@", "is not valid: it is empty"),
        ("octo/hello@a..b", "contains '..'"),
        ("octo/hello@bad ref", "contains a space"),
        ("https://gitlab.com/octo/hello", "is not a github.com address"),
        ("https://github.com/octo", "names no repository"),
        ("https://github.com/octo/hello/blob/main/README.md", "points inside the repository"),
        ("ftp://github.com/octo/hello", "is not a github.com address"),
    ],
)
def test_rejected_forms_say_why(text, message):
    with pytest.raises(InvalidRepoSpec, match=message.replace(".", r"\.").replace("(", r"\(")):
        parse_repo_spec(text)


def test_spec_text_round_trips():
    assert str(parse_repo_spec("octo/hello@dev")) == "octo/hello@dev"
    assert str(parse_repo_spec("octo/hello")) == "octo/hello"


def test_api_url_order_and_validation():
    assert resolve_api_url(None, {}) == DEFAULT_API_URL
    assert resolve_api_url(None, {"GITHUB_API_URL": "https://ghe.example/api/v3/"}) == "https://ghe.example/api/v3"
    env = {"GITHUB_API_URL": "https://ghe.example/api/v3", "CODER_TUI_GITHUB_API_URL": "http://127.0.0.1:1"}
    assert resolve_api_url(None, env) == "http://127.0.0.1:1"
    assert resolve_api_url("http://127.0.0.1:2", env) == "http://127.0.0.1:2"
    with pytest.raises(GitHubError, match="not an http"):
        resolve_api_url("ftp://x", {})


def test_under_test_nothing_resolves_to_github():
    # the conftest points the API at a closed loopback port and blocks public names
    assert resolve_api_url() == "http://127.0.0.1:9"
    for host in ("api.github.com", "github.com"):
        with pytest.raises(OSError, match="only loopback"):
            socket.getaddrinfo(host, 443)


def fake_gh(tmp_path: Path, body: str) -> str:
    script = tmp_path / "gh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_token_order(tmp_path):
    gh = fake_gh(tmp_path, 'if [ "$1 $2 $3 $4" = "auth token --hostname github.com" ]; then echo gho_fromgh; fi')
    both = {"GITHUB_TOKEN": "ghp_one", "GH_TOKEN": "ghp_two"}
    assert discover_token(both, "cfg", gh).source == "GITHUB_TOKEN"
    assert discover_token({"GH_TOKEN": "ghp_two"}, "cfg", gh).source == "GH_TOKEN"
    found = discover_token({}, "cfg", gh)
    assert found.source == "gh auth token" and found.token.get_secret_value() == "gho_fromgh"
    missing_gh = str(tmp_path / "nowhere" / "gh")
    assert discover_token({}, "ghp_cfg", missing_gh).source == "config"
    assert discover_token({"GITHUB_TOKEN": "  "}, None, missing_gh).source == "none"


def test_logged_out_or_broken_gh_is_skipped(tmp_path):
    logged_out = fake_gh(tmp_path, "echo 'not logged in' >&2; exit 1")
    assert discover_token({}, "ghp_cfg", logged_out).source == "config"


def test_token_never_shows_in_repr_or_text():
    found = discover_token({"GITHUB_TOKEN": "ghp_secretvalue123"}, None, "/nonexistent/gh")
    for text in (repr(found), str(found), found.describe(), f"{found.token}"):
        assert "ghp_secretvalue123" not in text
    assert redact("header ghp_secretvalue123 here", found) == "header *** here"


def test_environment_is_not_modified():
    before = dict(os.environ)
    discover_token(None, None, "/nonexistent/gh")
    assert dict(os.environ) == before


def test_git_gets_the_token_only_as_a_scoped_header():
    import base64

    from pydantic import SecretStr

    from agent.github.auth import TokenSource
    from agent.github.clone import git_env

    token = TokenSource(SecretStr("ghp_headertokenheadertoken0000000000"), "GITHUB_TOKEN")
    env = git_env("https://github.com/octo/hello.git", token)
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_CONFIG_COUNT"] == "1"
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraHeader"
    scheme, _, value = env["GIT_CONFIG_VALUE_0"].removeprefix("Authorization: ").partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(value).decode() == "x-access-token:ghp_headertokenheadertoken0000000000"
    assert "GIT_CONFIG_COUNT" not in git_env("file:///tmp/x.git", token)


def test_importing_github_modules_loads_neither_pygithub_nor_gitpython():
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("import sys, agent.session.github, agent.tools.github, agent.workspaces.github\n"
            "print([m for m in ('github', 'git', 'requests', 'textual') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_user_config_can_hold_the_token_and_api_url(isolated_home):
    from agent import paths
    from agent.config import load_config

    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(
        'github_token = "ghp_fromconfigfromconfigfromconfig0000"\ngithub_api_url = "http://127.0.0.1:7"\n')
    config = load_config(None, {}, environ={})
    assert config.github_token.get_secret_value() == "ghp_fromconfigfromconfigfromconfig0000"
    assert "ghp_fromconfig" not in repr(config)
    found = discover_token({}, config.github_token.get_secret_value(), "/nonexistent/gh")
    assert found.source == "config"
    assert resolve_api_url(config.github_api_url, {}) == "http://127.0.0.1:7"
