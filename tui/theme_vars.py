"""The app's own theme variables: their names, and fallbacks derived from a theme's base colours.

Theme files (themes/*.toml) set these under `[variables]`; a theme that leaves some out gets
them derived from its base colours here, so every stylesheet that uses them always parses. No
colour literal lives outside `themes/`: the fallbacks are blends of the theme's own colours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.theme import Theme

PRESENCE_COUNT = 8

APP_VARIABLES: dict[str, str] = {
    "diff-added-bg": "background of an added line",
    "diff-added-fg": "text colour of the + sign and added-line numbers",
    "diff-removed-bg": "background of a removed line",
    "diff-removed-fg": "text colour of the - sign and removed-line numbers",
    "diff-hunk-header": "colour of @@ hunk headers",
    "diff-line-number": "colour of line numbers",
    "diff-rejected-bg": "background of a hunk the user rejected",
    "diff-cursor": "marker of the hunk under the cursor",
    "mode-plan": "PLAN badge background",
    "mode-ask": "ASK badge background",
    "mode-allow": "ALLOW badge background",
    "mode-badge-text": "text on the mode badges",
    **{f"presence-{i}": f"presence colour {i} (peers in a room)" for i in range(1, PRESENCE_COUNT + 1)},
}


def derive_app_variables(theme: Theme) -> dict[str, str]:
    """Fallback values for every app variable, computed from the theme's base colours."""
    from textual.color import Color

    dark = theme.dark
    background = Color.parse(theme.background or ("black" if dark else "white"))
    foreground = Color.parse(theme.foreground or ("white" if dark else "black"))
    primary = Color.parse(theme.primary)
    success = Color.parse(theme.success or "green")
    error = Color.parse(theme.error or "red")
    warning = Color.parse(theme.warning or "yellow")
    accent = Color.parse(theme.accent or theme.primary)
    tint = 0.22 if dark else 0.18
    # On light backgrounds the signs and headers need darker inks than the theme's bright accents.
    ink = (lambda colour: colour) if dark else (lambda colour: colour.darken(0.3))
    values = {
        "diff-added-bg": background.blend(success, tint).hex,
        "diff-added-fg": ink(success).hex,
        "diff-removed-bg": background.blend(error, tint).hex,
        "diff-removed-fg": ink(error).hex,
        "diff-hunk-header": ink(accent).hex,
        "diff-line-number": background.blend(foreground, 0.45).hex,
        "diff-rejected-bg": background.blend(foreground, 0.08).hex,
        "diff-cursor": primary.hex,
        "mode-plan": primary.hex,
        "mode-ask": warning.hex,
        "mode-allow": error.hex,
        "mode-badge-text": background.hex,
    }
    hue, saturation, lightness = primary.hsl
    saturation = max(saturation, 0.45)
    lightness = min(max(lightness, 0.45), 0.65) if dark else min(max(lightness, 0.3), 0.45)
    for i in range(PRESENCE_COUNT):
        values[f"presence-{i + 1}"] = Color.from_hsl((hue + i / PRESENCE_COUNT) % 1.0, saturation, lightness).hex
    return values
