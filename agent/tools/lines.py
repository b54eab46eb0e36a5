"""Line tools (seed 000): get_line_range, replace_lines, insert_at_line, delete_lines.

Line numbers are 1-based and inclusive. Content is lines of text, with or without a final
newline. A file keeps whether it ends with a newline.
"""

from __future__ import annotations

from pydantic import Field

from agent.diffing import FileChange
from agent.tools.base import EditArgs, EditTool, Tool, ToolArgs, ToolContext, ToolError
from agent.tools.textutil import content_lines, from_lines, line_count, number, text_size, to_lines, window


class LineRangeArgs(ToolArgs):
    file_path: str = Field(description="Path of the file.")
    start_line: int = Field(ge=1, description="First line (1-based).")
    end_line: int = Field(ge=1, description="Last line (inclusive).")


def _check_range(path: str, count: int, start: int, end: int) -> None:
    if end < start:
        raise ToolError(f"end_line {end} is before start_line {start}")
    if start > count:
        raise ToolError(f"start_line {start} is past the end of {path} ({line_count(count)})")
    if end > count:
        raise ToolError(f"end_line {end} is past the end of {path} ({line_count(count)})")


async def numbered_view(ctx: ToolContext, file_path: str, start: int | None,
                        end: int | None) -> tuple[str, str, int, str]:
    """Read a file, remember the read, and show start..end numbered; (path, text, line count, size)."""
    ws = ctx.workspace
    path = ws.normalize(file_path)
    text = await ws.read_text(path)
    ws.note_read(path, text)
    lines, _ = to_lines(text)
    if not lines:
        return path, f"{path} is empty.", 0, text_size(text)
    first = start or 1
    if first > len(lines):
        raise ToolError(f"start_line {first} is past the end of {path} ({line_count(len(lines))})")
    if end is not None and end < first:
        raise ToolError(f"end_line {end} is before start_line {first}")
    first, last, note = window(lines, first, end)
    parts = [number(lines[first - 1 : last], first)]
    if end is not None and end > len(lines):
        parts.append(f"[{path} ends at line {len(lines)}]")
    if note:
        parts.append(note)
    return path, "\n".join(parts), len(lines), text_size(text)


class GetLineRange(Tool):
    name = "get_line_range"
    description = "Show lines start_line..end_line of a file with their numbers."
    Args = LineRangeArgs

    async def run(self, args: LineRangeArgs, ctx: ToolContext) -> str:
        return (await numbered_view(ctx, args.file_path, args.start_line, args.end_line))[1]


async def _load(ctx: ToolContext, file_path: str) -> tuple[str, str, list[str], bool]:
    ws = ctx.workspace
    path = ws.normalize(file_path)
    old = await ws.load_for_edit(path)
    if old is None:
        raise ToolError(f"{path} does not exist; use write_file to create it")
    await ws.check_unread(path)  # line numbers taken before a change point at the wrong lines
    lines, trailing = to_lines(old)
    return path, old, lines, trailing


class ReplaceLinesArgs(EditArgs):
    file_path: str = Field(description="Path of the file.")
    start_line: int = Field(ge=1, description="First line to replace (1-based).")
    end_line: int = Field(ge=1, description="Last line to replace (inclusive).")
    new_content: str = Field(description="The lines that take their place ('' removes them).")


class ReplaceLines(EditTool):
    name = "replace_lines"
    description = "Replace lines start_line..end_line (inclusive) with new_content."
    Args = ReplaceLinesArgs
    examples = ({"file_path": "src/app.py", "start_line": 12, "end_line": 13,
                 "new_content": "    return total\n", "reason": "Return the sum"},)

    async def plan(self, args: ReplaceLinesArgs, ctx: ToolContext) -> list[FileChange]:
        path, old, lines, trailing = await _load(ctx, args.file_path)
        _check_range(path, len(lines), args.start_line, args.end_line)
        lines[args.start_line - 1 : args.end_line] = content_lines(args.new_content)
        reason = f"replace lines {args.start_line}-{args.end_line}"
        return [FileChange(path, old, from_lines(lines, trailing), reason)]


class InsertAtLineArgs(EditArgs):
    file_path: str = Field(description="Path of the file.")
    line: int = Field(ge=1, description="Insert before this line; the line count + 1 appends.")
    content: str = Field(description="The lines to insert.")


class InsertAtLine(EditTool):
    name = "insert_at_line"
    description = "Insert content before the given line (line = number of lines + 1 appends at the end)."
    Args = InsertAtLineArgs

    async def plan(self, args: InsertAtLineArgs, ctx: ToolContext) -> list[FileChange]:
        path, old, lines, trailing = await _load(ctx, args.file_path)
        if args.content == "":
            raise ToolError("content is empty: nothing to insert")
        if args.line > len(lines) + 1:
            raise ToolError(
                f"line {args.line} is past the end of {path} ({line_count(len(lines))}; "
                f"use line={len(lines) + 1} to append)"
            )
        lines[args.line - 1 : args.line - 1] = content_lines(args.content)
        if not old:
            trailing = True
        return [FileChange(path, old, from_lines(lines, trailing), f"insert at line {args.line}")]


class DeleteLinesArgs(EditArgs):
    file_path: str = Field(description="Path of the file.")
    start_line: int = Field(ge=1, description="First line to delete (1-based).")
    end_line: int = Field(ge=1, description="Last line to delete (inclusive).")


class DeleteLines(EditTool):
    name = "delete_lines"
    description = "Delete lines start_line..end_line (inclusive)."
    Args = DeleteLinesArgs

    async def plan(self, args: DeleteLinesArgs, ctx: ToolContext) -> list[FileChange]:
        path, old, lines, trailing = await _load(ctx, args.file_path)
        _check_range(path, len(lines), args.start_line, args.end_line)
        del lines[args.start_line - 1 : args.end_line]
        reason = f"delete lines {args.start_line}-{args.end_line}"
        return [FileChange(path, old, from_lines(lines, trailing), reason)]


LINE_TOOLS: list[type[Tool]] = [GetLineRange, ReplaceLines, InsertAtLine, DeleteLines]
