"""Sending what the user typed: to the agent (started, queued, routed to a running plan, or not
sent and why), and the model picker behind the palette's 'Change model'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui.app import CoderApp


def show_prompt(app: CoderApp, text: str, mentions: list[str]) -> None:
    transcript = app.query_one("#transcript", Transcript)
    transcript.user(text)
    if mentions:
        transcript.notice("attached: " + ", ".join(mentions), "dim")


def send_prompt(app: CoderApp, text: str, mentions: list[str]) -> None:
    outcome = app.bridge.submit(text, mentions)
    if outcome == "started" or (outcome == "queued" and app.bridge.room is not None):
        if app.bridge.room is None:
            show_prompt(app, text, mentions)
    elif outcome == "routed":
        show_prompt(app, text, mentions)
        app.notify("Sent to the running plan: a question is answered, a change replans the rest.", timeout=4)
    elif outcome == "host-queued":
        app.notify("Queued in the session host: it runs when the turns before it end (Esc stops and puts "
                   "it back in the input).", timeout=4)
    elif outcome == "queued":
        app.notify("Queued: sent when the current run ends (Esc stops the run and puts this back in the "
                   "input).", timeout=4)
    elif outcome == "failed" and (failure := app.bridge.failure) is not None:
        message, fix = failure
        app.notice(f"Not sent (Up recalls it): {message}. {fix}", "warning")
    else:
        app.notify("The agent is still loading; your prompt is sent as soon as it is ready.", timeout=4)


def run_command(app: CoderApp, text: str, name: str = "command") -> None:
    """A slash command in a worker: its dialogs wait without holding up the event loop."""
    from tui.commands import run_command as command

    app.run_worker(command(app, text), name=name, group="commands", exit_on_error=False)


async def ask_model(app: CoderApp) -> None:
    from tui.commands import run_command as command
    from tui.screens.ask import AskScreen

    current = app.bridge.session.model if app.bridge.session is not None else app.options.model
    answer = await app.push_screen_wait(AskScreen(
        "Model for this session (a litellm model string)", current or "",
        "e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1, ollama_chat/qwen2.5-coder"))
    if answer:
        await command(app, f"/model {answer}")


def restore_prompt(app: CoderApp, text: str) -> None:
    """A queued prompt a stop dropped: its text back in the input, before what is typed there now."""
    from textual.css.query import NoMatches

    from tui.widgets.prompt import PromptInput

    try:
        prompt = app.query_one("#prompt", PromptInput)
    except NoMatches:
        return
    typed = prompt.value
    prompt.value = text if not typed.strip() else f"{text}\n{typed}"
    app.notice("Not sent (a stop dropped it): it is back in the input.", "dim")
