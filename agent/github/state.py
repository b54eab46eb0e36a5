"""What a GitHub session must remember to survive a crash or restart.

The repository, the ref it started from, the commit the unpublished edits apply to, the work
branch (and what we last published there) and the overlay itself. Never a token.
"""

from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.workspaces.textio import TextFormat


class OverlayFile(BaseModel):
    """One unpublished file: its text ("\\n" line ends) and how to encode it; text None deletes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | None
    encoding: str = "utf-8"
    newline: str = "\n"

    @property
    def deleted(self) -> bool:
        return self.text is None

    @property
    def format(self) -> TextFormat:
        return TextFormat(self.encoding, self.newline)

    @classmethod
    def of(cls, text: str | None, fmt: TextFormat | None = None) -> OverlayFile:
        fmt = fmt or TextFormat()
        return cls(text=text, encoding=fmt.encoding, newline=fmt.newline)

    def to_record(self) -> dict[str, str | None]:
        """The form kept in a session file. The text is base64 so that the session's secret
        masking (which rewrites anything shaped like a key) cannot alter file content."""
        data = None if self.text is None else base64.b64encode(self.text.encode("utf-8", "surrogatepass")).decode()
        return {"b64": data, "encoding": self.encoding, "newline": self.newline}

    @classmethod
    def from_record(cls, record: dict[str, str | None]) -> OverlayFile:
        data = record.get("b64")
        text = None if data is None else base64.b64decode(data).decode("utf-8", "surrogatepass")
        return cls(text=text, encoding=record.get("encoding") or "utf-8", newline=record.get("newline") or "\n")


class RepoPointer(BaseModel):
    """Where the session stands: everything but the overlay."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    repository: str  # OWNER/REPO
    api_url: str
    ref: str  # what the user asked for, or the default branch
    ref_is_branch: bool
    default_branch: str
    base_commit: str  # the commit the overlay's edits were made against
    work_branch: str
    published_head: str | None = None  # the last commit we published on the work branch
    pull_request: int | None = None


class GitHubState(RepoPointer):
    overlay: dict[str, OverlayFile] = Field(default_factory=dict)


class ClonePointer(BaseModel):
    """Where a `--clone` session stands: its worktree and work branch (the files are on disk)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    repository: str
    api_url: str
    clone_url: str
    ref: str
    default_branch: str
    worktree: str
    work_branch: str
    start_commit: str
    pull_request: int | None = None
