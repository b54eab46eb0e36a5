"""Themes: the built-in files validate, render and stay readable; user files load or warn."""

from __future__ import annotations

import itertools
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.color import Color, rgb_to_lab
from textual.widgets import Static

from agent import paths
from tests.conftest import ROOT
from tui.theme_vars import APP_VARIABLES, derive_app_variables
from tui.themefile import ThemeFile
from tui.themes import (
    BUILTIN_THEME_NAMES,
    DEFAULT_THEME,
    builtin_themes,
    load_themes,
    register_themes,
    user_theme_dir,
)

# ---------------------------------------------------------------- helpers


def builtin_data(name: str) -> dict:
    return tomllib.loads(files("themes").joinpath(f"{name}.toml").read_text("utf-8"))


def to_toml(data: dict) -> str:
    """Just enough TOML for theme files (strings, bools, one table)."""
    def value(item: object) -> str:
        return ("true" if item else "false") if isinstance(item, bool) else f'"{item}"'

    lines = [f"{key} = {value(item)}" for key, item in data.items() if not isinstance(item, dict)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines += [f"[{key}]", *(f'"{k}" = {value(v)}' for k, v in table.items())]
    return "\n".join(lines) + "\n"


def user_theme(name: str = "mine", **changes: object) -> dict:
    """A valid user theme: the dark built-in, renamed, with `changes` applied."""
    data = builtin_data("dark") | {"name": name}
    data.update(changes)
    return data


def luminance(colour: str) -> float:
    """WCAG 2 relative luminance."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    rgb = Color.parse(colour)
    return 0.2126 * channel(rgb.r) + 0.7152 * channel(rgb.g) + 0.0722 * channel(rgb.b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def distance(a: str, b: str) -> float:
    """CIE76 colour difference in Lab: ~2 is just noticeable, 20+ is clearly another colour."""
    la, lb = rgb_to_lab(Color.parse(a)), rgb_to_lab(Color.parse(b))
    return ((la.L - lb.L) ** 2 + (la.a - lb.a) ** 2 + (la.b - lb.b) ** 2) ** 0.5


class Swatches(App[None]):
    """One Static per app variable, each painting its background with that variable."""

    CSS = "\n".join(f"#v-{name} {{ background: ${name}; height: 1; }}" for name in APP_VARIABLES)

    def __init__(self, theme: str, user_dir: Path) -> None:
        super().__init__()
        self.warnings = register_themes(self, user_dir)
        self.theme = theme

    def compose(self) -> ComposeResult:
        for name in APP_VARIABLES:
            yield Static(name, id=f"v-{name}")


def painted(app: App[None]) -> dict[str, Color]:
    return {name: app.query_one(f"#v-{name}", Static).styles.background for name in APP_VARIABLES}


# ---------------------------------------------------------------- built-ins


def test_builtin_themes_load_and_validate() -> None:
    themes = builtin_themes()
    assert [theme.name for theme in themes] == ["dark", "light", "high-contrast"]
    assert DEFAULT_THEME in BUILTIN_THEME_NAMES
    assert [theme.dark for theme in themes] == [True, False, True]
    for theme in themes:
        assert set(APP_VARIABLES) <= set(theme.variables)


@pytest.mark.parametrize("name", BUILTIN_THEME_NAMES)
def test_builtin_files_set_every_app_variable_themselves(name: str) -> None:
    # Derived fallbacks are for user themes; the shipped ones are picked by hand.
    data = builtin_data(name)
    assert data["name"] == name
    assert set(APP_VARIABLES) <= set(data["variables"])
    ThemeFile.model_validate(data)


@pytest.mark.parametrize("name", BUILTIN_THEME_NAMES)
async def test_builtin_theme_registers_and_renders(name: str, tmp_path: Path) -> None:
    app = Swatches(name, tmp_path)
    async with app.run_test(size=(40, len(APP_VARIABLES) + 2)) as pilot:
        await pilot.pause()
        assert app.warnings == []
        assert app.current_theme.name == name
        expected = {key: Color.parse(builtin_data(name)["variables"][key]) for key in APP_VARIABLES}
        assert painted(app) == expected


# ---------------------------------------------------------------- readability

MODES = ("mode-plan", "mode-ask", "mode-allow")
ALL = [(name, theme) for name, theme in zip(BUILTIN_THEME_NAMES, builtin_themes(), strict=True)]


def minimum_ratio(name: str) -> float:
    return 7.0 if name == "high-contrast" else 4.5  # WCAG AAA for high contrast, AA otherwise


@pytest.mark.parametrize(("name", "theme"), ALL, ids=BUILTIN_THEME_NAMES)
def test_text_is_readable_on_every_background(name: str, theme) -> None:
    v = theme.variables
    pairs = {
        "text on background": (theme.foreground, theme.background),
        "text on surface": (theme.foreground, theme.surface),
        "text on panel": (theme.foreground, theme.panel),
        "code on added line": (theme.foreground, v["diff-added-bg"]),
        "code on removed line": (theme.foreground, v["diff-removed-bg"]),
        "code on rejected hunk": (theme.foreground, v["diff-rejected-bg"]),
        "+ on added line": (v["diff-added-fg"], v["diff-added-bg"]),
        "- on removed line": (v["diff-removed-fg"], v["diff-removed-bg"]),
        "line numbers": (v["diff-line-number"], theme.background),
        "hunk headers": (v["diff-hunk-header"], theme.background),
        **{f"{mode} badge": (v["mode-badge-text"], v[mode]) for mode in MODES},
        **{f"presence-{i}": (v[f"presence-{i}"], theme.background) for i in range(1, 9)},
    }
    ratios = {what: round(contrast(*pair), 2) for what, pair in pairs.items()}
    low = {what: ratio for what, ratio in ratios.items() if ratio < minimum_ratio(name)}
    assert low == {}, f"{name}: contrast below {minimum_ratio(name)}: {low}"


@pytest.mark.parametrize(("name", "theme"), ALL, ids=BUILTIN_THEME_NAMES)
def test_signal_colours_are_distinguishable(name: str, theme) -> None:
    v = theme.variables
    for a, b in itertools.combinations(MODES, 2):
        assert distance(v[a], v[b]) >= 40, f"{name}: {a} and {b} look alike"
    for a, b in itertools.combinations([f"presence-{i}" for i in range(1, 9)], 2):
        assert distance(v[a], v[b]) >= 20, f"{name}: {a} and {b} look alike"
    # Diff tints stay subtle (code must stay readable, checked above) but must be visible.
    assert distance(v["diff-added-bg"], theme.background) >= 8
    assert distance(v["diff-removed-bg"], theme.background) >= 8
    assert distance(v["diff-added-bg"], v["diff-removed-bg"]) >= 15


# ---------------------------------------------------------------- user themes


def test_user_theme_dir_is_under_the_config_dir() -> None:
    assert user_theme_dir() == paths.config_dir() / "themes"


async def test_user_theme_is_loaded_and_selectable(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(to_toml(user_theme(variables={"diff-added-bg": "#204020"})))
    themes, warnings = load_themes(tmp_path)
    assert warnings == []
    assert [theme.name for theme in themes] == [*BUILTIN_THEME_NAMES, "mine"]

    app = Swatches(DEFAULT_THEME, tmp_path)
    async with app.run_test() as pilot:
        app.theme = "mine"
        await pilot.pause()
        assert app.current_theme.name == "mine"
        assert painted(app)["diff-added-bg"] == Color.parse("#204020")


async def test_register_themes_reads_the_user_theme_dir_by_default() -> None:
    user_theme_dir().mkdir(parents=True)
    (user_theme_dir() / "mine.toml").write_text(to_toml(user_theme()))
    app = App[None]()
    assert register_themes(app) == []
    assert {*BUILTIN_THEME_NAMES, "mine"} <= set(app.available_themes)


def test_missing_user_dir_is_not_an_error(tmp_path: Path) -> None:
    themes, warnings = load_themes(tmp_path / "nope")
    assert [theme.name for theme in themes] == list(BUILTIN_THEME_NAMES) and warnings == []


def test_missing_app_variables_are_derived(tmp_path: Path) -> None:
    data = user_theme(variables={"mode-plan": "#123456", "footer-key-foreground": "#abcdef"})
    (tmp_path / "sparse.toml").write_text(to_toml(data))
    themes, warnings = load_themes(tmp_path)
    assert warnings == []
    theme = themes[-1]
    derived = derive_app_variables(theme)
    assert theme.variables["mode-plan"] == "#123456"
    assert theme.variables["footer-key-foreground"] == "#abcdef"  # Textual's own variables pass through
    for name in APP_VARIABLES.keys() - {"mode-plan"}:
        assert theme.variables[name] == derived[name]


BAD_FILES = {
    "broken.toml": ('name = "broken"\ndark = tru\n', "invalid TOML"),
    "extra.toml": (to_toml(user_theme("extra", colour="#fff")), "colour: unknown key"),
    "badcolour.toml": (to_toml(user_theme("badcolour", primary="blurple")),
                       "primary: invalid colour 'blurple'"),
    "noname.toml": (to_toml({k: v for k, v in user_theme().items() if k != "name"}), "name: missing"),
    "shadow.toml": (to_toml(user_theme("dark")), "name 'dark' is already used by a built-in theme"),
    "textual.toml": (to_toml(user_theme("nord")), "'nord' is already used"),
    "badvar.toml": (to_toml(user_theme("badvar", variables={"diff-added": "#000"})),
                    "variables.diff-added: unknown variable"),
    "badvalue.toml": (to_toml(user_theme("badvalue", variables={"diff-cursor": "nope"})),
                      "variables.diff-cursor: invalid colour 'nope'"),
    "badstyle.toml": (to_toml(user_theme("badstyle", variables={"link-style": "wobbly"})),
                      "variables.link-style: invalid text-style"),
    "injection.toml": (to_toml(user_theme("injection", variables={"border": "red; width: 1"})),
                       "variables.border: invalid value"),
    "notbool.toml": (to_toml(user_theme("notbool", dark="yes")), "dark:"),
    "badname.toml": (to_toml(user_theme("has space")), "name: 'has space' is not a usable name"),
}


@pytest.mark.parametrize("file_name", BAD_FILES)
def test_a_bad_user_file_gives_one_warning_and_no_exception(file_name: str, tmp_path: Path) -> None:
    text, problem = BAD_FILES[file_name]
    (tmp_path / file_name).write_text(text)
    themes, warnings = load_themes(tmp_path)
    assert [theme.name for theme in themes] == list(BUILTIN_THEME_NAMES)
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert warnings[0].startswith(f"{file_name}: ")
    assert problem in warnings[0]


def test_bad_files_do_not_stop_good_ones(tmp_path: Path) -> None:
    for file_name, (text, _) in BAD_FILES.items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / "good.toml").write_text(to_toml(user_theme("good")))
    (tmp_path / "zz-copy.toml").write_text(to_toml(user_theme("good")))  # same name, later file
    (tmp_path / "notes.txt").write_text("not a theme")
    themes, warnings = load_themes(tmp_path)
    assert [theme.name for theme in themes] == [*BUILTIN_THEME_NAMES, "good"]
    assert len(warnings) == len(BAD_FILES) + 1
    assert warnings[-1] == "zz-copy.toml: name 'good' is already used by good.toml; pick another name"


def test_several_problems_in_one_file_share_one_line(tmp_path: Path) -> None:
    data = {k: v for k, v in user_theme("multi", error="nope").items() if k != "panel"}
    (tmp_path / "multi.toml").write_text(to_toml(data))
    _, warnings = load_themes(tmp_path)
    assert len(warnings) == 1
    assert "error: invalid colour 'nope'" in warnings[0] and "panel: missing" in warnings[0]


def test_importing_does_no_work() -> None:
    # The app imports this module before its first frame: no Textual import, no file parsing.
    probe = "import sys, tui.themes; print(sorted(m for m in ('textual', 'themes') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_builtin_themes_load_without_pydantic() -> None:
    # They are on the path to the first frame; their files are validated by the tests above.
    probe = "import sys, tui.themes; tui.themes.builtin_themes(); print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
