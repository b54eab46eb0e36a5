"""What the agent knows about a repository over time: its map, exploration and scheduled tasks.

- `languages`, `symbols`: tree-sitter definitions and references per file;
- `rank`: files ranked by how much the rest of the code refers to them;
- `store`: the durable per-repository store (summaries keyed by content hash);
- `source`: what the map reads from each kind of workspace;
- `summarize`, `builder`: AI summaries and the build or refresh of a map;
- `view`: the map as text (system prompt section, tool answers);
- `explore`: the continuous exploration loop; `tasks`, `cron`: scheduled tasks.
"""
