"""How a finished call reads on its row: notes cut at a word, commands' exit codes and last lines."""

from __future__ import annotations

from tui.toolresult import EXPAND_HINT, decision_notes, shorten, shown_result

LONG_ERROR = ("patch 1 of 1: old_text was not found in src/module/handlers.py; the closest text is at line 42, "
              "which differs in indentation")


def test_an_error_note_is_cut_at_a_word_not_mid_word() -> None:
    note = shorten(LONG_ERROR)
    assert len(note) <= 80 and note.endswith("…")
    assert LONG_ERROR.startswith(note[:-1]) and LONG_ERROR[len(note) - 1] == " "  # the cut fell on a space
    assert shown_result("patch_file", False, LONG_ERROR).note == note


def test_a_long_word_is_cut_where_it_must_be() -> None:
    path = "x" * 120
    assert shorten(path) == "x" * 79 + "…"


def test_a_command_shows_its_exit_code_and_last_lines() -> None:
    body = "exit code: 1\n--- stdout ---\n" + "\n".join(f"line {i}" for i in range(1, 8)) + "\n--- stderr ---\nboom"
    shown = shown_result("bash_exec", True, body)
    assert (shown.ok, shown.note) == (False, "exit 1")
    assert shown.preview.splitlines() == [f"… 4 more lines above · {EXPAND_HINT}", "line 5", "line 6", "line 7",
                                          "boom"]


def test_a_command_that_worked_and_one_that_timed_out() -> None:
    ok = shown_result("bash_exec", True, "exit code: 0\n--- stdout ---\nall good")
    assert (ok.ok, ok.note, ok.preview) == (True, "exit 0", "all good")
    late = shown_result("bash_exec", True, "timed out after 5 s; the command's process group was killed\n(no output)")
    assert (late.ok, late.note, late.preview) == (False, "timed out after 5 s", "")


def test_denied_and_stopped_calls_say_so() -> None:
    running, finished = decision_notes("deny", "use logging instead")
    assert running == finished == "denied: use logging instead"
    assert shown_result("patch_file", False, "The user denied this patch_file call.", finished).note == finished
    assert decision_notes("stop")[1] == "stopped"
    assert decision_notes("allow_once", rejected_hunks={"a.py": [0, 2]})[1] == "2 hunks rejected"
    assert decision_notes("allow_all") == ("allowed for the session", "")
