"""Text from a repository or a model reaches no terminal raw: control and bidi characters are shown,
in `run`'s approval prompt, its readable output and its JSON lines (issue 20)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agent.textsafe import is_clean, json_line, line, path_problem, shown_copy, visible
from tests.conftest import run_cli, write_files
from tests.fakellm import FakeLLM, Reply, call

# What may reach a terminal: printable text, newlines and tabs. Nothing else.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HIDDEN_COMMAND = "rm -rf src; : \x1b[2K\r$ ls -la"
HOSTILE = [
    HIDDEN_COMMAND, "\x1b]0;title\x07", "\x1b[2J\x1b[H", "\x9b2J", "\x9d0;x\x9c", "a\rb", "\x08\x08\x08rm",
    "\x7f", "\x00nul", "evil\u202egpj.exe", "\u2066isolate\u2069", "\u200fmark\u200e", "\u061c", "x\u2028y\u2029",
    "\x1bP+q\x1b\\", "\x0c\x0b", "\x1b[?1049h", "\x1b[8m hidden", "\u202a\u202b\u202c\u202d", "\u2067\u2068",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_shown_not_acted_on(text: str) -> None:
    for shown in (visible(text), line(text), visible("ok\n" + text + "\nmore")):
        assert not ACTIVE.search(shown), repr(shown)
    assert not ACTIVE.search(line(text + "\n\t")) and "\n" not in line(text + "\n")


def test_what_is_shown_names_each_character() -> None:
    assert line(HIDDEN_COMMAND) == "rm -rf src; : \\x1b[2K\\r$ ls -la"
    assert visible("a\u202eb\x9b") == "a⟨U+202E⟩b\\x9b"
    assert visible("one\r\ntwo\tthree\r") == "one\ntwo\tthree"  # CRLF line ends, a CR split off the end
    assert is_clean("plain\ntext\t") and not is_clean("a\rb")


def test_json_escapes_are_lossless() -> None:
    value = {"text": "x\u2028y\u2029\x85\u202e\x7f\x1b"}
    shown = json_line(json.dumps(value, ensure_ascii=False))
    assert not ACTIVE.search(shown) and json.loads(shown) == value


def test_display_copy_keeps_the_original_event() -> None:
    from agent.events import ApprovalRequired

    event = ApprovalRequired(approval_id="a", call_id="c", tool="bash_exec", args={"command": HIDDEN_COMMAND},
                             kind="exec", summary="run", command=HIDDEN_COMMAND)
    shown = shown_copy(event)
    assert shown.command == "rm -rf src; : \\x1b[2K\\r$ ls -la" and shown.args["command"] == shown.command
    assert event.command == HIDDEN_COMMAND


def test_right_to_left_file_names_are_named() -> None:
    problem = path_problem("invoice\u202egpj.exe")
    assert problem is not None and "⟨U+202E⟩" in problem and "\u202e" not in problem
    assert path_problem("src/ordinary name.py") is None


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", {"src/a.py": "x = 1\n"})


def run(llm: FakeLLM, ws: Path, home: Path, stdin: str | None, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(home, "run", "tidy up", "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
                   "--api-key", "sk-test-visible-text-0000", "--sandbox", "off", *extra, stdin=stdin, timeout=90)


def test_run_approval_prompt_shows_the_hidden_command(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    # The attack: the prompt looked like `$ ls -la`; a user answering y deleted src. Now the whole
    # command is on screen, and the user who reads it says no.
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command=HIDDEN_COMMAND)]), Reply(text="ok"))
    done = run(fake_llm, ws, isolated_home, "n\n")
    assert (ws / "src/a.py").exists()
    prompt = next(text for text in done.stderr.splitlines() if text.startswith("$ "))
    assert prompt.startswith("$ rm -rf src; : \\x1b[2K\\r$ ls -la  (in ")
    assert not ACTIVE.search(done.stdout + done.stderr)


def test_run_output_shows_model_text_tool_output_and_paths(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    output_trick = "printf 'ok\\033[2J\\033]0;owned\\007\\r\\342\\200\\256fake\\n'"
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command=output_trick)]),
                    Reply(tool_calls=[call("write_file", file_path="doc\x1b[8m.md", content="a\x1b[2Jb\u202ec\n")]),
                    Reply(text="All \x1b[2Jdone\u202e \x9b1A\u2028here"))
    done = run(fake_llm, ws, isolated_home, None, "--mode", "allow")
    assert done.returncode == 0, done.stderr
    everything = done.stdout + done.stderr
    assert not ACTIVE.search(everything), [m.group() for m in ACTIVE.finditer(everything)]
    assert "All \\x1b[2Jdone⟨U+202E⟩ \\x9b1A⟨U+2028⟩here" in done.stdout
    assert "doc\\x1b[8m.md" in done.stdout and "refusing to create" in done.stdout
    assert sorted(path.name for path in ws.iterdir()) == ["src"]  # the file with the hidden name was refused


def test_run_json_lines_escape_what_json_leaves_raw(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    text = "line\u2028sep\u2029para \x85nel \u202eltr \x1b[2J"
    fake_llm.script(Reply(text=text))
    done = run(fake_llm, ws, isolated_home, None, "--json")
    assert done.returncode == 0, done.stderr
    assert not ACTIVE.search(done.stdout)
    events = [json.loads(item) for item in done.stdout.splitlines()]  # one event a line, however split
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == text


def test_acp_titles_show_the_whole_command() -> None:
    from agent.frontends.acp.events import plan_entries
    from agent.frontends.acp.tools import tool_title
    from agent.events import TodoItem

    title = tool_title("bash_exec", {"command": HIDDEN_COMMAND})
    assert title == "Run `rm -rf src; : \\x1b[2K\\r$ ls -la`"  # not cut at the CR, nothing raw
    assert tool_title("bash_exec", {"command": "ls\nrm -rf src"}) == "Run `ls …`"  # more lines are said to follow
    assert not ACTIVE.search(tool_title("write_file", {"file_path": "invoice\u202egpj.exe"}))
    entries = plan_entries([], [TodoItem(id="1", content="step \x1b[2Jone\u202e", status="pending")])
    assert not ACTIVE.search(entries[0].content)


def test_listings_show_a_hostile_repositorys_profile_and_a_hostile_prompt(tmp_path: Path, isolated_home: Path) -> None:
    folder = tmp_path / "ws" / ".coder-tui" / "profiles"
    folder.mkdir(parents=True)
    (folder / "evil.toml").write_text('description = "fine\\u001b[2J\\u001b]0;owned\\u0007 \\u202eexe.txt"\n')
    done = run_cli(isolated_home, "profiles", "--workspace", str(tmp_path / "ws"))
    assert done.returncode == 0, done.stderr
    assert not ACTIVE.search(done.stdout + done.stderr) and "fine\\x1b[2J\\x1b]0;owned\\x07 ⟨U+202E⟩exe" in done.stdout
    from agent.session.record import SessionStore

    writer = SessionStore().create({"workspace": "/ws\u202e"})
    writer.message({"role": "user", "content": "issue text \x1b[2J\x9b1A here"})
    writer.close()
    done = run_cli(isolated_home, "sessions")
    assert done.returncode == 0 and "issue text \\x1b[2J\\x9b1A here" in done.stdout
    assert not ACTIVE.search(done.stdout)
