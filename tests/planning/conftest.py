"""Fixtures borrowed for the structured workflow's front-end tests: the OCT room (test server,
Node host, clients) and the app against the scripted model."""

from tests.oct.conftest import make_client, node_host, oct_server, server_config, token_store  # noqa: F401
from tests.tui.conftest import make_app, workspace  # noqa: F401
