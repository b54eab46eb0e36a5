"""README's two commands and .ci/run stay in step."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    launch, test = blocks[0].strip(), blocks[1].strip()
    assert readme.index(launch) < 200 and launch.endswith("coder-tui")
    assert "pytest" in test and "[test]" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert test in ci.splitlines()
