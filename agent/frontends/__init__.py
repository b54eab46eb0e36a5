"""Front ends of an agent session, one module each: `coder-tui run` (headless), `coder-tui room`,
`coder-tui serve` (SSE, seed 002) and `coder-tui acp` (Agent Client Protocol), plus the small
commands without a session (knowledge: map/explore/tasks; commands: undo/sessions; profiles:
profiles/mcp). What several of them share: common (usage errors, config from flags), printing
(the JSONL and readable printers) and stdin (answers typed on stdin).

They sit on the core's public seam (`agent.session.target.open_target`, `agent.session.open.open_session`
with `SessionPorts` and `SessionOptions`, `agent.consumer.EventHandler`); the core never imports them and they never import each other
(import-linter contracts in pyproject.toml, checked in CI).
"""
