"""Everything a workspace supplies, read by one set of rules: config, profiles, the prompt files
they name, MCP server definitions, AGENTS.md (and, as they come, commands, skills, hooks and
permission rules).

- `policy`: what an untrusted folder may contribute, field by field, for every kind of file
  (`KINDS`): text the model reads, yes; anything that picks an endpoint, a model, a key, a
  command, an MCP server, the sandbox or an approval, only once the user trusts the folder.
- `files`: every file a workspace file names is read inside the workspace: no absolute paths, no
  `..`, no links out, regular files only, size-capped.
- `trust`: the user's answer per folder, remembered with the folder's identity, revocable.
- `load`: the one call a session makes (`workspace_input(root, config)`): the profiles, the MCP
  servers it may start, the instructions, and one list of what was left out and why.

This package's modules below `load` import only base modules (config imports `policy`).
"""
