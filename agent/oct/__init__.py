"""Open Collaboration Tools: a Python peer that joins live OCT rooms as a guest.

Protocol: `codec` (msgpack as msgpackr writes it), `messages` (wire envelopes and typed params),
`crypto` (RSA-OAEP + AES-CBC per message, gzip), `api` and `login` (HTTP API, login, token
cache), `transport` (Socket.IO with reconnects), `connection` (requests, notifications,
broadcasts, peer registry). `client.RoomClient` puts them together: joining, status
(`status.RoomStatus`), following the host, the host's files, chat.

Documents: `documents` (the shared Yjs document and awareness over `sync/*`), `positions` (sticky
positions), `anchors` (edits computed from what the model saw), `textpos` (units).

The agent: `triggers` and `watcher` (`@name` prompts), `presence` (our cursor where we work), `windowing`, `roomagent`
(answers triggers with an AgentSession), `headless` (`coder-tui room`). The workspace the tools
see is `agent.workspaces.room.RoomWorkspace`. Nothing here imports the UI.
"""
