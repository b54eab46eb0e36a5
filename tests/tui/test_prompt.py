"""The prompt input, driven through Textual's pilot on a small host app."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from tui.theme_vars import derive_app_variables
from tui.widgets.prompt import CompletionPopup, PromptInput
from tui.widgets.prompt_support import PromptHistory, fuzzy_match

COMMANDS = [
    ("mode", "plan | ask | allow"),
    ("model", "switch the model"),
    ("help", "show the commands"),
    ("clear", "clear the conversation"),
]
FILES = [
    "README.md", "agent/loop.py", "tui/widgets/prompt.py", "tui/widgets/prompt.tcss", "tests/tui/test_prompt.py",
]


class HostApp(App[None]):
    """A chat-like screen: something above, the prompt at the bottom; records what is sent."""

    CSS = "#log { height: 1fr; }"

    def __init__(self, history_path: Path | None = None, files: list[str] | None = None) -> None:
        super().__init__()
        self.history_path = history_path
        self.files = files
        self.submitted: list[PromptInput.Submitted] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return derive_app_variables(self.current_theme)

    def compose(self) -> ComposeResult:
        yield Static("conversation", id="log")
        yield PromptInput(history_path=self.history_path, commands=COMMANDS, id="prompt")

    def on_mount(self) -> None:
        self.prompt.focus()
        if self.files is not None:
            self.prompt.set_files(self.files)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.submitted.append(message)

    def sent(self) -> list[str]:
        return [message.text for message in self.submitted]

    @property
    def popup(self) -> CompletionPopup:
        return self.screen.query_one(CompletionPopup)

    def rows(self) -> list[str]:
        """The completion list's rows as plain text; none while it is hidden."""
        popup = self.popup
        if not popup.display:
            return []
        return [str(popup.get_option_at_index(i).prompt) for i in range(popup.option_count)]

    def highlighted_row(self) -> str:
        popup = self.popup
        assert popup.display and popup.highlighted is not None
        return str(popup.get_option_at_index(popup.highlighted).prompt)


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type `text` key by key, then let the completion worker finish."""
    await pilot.press(*text)
    await settle(pilot)


async def settle(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# Sending


async def test_enter_sends_and_clears() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hello agent")
        await pilot.press("enter")
        assert app.sent() == ["hello agent"]
        assert app.submitted[0].mentions == []
        assert app.submitted[0].control is app.prompt
        assert app.prompt.value == ""


async def test_newline_keys_insert_a_line_break_that_is_sent() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "one")
        await pilot.press("ctrl+j")
        await type_text(pilot, "two")
        await pilot.press("shift+enter")
        await type_text(pilot, "three")
        assert app.prompt.value == "one\ntwo\nthree"
        assert app.sent() == []
        await pilot.press("enter")
        assert app.sent() == ["one\ntwo\nthree"]


async def test_keys_follow_the_keymap_by_binding_id() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.set_keymap({"prompt.submit": "ctrl+s"})
        await pilot.press("a", "enter", "b")
        assert app.prompt.value == "a\nb"
        await pilot.press("ctrl+s")
        assert app.sent() == ["a\nb"]


async def test_empty_or_blank_prompt_is_not_sent() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.press("space", "space", "ctrl+j", "enter")
        assert app.submitted == []
        assert app.prompt.prompt_history == []


async def test_input_grows_with_its_lines_up_to_eight() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        one_line = app.prompt.region.height
        await pilot.press("a", "ctrl+j", "b", "ctrl+j", "c")
        await pilot.pause()
        assert app.prompt.region.height == one_line + 2
        for _ in range(12):
            await pilot.press("ctrl+j", "x")
        await pilot.pause()
        assert app.prompt.region.height == one_line + 7
        assert app.prompt.region.bottom == app.screen.region.bottom


# History


async def test_history_walk_restores_the_draft() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        for text in ("first", "second"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.value == "second"
        await pilot.press("up")
        assert app.prompt.value == "first"
        await pilot.press("up")  # the oldest entry stays
        assert app.prompt.value == "first"
        await pilot.press("down")
        assert app.prompt.value == "second"
        await pilot.press("down")
        assert app.prompt.value == "draft"
        assert app.prompt.cursor_location == (0, 5)


async def test_up_moves_the_cursor_before_walking_the_history() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "old")
        await pilot.press("enter")
        await pilot.press("a", "ctrl+j", "b")
        await pilot.press("up")
        assert (app.prompt.value, app.prompt.cursor_location) == ("a\nb", (0, 1))
        await pilot.press("up")
        assert app.prompt.value == "old"
        await pilot.press("down")
        assert app.prompt.value == "a\nb"


async def test_history_is_saved_and_loaded_by_a_new_widget(tmp_path: Path) -> None:
    path = tmp_path / "data" / "prompt-history.jsonl"
    app = HostApp(history_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        for keys in (["o", "n", "e"], [*"two", "ctrl+j", *"lines"], [*"two"], [*"two"]):
            await pilot.press(*keys, "enter")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == ["one", "two\nlines", "two"]

    again = HostApp(history_path=path)
    async with again.run_test(size=(100, 30)) as pilot:
        assert again.prompt.prompt_history == ["one", "two\nlines", "two"]
        await pilot.press("up")
        assert again.prompt.value == "two"
        await pilot.press("up")
        assert again.prompt.value == "two\nlines"
        await pilot.press("up")
        assert again.prompt.value == "one"


async def test_corrupt_history_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'"good"\n{not json\n42\n\n["list"]\n\xff\xfe\x00garbage\n"also good"\n')
    app = HostApp(history_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.prompt.prompt_history == ["good", "also good"]
        await pilot.press("up")
        assert app.prompt.value == "also good"
        await pilot.press("up")
        assert app.prompt.value == "good"


async def test_unreadable_history_path_never_crashes(tmp_path: Path) -> None:
    folder = tmp_path / "a-directory"
    folder.mkdir()
    app = HostApp(history_path=folder)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("h", "i", "enter")
        assert app.sent() == ["hi"]
        await pilot.press("up")
        assert app.prompt.value == "hi"


def test_an_entry_after_a_half_written_line_survives(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('"one"\n"tw', encoding="utf-8")
    PromptHistory(path).add("three")
    assert PromptHistory(path).entries == ["one", "three"]


def test_history_file_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(f"entry {i}") + "\n" for i in range(1005)), encoding="utf-8")
    history = PromptHistory(path)
    assert len(history.entries) == 1000
    assert history.entries[0] == "entry 5"
    history.add("newest")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000
    assert json.loads(lines[-1]) == "newest"
    assert PromptHistory(path).entries == history.entries



def test_the_history_file_is_read_on_first_use_not_while_the_app_starts(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history = PromptHistory(path)  # made with the prompt, before the first frame
    path.write_text('"from another window"\n', encoding="utf-8")
    assert history.entries == ["from another window"]
    history.add("ours")
    assert path.read_text(encoding="utf-8").splitlines() == ['"from another window"', '"ours"']


# Slash commands


async def test_slash_completion_filters_and_tab_completes() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        assert len(app.rows()) == len(COMMANDS)
        await type_text(pilot, "mo")
        assert [row.split()[0] for row in app.rows()] == ["/mode", "/model"]
        assert "plan | ask | allow" in app.rows()[0]
        await pilot.press("tab")
        await settle(pilot)
        assert app.prompt.value == "/mode "
        assert app.rows() == []
        assert app.prompt.cursor_location == (0, 6)


async def test_tab_with_nothing_to_complete_keeps_the_focus_in_the_prompt() -> None:
    """Issue 26 item 6: Tab moved the focus to the next widget and the next keys went there."""
    from textual.widgets import Button

    class WithAButton(HostApp):
        def compose(self) -> ComposeResult:
            yield from super().compose()
            yield Button("elsewhere")

    app = WithAButton()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("tab")  # an empty prompt
        assert app.focused is app.prompt
        await type_text(pilot, "hello")
        await pilot.press("tab")
        await type_text(pilot, "!")
        assert app.focused is app.prompt and app.prompt.value == "hello!"
        await type_text(pilot, " /mo")  # not a command here (not at the start): nothing to complete either
        await pilot.press("tab", "x")
        assert app.prompt.value == "hello! /mox"


async def test_popup_sits_right_above_the_input() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        popup, prompt = app.popup.region, app.prompt.region
        assert popup.bottom == prompt.y
        assert (popup.x, popup.width) == (prompt.x, prompt.width)
        assert popup.height == len(COMMANDS) + 2


async def test_up_and_down_move_in_the_open_popup() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "old")
        await pilot.press("enter")
        await type_text(pilot, "/")
        assert app.highlighted_row().startswith("/mode")
        await pilot.press("down", "down")
        assert app.highlighted_row().startswith("/help")
        await pilot.press("up")
        assert app.highlighted_row().startswith("/model")
        assert app.prompt.value == "/"  # the history was not walked
        await pilot.press("enter")
        await settle(pilot)
        assert app.prompt.value == "/model "
        assert app.sent() == ["old"]


async def test_a_click_on_a_row_completes_it() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        await pilot.click(CompletionPopup, offset=(4, 3))  # the border, then rows 1, 2, 3
        await settle(pilot)
        assert app.prompt.value == "/help "
        assert app.focused is app.prompt


async def test_escape_closes_the_popup_and_typing_reopens_it() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/m")
        assert app.rows()
        await pilot.press("escape")
        assert app.rows() == []
        assert app.prompt.value == "/m"
        await pilot.press("tab")  # the list is closed: Tab completes nothing
        assert app.prompt.value == "/m"
        await type_text(pilot, "o")
        assert len(app.rows()) == 2


async def test_enter_completes_a_partial_command_but_sends_a_whole_one() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/he")
        await pilot.press("enter")
        await settle(pilot)
        assert app.prompt.value == "/help "
        assert app.sent() == []
        await pilot.press("backspace")
        await settle(pilot)
        assert app.rows()  # "/help" is open again, and whole
        await pilot.press("enter")
        assert app.sent() == ["/help"]
        await type_text(pilot, "/mode plan")
        await pilot.press("enter")
        assert app.sent() == ["/help", "/mode plan"]


async def test_slash_completion_only_at_the_start() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "a/m")
        assert app.rows() == []


async def test_recalled_history_opens_no_popup() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/help")
        await pilot.press("enter", "up")
        await settle(pilot)
        assert app.prompt.value == "/help"
        assert app.rows() == []


# @ file mentions


async def test_at_fuzzy_fragment_and_tab_inserts_the_best_path() -> None:
    app = HostApp(files=FILES)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "fix @prmpy")
        assert app.rows()[0] == "tui/widgets/prompt.py"
        await pilot.press("tab")
        await settle(pilot)
        assert app.prompt.value == "fix @tui/widgets/prompt.py "
        assert app.rows() == []


async def test_at_completion_in_the_middle_of_the_text() -> None:
    app = HostApp(files=FILES)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.value = "read  then stop"
        app.prompt.move_cursor((0, 5))
        await type_text(pilot, "@loop")
        assert app.rows()[0] == "agent/loop.py"
        await pilot.press("enter")
        await settle(pilot)
        assert app.prompt.value == "read @agent/loop.py  then stop"
        assert app.sent() == []


async def test_matched_characters_are_highlighted() -> None:
    app = HostApp(files=FILES)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "@loop")
        row = app.popup.get_option_at_index(0).prompt
        assert row.plain == "agent/loop.py"
        assert sorted((span.start, span.end) for span in row.spans) == [(6, 7), (7, 8), (8, 9), (9, 10)]
        match_style = app.popup.style_of("match")
        assert all(span.style == match_style for span in row.spans)
        assert match_style.bold and match_style.foreground is not None


async def test_row_colours_follow_a_light_theme() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.theme = "textual-light"
        await type_text(pilot, "/m")
        row = app.popup.get_option_at_index(0).prompt
        name, description = row.spans[0].style, row.spans[-1].style
        assert str(row).split()[1] == "plan"
        # Dark text on the light list: an "auto" colour would have resolved to white here.
        assert description.foreground.brightness < 0.5 and name.foreground.brightness < 0.6


async def test_files_set_later_fill_an_open_at_completion() -> None:
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "@read")
        assert app.rows() == []
        app.prompt.set_files(FILES)
        await settle(pilot)
        assert app.rows() == ["README.md"]


async def test_mentions_only_name_known_files() -> None:
    app = HostApp(files=FILES)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.value = "compare @agent/loop.py with @nope.py, @README.md. and @agent/loop.py again, mail "
        await type_text(pilot, "me@README.md")
        await pilot.press("enter")
        assert app.submitted[0].mentions == ["agent/loop.py", "README.md"]


async def test_fifty_thousand_paths_show_at_most_fifty_rows_and_the_best_first() -> None:
    # Every noise path matches "promptpy" as well as the target does and is shorter, but has a longer name.
    noise = [f"p{i % 97}/prompt_{i}.py" for i in range(49_990)]
    target = "tui/widgets/prompt.py"
    app = HostApp(files=[*noise, target, "prompt.md", "tests/tui/test_prompt.py"])
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "@")
        assert 0 < len(app.rows()) <= 50
        await type_text(pilot, "promptpy")
        assert len(app.rows()) <= 50
        assert app.rows()[0] == target
        await pilot.press("backspace", "backspace")
        await settle(pilot)
        assert len(app.rows()) == 50
        await pilot.press("tab")
        assert app.prompt.value.startswith("@") and app.prompt.value.endswith(" ")


# Scoring


def test_fuzzy_match_prefers_word_starts_and_the_file_name() -> None:
    assert fuzzy_match("xyz", "agent/loop.py") is None
    assert fuzzy_match("", "agent/loop.py") == (0.0, [])
    assert fuzzy_match("LOOP", "agent/loop.py") == (fuzzy_match("loop", "agent/loop.py"))
    near, _ = fuzzy_match("prompt", "tui/widgets/prompt.py")
    scattered, _ = fuzzy_match("prompt", "pkg/rom/p/templates.txt")
    assert near > scattered
    in_name, positions = fuzzy_match("loop", "loop/agent/loop.py")
    assert positions == [11, 12, 13, 14]


async def test_enter_in_the_same_burst_as_the_text_sends_all_of_it() -> None:
    # A terminal delivers "abc\r" in one read (typing fast, tmux send-keys): Enter must not
    # overtake the characters still waiting to be inserted.
    from textual import events

    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        for character in "abc":
            app.post_message(events.Key(character, character))
        app.post_message(events.Key("enter", "\r"))
        await pilot.pause()
        await pilot.pause()
        assert app.sent() == ["abc"]
        assert app.prompt.value == ""


async def test_enter_or_tab_in_a_burst_acts_on_the_text_not_on_a_list_left_open() -> None:
    """Issue 26 item 10: `/mode ask`⏎`/mode allow`⏎ typed fast left `/mode ` in the prompt: the
    Enter came before the list heard of " allow" and completed its `/mode` row over the text."""
    from textual import events

    def burst(app: HostApp, text: str) -> None:
        for character in text:
            if character in "\r\t":
                app.post_message(events.Key("enter" if character == "\r" else "tab", character))
            else:
                app.post_message(events.Key("space" if character == " " else character, character))

    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/mo")
        assert app.rows()  # the list is open for /mode, /model
        burst(app, "de allow\r/mode ask\r")
        await settle(pilot)
        await settle(pilot)
        assert app.sent() == ["/mode allow", "/mode ask"] and app.prompt.value == ""
        await type_text(pilot, "/mo")
        burst(app, "del\t")  # Tab completes what is typed by then: /model, not /mode
        await settle(pilot)
        assert app.prompt.value == "/model "


async def test_each_at_completion_asks_once_for_a_fresh_file_list() -> None:
    """Issue 26 item 6: the app lists the files again when an `@` completion starts; refilling the
    list with them asks for no other (no loop), a later `@` asks again."""
    class Asking(HostApp):
        asked = 0

        def on_prompt_input_files_wanted(self) -> None:
            self.asked += 1
            self.prompt.set_files([*FILES, "fresh.py"])

    app = Asking(files=FILES)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "@fre")
        assert app.asked == 1 and app.rows()[0] == "fresh.py"
        await type_text(pilot, "sh")
        await pilot.press("escape")
        await type_text(pilot, " and @")
        assert app.asked == 2


class LongCommandsApp(HostApp):
    def compose(self) -> ComposeResult:
        yield Static("conversation", id="log")
        yield PromptInput(commands=[("mode", "plan | ask | allow: how much the agent may do without asking, "
                                             "and a good deal more said about it"), *COMMANDS[1:]], id="prompt")


async def test_a_long_command_description_is_cut_to_one_row_with_an_ellipsis() -> None:
    # At 60 columns the description does not fit: it wrapped under the command's name (column 0),
    # and the list, sized one row a command, hid the commands below behind a scroll bar.
    app = LongCommandsApp()
    async with app.run_test(size=(60, 30)) as pilot:
        await type_text(pilot, "/")
        popup = app.popup
        assert popup.region.height == len(COMMANDS) + 2
        lines = [popup.render_line(y).text for y in range(popup.size.height)]
        assert lines[0].rstrip().endswith("…") and lines[0].lstrip().startswith("/mode")
        assert [line.split()[0] for line in lines] == ["/mode", "/model", "/help", "/clear"]
