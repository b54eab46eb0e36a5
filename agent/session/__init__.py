"""The session floor: the one place a session is built and driven.

`target` opens the folder, repository or room; `core` holds `AgentSession` (run, answer, stop,
undo, close) and `setup` what it assembles; `record` is the session's JSONL record; `github`,
`room` and `tasks` drive sessions for a GitHub repository, an OCT room and scheduled tasks.
"""
