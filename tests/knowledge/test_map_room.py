"""The map of a live OCT room: what the room has, through the host, with symbols and summaries."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.knowledge.builder import MapBuilder
from agent.knowledge.prompt import map_section
from agent.workspaces.room import RoomWorkspace
from tests.knowledge.conftest import FILES
from tests.knowledge.test_map_build import llm_for
from tests.oct.conftest import make_client, node_host, oct_server, server_config, token_store  # noqa: F401

ROOM_FILES = {f"ws/{path}": text for path, text in FILES.items()}


async def test_room_map_has_symbols_and_summaries_and_is_not_summarised_twice(
        oct_server: Any, node_host: Any, make_client: Any, summary_llm: Any) -> None:  # noqa: F811
    room = await node_host.create(oct_server.url, files=ROOM_FILES)
    client = make_client(oct_server.url, room)
    await client.join()
    workspace = RoomWorkspace(client)
    try:
        builder = MapBuilder(workspace, llm_for(summary_llm))
        report = await asyncio.wait_for(builder.build(), 120)
        files = builder.store.files()
        assert sorted(files) == sorted(ROOM_FILES) and len(report.summarised) == len(ROOM_FILES)
        assert {"Circle", "total_area"} <= {s.name for s in files["ws/src/geometry.py"].defs}
        assert {"Polygon", "Perimeter"} <= {s.name for s in files["ws/engine/lib.rs"].defs}
        again = await asyncio.wait_for(builder.build(), 120)
        builder.close()
        assert again.planned == 0 and len(summary_llm.requests) == len(ROOM_FILES)
        section = await map_section(workspace, [{"role": "user", "content": "see ws/web/app.ts"}], 2000)
        assert section.split("\n")[2].startswith("ws/web/app.ts — Summary of ws/web/app.ts.")
    finally:
        await client.leave()
