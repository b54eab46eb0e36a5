"""Built-in colour themes, stored as data (one TOML file per theme).

`tui/themes.py` validates and loads them; users add their own in `<config dir>/themes/`, using
these files as templates. Every colour literal of the app lives in this folder.
"""
