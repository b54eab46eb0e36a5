"""Finding a GitHub token without ever showing it.

Order: GITHUB_TOKEN, GH_TOKEN, `gh auth token` (when the gh CLI is installed), then the user
config. The token is held as a pydantic `SecretStr`, whose str() and repr() are masked, and only
the name of its source is ever reported. Public repositories can be read without a token.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import SecretStr

GH_TIMEOUT = 5.0


@dataclass(frozen=True)
class TokenSource:
    token: SecretStr | None
    source: str  # "GITHUB_TOKEN", "GH_TOKEN", "gh auth token", "config", or "none"

    @property
    def present(self) -> bool:
        return self.token is not None

    def describe(self) -> str:
        return f"token from {self.source}" if self.present else "no token (public read-only access)"


NO_TOKEN = TokenSource(None, "none")


def discover_token(
    env: Mapping[str, str] | None = None,
    config_token: str | None = None,
    gh_path: str | None = None,
    hostname: str = "github.com",
) -> TokenSource:
    """The first token found; `gh_path` None looks the gh CLI up on PATH."""
    env = os.environ if env is None else env
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        value = (env.get(name) or "").strip()
        if value:
            return TokenSource(SecretStr(value), name)
    from_gh = _gh_auth_token(gh_path or shutil.which("gh"), hostname, env)
    if from_gh:
        return TokenSource(SecretStr(from_gh), "gh auth token")
    if config_token and config_token.strip():
        return TokenSource(SecretStr(config_token.strip()), "config")
    return NO_TOKEN


def _gh_auth_token(gh: str | None, hostname: str, env: Mapping[str, str]) -> str | None:
    """`gh auth token`; None when gh is missing, logged out, slow or failing (never raises)."""
    if not gh:
        return None
    try:
        proc = subprocess.run(
            [gh, "auth", "token", "--hostname", hostname],
            capture_output=True,
            text=True,
            timeout=GH_TIMEOUT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    token = proc.stdout.strip()
    return token if proc.returncode == 0 and token and " " not in token else None


def redact(text: str, token: TokenSource | SecretStr | None) -> str:
    """Remove a token from text that may have echoed it (a last line of defence)."""
    secret = token.token if isinstance(token, TokenSource) else token
    value = secret.get_secret_value() if secret is not None else ""
    return text.replace(value, "***") if value else text
