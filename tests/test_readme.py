"""README's commands: the two first ones and .ci/run stay in step; the install on the PATH works.
(That every command and slash command is documented is tests/test_docs.py's business.)"""

from __future__ import annotations

import glob
import re
import tomllib

from tests.conftest import ROOT

README = ROOT / "README.md"


def _blocks() -> list[str]:
    return [b.strip() for b in re.findall(r"```sh\n(.*?)\n```", README.read_text(), re.S)]


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = README.read_text()
    launch, test = _blocks()[:2]
    assert readme.index(launch) < 200 and launch.endswith("coder-tui")
    assert "pytest" in test and "[test]" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert test in ci.splitlines()


def test_readme_says_how_to_put_coder_tui_on_the_path_and_run_it_in_a_project() -> None:
    install = next(b for b in _blocks() if "pipx install ." in b)
    assert "uv tool install ." in install
    assert re.search(r"^cd \S+ && coder-tui$", install, re.M)  # started in the user's project
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["coder-tui"] == "tui.cli:main"  # the command pipx and uv put on the PATH


def test_a_non_editable_install_carries_every_file_the_app_loads() -> None:
    """pipx and uv install a built wheel, not the clone: its package data must name every non-Python
    file of the packages (styles, themes, prompts), or the installed app fails where the clone works."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    included = set()
    for package, patterns in setuptools["package-data"].items():
        for pattern in patterns:
            included |= {p for p in glob.glob(str(ROOT / package / pattern), recursive=True)}
    for package in setuptools["packages"]["find"]["include"]:
        for path in (ROOT / package.rstrip("*")).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc"):
                assert str(path) in included, f"{path.relative_to(ROOT)} is not in [tool.setuptools.package-data]"
