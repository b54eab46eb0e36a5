"""Colour themes: validate theme files, load the built-ins and the user's, register them on an App.

A theme file is TOML (see themes/dark.toml): `name`, `dark`, the ten base colours Textual builds
its palette from (`boost` optional) and a `[variables]` table. Rules:

* Unknown top-level keys are rejected, so a typo does not silently do nothing.
* Colours are anything `textual.color.Color.parse` accepts (`#rrggbb`, `rgb(...)`, names).
* `[variables]` may set the app's own variables (`tui.theme_vars.APP_VARIABLES`, plain colours,
  because code such as the contrast checks parses them) and Textual's own design variables (the
  names Textual's ColorSystem generates, e.g. `footer-key-foreground`, `block-cursor-text-style`),
  whose values are checked with Textual's CSS parser, since a bad one would break every
  stylesheet at startup. Any other name is rejected.
* App variables a theme leaves out are derived from its base colours (`derive_app_variables`).
* A user theme may not take the name of a built-in theme (ours or Textual's): it is skipped with
  a warning rather than silently replacing a theme other people's bug reports refer to.

Nothing is parsed at import time, and the built-in themes load without pydantic (the app
registers them on the path to its first frame; the tests validate the files): user theme files
are validated by `tui.themefile` after the first frame.
"""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import paths
from tui.theme_vars import derive_app_variables

if TYPE_CHECKING:
    from textual.app import App
    from textual.theme import Theme

DEFAULT_THEME = "dark"
BUILTIN_THEME_NAMES = ("dark", "light", "high-contrast")
BASE_COLOURS = (
    "primary", "secondary", "accent", "foreground", "background",
    "surface", "panel", "warning", "error", "success",
)  # fmt: skip


def make_theme(data: dict[str, Any]) -> Theme:
    """A Textual theme from a theme file's data; app variables it leaves out are derived."""
    from textual.theme import Theme

    colours = {key: data.get(key) for key in (*BASE_COLOURS, "boost")}
    theme = Theme(name=data["name"], dark=data["dark"], **colours)
    theme.variables = {**derive_app_variables(theme), **data.get("variables", {})}
    return theme


def builtin_themes() -> list[Theme]:
    """The themes shipped in the `themes` package (their files are validated by the tests)."""
    return [builtin_theme(name) for name in BUILTIN_THEME_NAMES]


def builtin_theme(name: str) -> Theme:
    import themes  # the package of the theme files

    # A path beside the package, not importlib.resources: importing that costs the first frame 2 ms.
    path = Path(themes.__file__).with_name(f"{name}.toml")
    return make_theme(tomllib.loads(path.read_text("utf-8")))


def user_theme_dir() -> Path:
    """Where users put their own theme files."""
    return paths.config_dir() / "themes"


def _reserved_names() -> set[str]:
    from textual.theme import BUILTIN_THEMES

    return {*BUILTIN_THEME_NAMES, *BUILTIN_THEMES}


def _user_theme_files(user_dir: Path) -> tuple[list[Path], list[str]]:
    if not user_dir.exists():
        return [], []
    try:
        found = sorted(path for path in user_dir.glob("*.toml") if not path.name.startswith("."))
    except OSError as error:
        return [], [f"{user_dir}: cannot list theme files ({error.strerror or error})"]
    return found, []


def _load_user_theme(path: Path, taken: dict[str, str]) -> Theme:
    """Load one user theme file. Raises ValueError naming the problem (not the file)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read ({error})") from None
    from tui.themefile import parse_theme

    theme_file = parse_theme(text)
    owner = taken.get(theme_file.name)
    if owner is not None:
        raise ValueError(f"name {theme_file.name!r} is already used by {owner}; pick another name")
    return theme_file.to_theme()


def load_themes(user_dir: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Built-in themes plus every `*.toml` in `user_dir` (default: `user_theme_dir()`)."""
    themes, warnings = load_user_themes(user_dir)
    return builtin_themes() + themes, warnings


def load_user_themes(user_dir: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Every `*.toml` in `user_dir` (default: `user_theme_dir()`), validated.

    Returns the themes and one warning line per user file that was skipped, `file: problem`.
    A bad user file never raises.
    """
    themes: list[Theme] = []
    taken = {name: "a built-in theme" for name in _reserved_names()}
    theme_paths, warnings = _user_theme_files(user_theme_dir() if user_dir is None else user_dir)
    for path in theme_paths:
        try:
            theme = _load_user_theme(path, taken)
        except ValueError as error:
            warnings.append(f"{path.name}: {error}")
            continue
        taken[theme.name] = path.name
        themes.append(theme)
    return themes, warnings


def register_builtin_themes(app: App[Any]) -> None:
    for theme in builtin_themes():
        app.register_theme(theme)


def start_first_theme(app: App[Any], wanted: str | None) -> None:
    """Start `app` (constructed, not yet running) on `wanted` if it is built in here or in Textual,
    else on the default; only that one built-in theme is registered now, the others follow the
    first frame.

    Assigning `app.theme` would run Textual's theme watcher, which queues a re-parse of every
    stylesheet that also empties the parse cache: the first frame parsed the app's CSS three times.
    Nothing is parsed or mounted yet, so the watcher's other work is all there is to do here: the
    theme's classes, the ANSI colour filter and the stylesheet's variables.
    """
    from textual.app import App

    name = wanted if wanted in app.available_themes else None
    if name is None:
        name = wanted if wanted in BUILTIN_THEME_NAMES else DEFAULT_THEME
        app.register_theme(builtin_theme(name))
    app.set_reactive(App.theme, name)
    dark = app.current_theme.dark
    app.update_classes({f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark}, update=False)
    app._refresh_truecolor_filter(app.ansi_theme)
    app.stylesheet.set_variables(app.get_css_variables())


def register_themes(app: App[Any], user_dir: Path | None = None) -> list[str]:
    """Register the built-in and user themes on `app`; return the warnings from `load_themes`."""
    themes, warnings = load_themes(user_dir)
    for theme in themes:
        app.register_theme(theme)
    return warnings


def saved_theme() -> str | None:
    """The theme saved in the user config, read without loading (and validating) the whole config."""
    try:
        data = tomllib.loads(paths.user_config_file().read_text("utf-8"))
    except (OSError, ValueError):
        return None
    theme = data.get("theme")
    return theme if isinstance(theme, str) else None


async def apply_user_themes(app: App[Any], wanted: str | None) -> list[str]:
    """Register the user's theme files (validated in a thread), then switch to `wanted`.

    Returns what to tell the user: skipped files, or a `wanted` theme that does not exist.
    """
    themes, warnings = await asyncio.to_thread(load_user_themes)
    for theme in themes:
        app.register_theme(theme)
    messages = [f"theme {warning}" for warning in warnings]
    if wanted and wanted != app.theme:
        if wanted in app.available_themes:
            app.theme = wanted
        else:
            messages.append(f"no theme {wanted!r}; using {app.theme}")
    return messages


def remember_theme(app: Any, name: str) -> None:
    """Save the chosen theme in the user config (in a thread; a failure is shown, not raised)."""
    from agent.config import ConfigError, save_user_settings

    def save() -> None:
        try:
            save_user_settings({"theme": name})
        except (ConfigError, OSError) as exc:
            app.call_from_thread(app.notify, f"theme not saved: {exc}", severity="warning")

    asyncio.get_running_loop().run_in_executor(None, save)
