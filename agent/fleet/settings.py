"""Where the fleet's broker is and how long its jobs may take.

One URL names the Redis server that is both Celery's broker and its result backend, and that
holds the batches: `CODER_TUI_FLEET_BROKER`, else `[fleet] broker` in the user's config.toml
(never a workspace's: only your own config chooses it). A password in the URL is a secret:
registered for masking, and shown as `***` in every line we print.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.config import ConfigError, FleetSettings, read_settings
from agent import paths
from agent.secrets import register

if TYPE_CHECKING:
    from redis import Redis

BROKER_VAR = "CODER_TUI_FLEET_BROKER"
MARGIN = 600.0  # the default visibility timeout is a job's limit plus this
LEASE = 15.0  # seconds a running job's lease lives unless its worker renews it (every LEASE / 3)
HINT = (f"start Redis (see docs/fleet.md) and set {BROKER_VAR}=redis://HOST:6379/0, "
        "or `broker = \"redis://HOST:6379/0\"` under [fleet] in your config.toml")


class FleetError(Exception):
    """What went wrong, said to the user in one line (a usage or broker problem)."""


@dataclass(frozen=True)
class FleetConfig:
    broker: str
    job_timeout: float
    visibility_timeout: float
    approval_wait: float
    restore_interval: float

    @property
    def shown(self) -> str:
        """The broker URL without its password."""
        return shown_url(self.broker)


def shown_url(url: str) -> str:
    return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", url)


def broker_configured(environ: dict[str, str] | None = None) -> bool:
    """Whether this user named a broker (the variable, or [fleet] broker in their config.toml)."""
    environ = dict(os.environ) if environ is None else environ
    if environ.get(BROKER_VAR):
        return True
    try:
        return bool(read_settings(paths.user_config_file()).fleet.broker)
    except ConfigError:
        return True  # a broken config: fleet_config says what is wrong with it


def fleet_config(environ: dict[str, str] | None = None) -> FleetConfig:
    """The fleet settings of this user (FleetError when there is no broker or it is not Redis)."""
    environ = dict(os.environ) if environ is None else environ
    try:
        table = read_settings(paths.user_config_file()).fleet
    except ConfigError as exc:
        raise FleetError(str(exc)) from None
    broker = environ.get(BROKER_VAR) or table.broker
    if not broker:
        raise FleetError(f"no fleet broker is configured: {HINT}")
    if not broker.startswith(("redis://", "rediss://", "unix://")):
        raise FleetError(f"the fleet broker must be a Redis URL (redis://, rediss:// or unix://), "
                         f"not {shown_url(broker)!r}")
    password = re.search(r"//[^:/@]*:([^@]*)@", broker)
    if password and password.group(1):
        register(password.group(1))
    return _limits(broker, table)


def _limits(broker: str, table: FleetSettings) -> FleetConfig:
    visibility = table.visibility_timeout or table.job_timeout + MARGIN
    if visibility <= table.job_timeout:
        raise FleetError(f"[fleet] visibility_timeout ({visibility:g} s) must be longer than job_timeout "
                         f"({table.job_timeout:g} s): the broker would hand a running job to a second worker")
    if visibility <= LEASE:
        raise FleetError(f"[fleet] visibility_timeout must be longer than {LEASE:g} s")
    return FleetConfig(broker, table.job_timeout, visibility, table.approval_wait, table.restore_interval)


def redis_client(config: FleetConfig) -> Redis:
    """A Redis client for the batches (redis-py: installed with celery[redis])."""
    import redis

    return redis.Redis.from_url(config.broker, decode_responses=True, socket_connect_timeout=5,
                                health_check_interval=30)
