"""Errors from GitHub work, each phrased for the person (and model) who has to act on it.

They are `WorkspaceError`s, so tools and the loop show them like any other workspace refusal.
No message ever contains a token.
"""

from __future__ import annotations

import datetime as dt

from agent.workspaces.base import WorkspaceError


class GitHubError(WorkspaceError):
    """A GitHub request failed; the message says what and what to do."""


class InvalidRepoSpec(GitHubError, ValueError):
    """The repository argument is not OWNER/REPO[@REF] or a github.com URL."""


class RepoNotFound(GitHubError):
    """The repository (or ref) does not exist, or is private and invisible to this token."""


class NotFound(GitHubError):
    """An object inside a repository (ref, blob, issue) does not exist."""


class PermissionDenied(GitHubError):
    """The token may not do this (403), or the credentials were rejected (401)."""


class TokenRequired(PermissionDenied):
    """A write was attempted without any token."""


class RateLimited(GitHubError):
    """The API rate limit is exhausted and its reset is too far away to wait for."""

    def __init__(self, message: str, reset_at: dt.datetime) -> None:
        super().__init__(message)
        self.reset_at = reset_at


class PublishConflict(GitHubError):
    """The work branch moved and its changes overlap the unpublished ones; nothing was published."""


class BinaryFile(GitHubError):
    """A file whose bytes are not UTF-8 text; it can be listed but not read or edited as text."""
