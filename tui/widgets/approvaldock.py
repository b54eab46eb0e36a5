"""Docking an approval in the app's main column and waiting for the user's answer.

The panel goes under the conversation (the model's reason for the call, streamed just before,
stays in view) in place of the prompt, and takes the focus; once answered (or when the run is
stopped meanwhile) it goes away, and the prompt, with whatever the user had typed, comes back
with the focus.
"""

from __future__ import annotations

from typing import Any

from textual.app import App

from agent.approval import ApprovalRequest, Decision
from tui.widgets.approvalpanel import ApprovalPanel


async def dock(app: App[Any], request: ApprovalRequest) -> Decision:
    """Show `request` in the main column of `app` and return the user's decision."""
    screen = app.screen_stack[0]  # the main screen, even under a dialog the user has open
    main = screen.query_one("#main")
    prompt = screen.query_one("#prompt")
    panel = ApprovalPanel(request)
    anchor = screen.query("#transcript")
    await main.mount(panel, after=anchor.first() if anchor else None, before=None if anchor else prompt)
    prompt.styles.display = "none"
    screen.remove_class("-side-open")  # a narrow screen showing the side panel shows the chat again
    for transcript in anchor:  # the last answer (why the agent asks) right above the panel
        transcript.call_after_refresh(transcript.scroll_end, animate=False)
    try:
        return await panel.wait()
    finally:
        prompt.styles.clear_rule("display")
        await panel.remove()
        if not screen.query(ApprovalPanel):
            prompt.focus()
