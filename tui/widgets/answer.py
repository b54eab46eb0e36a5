"""An answer from the model: Markdown, streamed in coalesced chunks.

Kept apart from the transcript so that Textual's Markdown (and markdown-it) load with the first
answer, not on the path to the app's first frame.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown

FLUSH_INTERVAL = 0.05  # seconds between Markdown appends while streaming
# A long answer continues in a new Markdown widget after this many characters (at a paragraph
# break outside code), so each append re-lays out a bounded number of blocks, not the whole answer.
SEAL_AFTER = 3000


class AssistantMessage(Markdown):
    """An answer; streamed text is buffered and appended in coalesced chunks."""

    DEFAULT_CSS = """
    AssistantMessage {
        margin: 1 0 0 0;
        padding: 0;
        background: transparent;
        &.-continued { margin-top: 0; }
        & MarkdownFence { margin: 1 0; }
        /* Textual centres a level-1 heading; a chat answer's headings start at its left edge, as they
           do once the turn moves into the history (tui/widgets/historyrender.py). */
        & MarkdownH1 { content-align: left middle; }
    }
    """

    def __init__(self, text: str = "", continued: bool = False) -> None:
        super().__init__(text, classes="-continued" if continued else None)
        self.pending: list[str] = []
        self.streaming = not text
        self._appending = False
        self._mounted = False  # Markdown's own mount renders its initial text, wiping earlier appends
        self.written = text

    def on_mount(self) -> None:
        # Handlers run subclass first: Markdown's own mount (which renders the initial text, and
        # would wipe what an append put there meanwhile) is still to come; flushing waits for it.
        self.call_later(setattr, self, "_mounted", True)

    @property
    def drawn(self) -> bool:
        """Everything written so far has been appended to the Markdown."""
        return not self.pending and not self._appending

    def feed(self, text: str) -> str | None:
        """Buffer streamed text; returns what belongs in a continuation widget, if it is time for one."""
        before = len(self.written)
        self.written += text
        cut = self._break_after(before) if len(self.written) > SEAL_AFTER else -1
        if cut < 0:
            self.pending.append(text)
            return None
        keep = cut + 2 - before
        self.written = self.written[: cut + 2]
        if keep > 0:
            self.pending.append(text[:keep])
        return text[max(keep, 0):]

    def _break_after(self, before: int) -> int:
        """The first paragraph break (outside code) in the new text past SEAL_AFTER, or -1."""
        written = self.written
        pos = written.rfind("\n", 0, max(before - 1, SEAL_AFTER)) + 1  # a line start: fences begin there
        fences = written.count("```", 0, pos)
        while (cut := written.find("\n\n", pos)) >= 0:
            fences += written.count("```", pos, cut)
            if fences % 2 == 0 and cut >= before - 1:  # never cut text that was already shown
                return cut
            pos = cut + 1
        return -1

    def drop_pending(self) -> None:
        """Forget what is buffered and not drawn yet (the user stopped the answer)."""
        if self.pending:
            self.written = self.written[: len(self.written) - sum(map(len, self.pending))]
            self.pending = []
        self.streaming = False

    async def flush(self) -> None:
        """Append what has been buffered, unless an append is still rendering."""
        if self._appending or not self.pending or not self._mounted:
            return
        chunk, self.pending = "".join(self.pending), []
        self._appending = True
        # Shielded: the transcript's flush timer is stopped (its task cancelled) when the answer
        # ends, often while this append renders (a short answer ends right after its first
        # flush, the more so on a busy machine). A cancelled append has already taken the text
        # but never draws it, and the answer stayed blank on screen (issue 26 item 0).
        await asyncio.shield(self._append(chunk))

    async def _append(self, chunk: str) -> None:
        try:
            await self.append(chunk)
        finally:
            self._appending = False

    async def drain(self) -> None:
        """Append everything still buffered (the answer is complete)."""
        while (self.pending or self._appending) and self.is_attached:  # removed meanwhile: nothing to draw
            if self._appending or not self._mounted:
                await asyncio.sleep(FLUSH_INTERVAL / 5)
            else:
                await self.flush()
