"""search_code and get_project_info."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError

MANIFESTS = {
    "pyproject.toml": "Python project", "setup.py": "Python project", "requirements.txt": "Python",
    "package.json": "Node.js project", "Cargo.toml": "Rust crate", "go.mod": "Go module",
    "pom.xml": "Maven project", "build.gradle": "Gradle project", "Gemfile": "Ruby project",
    "composer.json": "PHP project", "CMakeLists.txt": "CMake project", "Makefile": "Makefile",
    "Dockerfile": "Docker image",
}


class SearchCodeArgs(ToolArgs):
    pattern: str = Field(description="Regular expression (Python syntax) or literal text to find.")
    path: str = Field(default="", description="Folder or file to search ('' for the whole workspace).")
    max_results: int = Field(default=100, ge=1, le=1000, description="Most matching lines to return.")


def compile_pattern(pattern: str) -> tuple[re.Pattern[str], str | None]:
    """A regex when the pattern is one, else the literal text (with a note saying so)."""
    if not pattern:
        raise ToolError("pattern is empty")
    try:
        return re.compile(pattern), None
    except re.error as exc:
        note = f"[pattern is not a valid regular expression ({exc}); searched for it as literal text]"
        return re.compile(re.escape(pattern)), note


class SearchCode(Tool):
    name = "search_code"
    description = (
        "Search file contents for a regular expression or literal text; returns file:line:text for each "
        "matching line. Honours .gitignore; skips binary files."
    )
    Args = SearchCodeArgs
    examples = ({"pattern": "def load_config"}, {"pattern": r"TODO|FIXME", "path": "src"})

    async def run(self, args: SearchCodeArgs, ctx: ToolContext) -> str:
        regex, note = compile_pattern(args.pattern)
        path = ctx.workspace.normalize(args.path)
        progress = ctx.extras.get("progress")
        result = await ctx.workspace.search(regex, path, args.max_results, progress)
        literal = re.escape(args.pattern)
        if not result.hits and note is None and regex.pattern != literal:
            fallback = await ctx.workspace.search(re.compile(literal), path, args.max_results, progress)
            if fallback.hits:
                result = fallback
                note = "[no matches as a regular expression; these lines contain it as literal text]"
        lines = [note] if note else []
        for hit in result.hits:
            text = hit.text if len(hit.text) <= 300 else hit.text[:300] + " …"
            lines.append(f"{hit.path}:{hit.line}:{text}")
        if not result.hits:
            lines.append(f"no matches in {result.files_searched} file(s)")
        if result.truncated:
            lines.append(f"[stopped at max_results={args.max_results}; narrow the pattern or path for more]")
        lines.extend(result.notes)
        return "\n".join(lines)


class NoArgs(ToolArgs):
    pass


class GetProjectInfo(Tool):
    name = "get_project_info"
    description = "Facts about the workspace: location, git state, project type, languages, top-level entries."
    Args = NoArgs

    async def run(self, args: NoArgs, ctx: ToolContext) -> str:
        ws = ctx.workspace
        facts = await ws.read_facts()
        files = await ws.list_files("")
        top = await ws.list_dir("")
        kinds = sorted({MANIFESTS[e.name] for e in top if e.name in MANIFESTS})
        languages = Counter(PurePosixPath(f).suffix for f in files if PurePosixPath(f).suffix)
        lines = [f"{key}: {value}" for key, value in facts.items()]
        lines.append(f"files (not ignored): {len(files)}")
        if kinds:
            lines.append("project: " + ", ".join(kinds))
        if languages:
            lines.append("file types: " + ", ".join(f"{ext} ×{n}" for ext, n in languages.most_common(8)))
        lines.append("top level: " + ", ".join(e.name + ("/" if e.is_dir else "") for e in top[:60]))
        for doc in ("AGENTS.md", "README.md"):
            if any(e.name == doc for e in top):
                lines.append(f"{doc} present (read_file {doc})")
        return "\n".join(lines)


SEARCH_TOOLS: list[type[Tool]] = [SearchCode, GetProjectInfo]
