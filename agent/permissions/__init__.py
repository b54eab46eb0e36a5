"""Lasting permission rules (`[permissions]` allow / ask / deny) and hooks (`[[hooks.*]]`).

- `settings`: the config tables, validated (imported by agent.config).
- `rules`: one rule as users write it (`bash_exec(npm test:*)`), parsed and matched.
- `shell`: a command line cut into the simple commands rules are matched against.
- `engine`: the rules in force for a session and their verdict on a call (deny > ask > allow).
- `claude`: Claude Code's `.claude/settings.json` (its `permissions` and `hooks`) read as ours.
- `hooks`: running hook commands in the sandbox with the event on stdin.
- `store`: adding and removing rules in the user's config.toml or the workspace file.
"""
