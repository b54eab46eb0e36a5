"""File tools: read_file, list_dir, write_file, patch_file, multi_edit."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from agent.diffing import FileChange
from agent.tools.base import EditArgs, EditTool, Tool, ToolArgs, ToolContext, ToolError
from agent.tools.lines import numbered_view
from agent.tools.textutil import closest_lines, human_size, line_count, line_of, occurrences
from agent.workspaces.base import DirEntry, Workspace, WorkspaceError

MAX_DIR_ENTRIES = 500


class ReadFileArgs(ToolArgs):
    file_path: str = Field(description="Path of the file, relative to the workspace root.")
    start_line: int | None = Field(default=None, ge=1, description="First line to show (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line to show (inclusive).")


class ReadFile(Tool):
    name = "read_file"
    description = (
        "Read a text file. Lines come numbered (1-based); large files are shown in pages, with a note "
        "saying how to continue. Use start_line/end_line to read part of a file."
    )
    Args = ReadFileArgs
    examples = ({"file_path": "src/app.py"}, {"file_path": "src/app.py", "start_line": 120, "end_line": 180})

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> str:
        path, view, count, size = await numbered_view(ctx, args.file_path, args.start_line, args.end_line)
        freshen = ctx.extras.get("map_freshen")
        if freshen is not None:
            freshen.read(path)  # a stale map summary of it is refreshed in the background
        return f"{path} ({line_count(count)}, {size})\n{view}" if count else view


class ListDirArgs(ToolArgs):
    path: str = Field(default="", description="Folder relative to the workspace root ('' for the root).")


class ListDir(Tool):
    name = "list_dir"
    description = (
        "List a folder: sub-folders (with a trailing /) then files with sizes; links show their target "
        "and are not followed. Honours .gitignore."
    )
    Args = ListDirArgs

    async def run(self, args: ListDirArgs, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.normalize(args.path)
        entries = await ws.list_dir(path)
        if not entries:
            return f"{path or '.'} is empty."
        lines = [_entry_line(e) for e in entries[:MAX_DIR_ENTRIES]]
        if len(entries) > MAX_DIR_ENTRIES:
            lines.append(f"[{len(entries) - MAX_DIR_ENTRIES} more entries not shown]")
        return f"{path or '.'}/\n" + "\n".join(lines)


def _entry_line(entry: DirEntry) -> str:
    if entry.is_dir:
        return f"{entry.name}/"
    return f"{entry.name}  ({entry.note or human_size(entry.size)})"




class WriteFileArgs(EditArgs):
    file_path: str = Field(description="Path of the file to create or overwrite.")
    content: str = Field(description="The complete new content of the file.")


class WriteFile(EditTool):
    name = "write_file"
    description = (
        "Create a file or replace its whole content. Prefer patch_file or the line tools for changes "
        "to part of an existing file. An existing file keeps its encoding, line ends and final newline."
    )
    Args = WriteFileArgs
    examples = ({"file_path": "tests/test_util.py", "content": "from util import add\n\n\ndef test_add():\n"
                                                             "    assert add(1, 2) == 3\n",
                 "reason": "A test for add()"},)

    async def plan(self, args: WriteFileArgs, ctx: ToolContext) -> list[FileChange]:
        ws = ctx.workspace
        path = ws.normalize(args.file_path)
        if not path:
            raise ToolError("file_path is empty")
        if await ws.is_dir(path):
            raise ToolError(f"{path} is a folder")
        old = await ws.load_for_edit(path)
        if old is not None:
            await ws.check_unread(path)
        new = args.content
        if old:
            had_newline, has_newline = old.endswith("\n"), new.endswith("\n")
            if had_newline and new and not has_newline:
                new += "\n"
            elif not had_newline and has_newline:
                new = new[:-1]
        reason = "create file" if old is None else "rewrite file"
        return [FileChange(path, old, new, reason)]


class Patch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old_text: str = Field(description="Exact text to replace; must occur exactly once in the file.")
    new_text: str = Field(description="Replacement text.")


class PatchFileArgs(EditArgs):
    file_path: str = Field(description="Path of the file to change.")
    patches: list[Patch] = Field(min_length=1, description="Replacements applied in order, all or none.")


async def patched(ws: Workspace, file_path: str, patches: list[Patch], base: str | None = None) -> FileChange:
    """Apply patches to a file's text in memory (all or nothing) and return the change."""
    path = ws.normalize(file_path)
    old = await ws.load_for_edit(path)
    if old is None:
        raise ToolError(f"{path} does not exist; use write_file to create it")
    # Matching a long old_text (and finding the closest lines when it is absent) is CPU work:
    # a thread keeps the event loop free to hear Ctrl+C.
    text = await asyncio.to_thread(_apply_patches, path, old if base is None else base, patches)
    return FileChange(path, old, text, "patch")


def _apply_patches(path: str, text: str, patches: list[Patch]) -> str:
    for index, patch in enumerate(patches, start=1):
        text = _apply_patch(path, text, patch, index, len(patches))
    return text


def _apply_patch(path: str, text: str, patch: Patch, index: int, total: int) -> str:
    which = f"patch {index} of {total}" if total > 1 else "the patch"
    if patch.old_text == "":
        raise ToolError(f"{which}: old_text is empty; use insert_at_line or write_file to add text")
    found = occurrences(text, patch.old_text)
    if len(found) == 1:
        start = found[0]
        return text[:start] + patch.new_text + text[start + len(patch.old_text) :]
    if len(found) > 1:
        lines = ", ".join(str(line_of(text, offset)) for offset in found[:10])
        raise ToolError(
            f"{which}: old_text occurs {len(found)} times in {path} (at lines {lines}); include more "
            "surrounding lines so that it matches exactly once. Nothing was changed."
        )
    closest = closest_lines(text, patch.old_text)
    raise ToolError(
        f"{which}: old_text was not found in {path}. Nothing was changed. The closest actual lines are:\n"
        f"{closest}\nCopy old_text exactly from the file (read_file shows it), including indentation."
    )


class PatchFile(EditTool):
    name = "patch_file"
    description = (
        "Replace exact text in one file. Each patch's old_text must match exactly once; patches apply "
        "in order and all succeed or nothing changes. On a mismatch the closest actual lines are shown."
    )
    Args = PatchFileArgs
    examples = ({"file_path": "src/util.py", "patches": [{"old_text": "def calc(x, y):",
                                                          "new_text": "def calculate_sum(x, y):"}],
                 "reason": "A name that says what it does"},)

    async def plan(self, args: PatchFileArgs, ctx: ToolContext) -> list[FileChange]:
        return [await patched(ctx.workspace, args.file_path, args.patches)]


class FileEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="Path of the file to change.")
    patches: list[Patch] = Field(min_length=1, description="Replacements for this file, in order.")


class MultiEditArgs(EditArgs):
    edits: list[FileEdit] = Field(min_length=1, description="Patches for several files: all files or none.")


class MultiEdit(EditTool):
    name = "multi_edit"
    description = "Patch several files in one step; if any patch fails, no file changes."
    Args = MultiEditArgs

    async def plan(self, args: MultiEditArgs, ctx: ToolContext) -> list[FileChange]:
        changes: dict[str, FileChange] = {}
        for number_, edit in enumerate(args.edits, start=1):
            path = ctx.workspace.normalize(edit.file_path)
            prior = changes.get(path)
            try:
                change = await patched(ctx.workspace, path, edit.patches, prior.new if prior else None)
            except (ToolError, WorkspaceError) as exc:
                raise ToolError(f"edit {number_} ({path}): {exc} No file was changed.") from None
            changes[path] = change
        return list(changes.values())


FILE_TOOLS: list[type[Tool]] = [ReadFile, ListDir, WriteFile, PatchFile, MultiEdit]
