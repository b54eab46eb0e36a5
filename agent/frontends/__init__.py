"""Front ends of an agent session, one module each: `coder-tui run` (headless), `coder-tui room`,
`coder-tui serve` (SSE, seed 002) and `coder-tui acp` (Agent Client Protocol).

They sit on the core's public seam (`agent.target.open_target`, `agent.runner.AgentSession`,
`agent.consumer.EventHandler`); the core never imports them and they never import each other
(import-linter contracts in pyproject.toml, checked in CI).
"""
