"""What users keep in files to make the agent theirs: custom slash commands (`commands`), Agent
Skills (`skills`, with the `load_skill` tool in `skilltool`) and the AGENTS.md hierarchy with its
`@path` imports (`instructions`). Front matter is read by `frontmatter`.

Workspace files come through agent/workspace_input's rules (`policy.COMMANDS`, `policy.SKILLS`,
`policy.INSTRUCTIONS`); the user's own come from the user config folder.
"""
