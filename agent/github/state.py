"""What a GitHub session must remember to survive a crash or restart.

The repository, the ref it started from, the commit the unpublished edits apply to, the work
branch (and what we last published there) and the overlay itself. Never a token.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class GitHubState(BaseModel):
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
    # path -> full text in the file's own line-end style; None deletes the path
    overlay: dict[str, str | None] = Field(default_factory=dict)
    pull_request: int | None = None
