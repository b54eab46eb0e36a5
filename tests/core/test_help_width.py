"""`--help` fits an 80-column terminal: hand-wrapped descriptions (about 100 columns) were broken
wherever the terminal ran out; now prose is filled again and table rows wrap under their column."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from tui.attach_cli import attach_parser
from tui.cli import launch_parser, trust_parser
from tui.cliargs import serve_parser
from tui.fleet_cli import fleet_parser
from tui.knowledge_cli import explore_parser, map_parser, tasks_parser

PARSERS: list[Callable[[], argparse.ArgumentParser]] = [launch_parser, attach_parser, trust_parser, serve_parser,
                                                        fleet_parser, tasks_parser, map_parser,
                                                        explore_parser]


def help_at(make: Callable[[], argparse.ArgumentParser], columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))  # what argparse sizes its help by
    return make().format_help()


@pytest.mark.parametrize("make", PARSERS, ids=lambda make: make.__name__)
def test_help_fits_80_columns_and_says_everything_it_says_when_wide(make: Callable[[], argparse.ArgumentParser],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    narrow, wide = help_at(make, 80, monkeypatch), help_at(make, 200, monkeypatch)
    assert [line for line in narrow.splitlines() if len(line) > 80] == []
    assert "".join(narrow.split()) == "".join(wide.split())  # the same text, laid out again


def test_a_wide_terminal_keeps_the_text_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    wide = help_at(launch_parser, 120, monkeypatch)
    assert "  coder-tui run PROMPT         run the agent without the UI (see `coder-tui run --help`)\n" in wide
    narrow = help_at(launch_parser, 80, monkeypatch)
    assert ("  coder-tui run PROMPT         run the agent without the UI (see `coder-tui\n"
            "                               run --help`)\n") in narrow  # wrapped under its column
