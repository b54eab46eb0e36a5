"""Validating theme files (pydantic): only user themes need it at run time.

The built-in theme files are validated by the tests, so the app loads them on the path to its
first frame without importing pydantic; user theme files go through `parse_theme` after it.
The rules are in `tui/themes.py`'s docstring.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from tui.theme_vars import APP_VARIABLES
from tui.themes import BASE_COLOURS, make_theme

if TYPE_CHECKING:
    from textual.theme import Theme

# Names end up in a CSS class (`-theme-<name>`) and on the command line: keep them plain.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
# A variable's value is pasted into stylesheets as tokens; these would end or nest a declaration.
_CSS_BREAKERS = re.compile(r"[;{}$\n\r]")


def _colour(value: str) -> str:
    from textual.color import Color, ColorParseError

    try:
        Color.parse(value)
    except ColorParseError:
        problem = f"invalid colour {value!r}"
        raise PydanticCustomError("colour", "{problem}", {"problem": problem}) from None
    return value.strip()


@cache
def _textual_variables() -> frozenset[str]:
    """Names of Textual's own design variables (those its ColorSystem generates)."""
    from textual.design import ColorSystem

    return frozenset(ColorSystem(primary="#000000").generate())


def _check_textual_value(key: str, value: str) -> None:
    """Raise ValueError if `value` is not valid CSS for Textual variable `key`."""
    from textual.css.parse import parse_declarations

    if _CSS_BREAKERS.search(value) or not value.strip():
        raise ValueError(f"invalid value {value!r}")
    # Textual's style variables (`*-style`) hold text styles; every other one holds a colour.
    prop = "text-style" if key.endswith("-style") else "color"
    try:
        parse_declarations(f"{prop}: {value};", ("theme", key))
    except Exception:  # the parser raises several error types, all meaning "not valid here"
        raise ValueError(f"invalid {prop} {value!r}") from None


def _variable_error(key: str, problem: str) -> PydanticCustomError:
    # The key travels in the context so the warning can name `variables.<key>`.
    return PydanticCustomError("theme_variable", "{problem}", {"key": key, "problem": problem})


class ThemeFile(BaseModel):
    """One theme file, validated. `to_theme()` turns it into a Textual `Theme`."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    dark: StrictBool
    primary: str
    secondary: str
    accent: str
    foreground: str
    background: str
    surface: str
    panel: str
    warning: str
    error: str
    success: str
    boost: str | None = None
    variables: dict[str, str] = {}

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not a usable name (letters, digits, - and _; max 40)")
        return value

    @field_validator(*BASE_COLOURS, "boost")
    @classmethod
    def _base_colour(cls, value: str | None) -> str | None:
        return None if value is None else _colour(value)

    @field_validator("variables")
    @classmethod
    def _variables(cls, value: dict[str, str]) -> dict[str, str]:
        checked: dict[str, str] = {}
        for key, item in value.items():
            if key in APP_VARIABLES:
                try:
                    checked[key] = _colour(item)
                except PydanticCustomError:
                    raise _variable_error(key, f"invalid colour {item!r}") from None
            elif key in _textual_variables():
                try:
                    _check_textual_value(key, item)
                except ValueError as error:
                    raise _variable_error(key, str(error)) from None
                checked[key] = item.strip()
            else:
                raise _variable_error(key, "unknown variable (not an app or Textual variable)")
        return checked

    def to_theme(self) -> Theme:
        """The Textual theme, with any app variable the file left out derived from its colours."""
        return make_theme(self.model_dump())


def _describe_error(error: dict[str, Any]) -> str:
    """One validation error as `where: what`, in the words a theme author would use."""
    where = ".".join(str(part) for part in error["loc"]) or "file"
    context = error.get("ctx") or {}
    if "key" in context:
        where = f"{where}.{context['key']}"
    kind = error["type"]
    if kind == "missing":
        return f"{where}: missing"
    if kind == "extra_forbidden":
        return f"{where}: unknown key"
    if kind == "value_error":
        return f"{where}: {context['error']}"
    return f"{where}: {error['msg']}"


def parse_theme(text: str) -> ThemeFile:
    """Parse and validate theme-file text. Raises ValueError with a readable one-line message."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"invalid TOML: {error}") from None
    try:
        return ThemeFile.model_validate(data)
    except ValidationError as error:
        raise ValueError("; ".join(_describe_error(e) for e in error.errors())) from None
