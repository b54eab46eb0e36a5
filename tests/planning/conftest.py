"""The OCT room fixtures (test server, Node host, clients) for the room's plan test."""

from tests.oct.conftest import make_client, node_host, oct_server, server_config, token_store  # noqa: F401
