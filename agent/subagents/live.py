"""Which session needs you: a live session's spend and its children's states, for the host's
listing (`coder-tui sessions --live`), and the lines that show them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.textsafe import line

if TYPE_CHECKING:
    from agent.session.core import AgentSession

MARKS = {"working": "◐", "waiting": "⏸", "done": "✓", "failed": "✗", "idle": "○"}


def spend_and_children(session: AgentSession) -> dict[str, Any]:
    """The session's tokens and cost so far, and each child's row (agent/subagents/family.py)."""
    family = session.ctx.extras.get("subagents")
    totals = session.totals
    return {"tokens": totals.prompt_tokens + totals.completion_tokens, "cost": totals.cost,
            "children": family.listing() if family is not None else []}


def spend(tokens: int, cost: float | None) -> str:
    return f"{tokens:,} tokens" + (f", ${cost:.4f}" if cost is not None else "")


def live_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Each live session of the host, then its children under it: what each is doing and its spend."""
    lines = []
    for row in rows:
        pending = row.get("pending_approvals") or []
        state = "waiting" if pending else "working" if row.get("running") else "idle"
        what = f"waiting for you: {len(pending)} approval(s)" if pending else state
        lines.append(f"{MARKS[state]} {row['session_id']}  {line(row['workspace'])}  {what}  "
                     f"({spend(row.get('tokens', 0), row.get('cost'))})")
        for child in row.get("children", []):
            status = child["status"]
            doing = {"waiting": f"waiting for you: {child['detail']}", "working": (
                f"working: {child['tool']} {child['detail']}".rstrip() if child.get("tool") else "working"),
                "failed": f"failed ({child['detail']})"}.get(status, status)
            lines.append(f"  └ {MARKS.get(status, '?')} {child['session_id']}  {child['agent']}: "
                         f"{line(child['task'])[:60]}  {line(doing)[:100]}  ({spend(child['tokens'], child['cost'])})")
    return lines
