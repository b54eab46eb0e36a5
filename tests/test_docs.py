"""The documentation site (docs/, mkdocs.yml) builds without a broken link or a page left out of its
nav; the architecture page names every floor of the import contracts and only modules that exist;
every command and slash command is documented."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import ROOT

DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"
DOTTED = re.compile(r"`((?:agent|tui)(?:\.[A-Za-z_]\w*)+)`")
REPO_PATH = re.compile(r"`((?:agent|tui|tests|themes|\.ci)(?:/[\w.-]+)*/?)`")


def _pages() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(DOCS.glob("*.md"))}


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=120)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()


def test_a_broken_link_or_a_page_missing_from_the_nav_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "install.md").open("a") as page:
        page.write("\n[gone](no-such-page.md) and [no anchor](models.md#no-such-heading)\n")
    (tmp_path / "docs" / "stray.md").write_text("# Not in the nav\n")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr and "#no-such-heading" in done.stderr and "stray.md" in done.stderr


def _floors() -> set[str]:
    """Every module named by a layers contract of [tool.importlinter], with its container."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    found = set()
    for contract in contracts:
        if contract["type"] != "layers":
            continue
        containers = contract.get("containers", [""])
        for layer in contract["layers"]:
            for name in re.split(r"[|:]", layer):
                name = name.strip().strip("()").strip()
                found |= {f"{c}.{name}" if c else name for c in containers}
    return found


def test_the_architecture_page_names_every_floor_of_the_contracts() -> None:
    named = set(DOTTED.findall(ARCHITECTURE.read_text()))
    floors = _floors()
    assert len(floors) > 60  # the contracts were read
    assert sorted(floors - named) == []


def _module_file(parts: list[str]) -> Path | None:
    path = ROOT.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _exists(dotted: str) -> bool:
    """A module or package, or a name defined at the top of one (`agent.consumer.EventHandler`)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is None:
            continue
        if cut == len(parts):
            return True
        name = re.escape(parts[cut])
        return re.search(rf"^(?:async def|def|class) {name}\b|^{name}\s*[:=]", module.read_text(), re.M) is not None
    return False


def test_every_module_and_file_the_docs_and_agents_md_name_exists() -> None:
    missing = []
    for page, text in {**_pages(), "AGENTS.md": (ROOT / "AGENTS.md").read_text()}.items():
        missing += [f"{page}: {d}" for d in sorted(set(DOTTED.findall(text))) if not _exists(d)]
        missing += [f"{page}: {p}" for p in sorted(set(REPO_PATH.findall(text))) if not (ROOT / p).exists()]
    assert missing == []


def test_the_checker_catches_a_module_that_does_not_exist() -> None:
    assert _exists("agent.llm.core") and _exists("agent.session.open.open_session") and _exists("agent.frontends")
    assert not _exists("agent.llm.nowhere") and not _exists("agent.session.open.no_such_function")


def _shell_blocks(text: str) -> str:
    return "\n".join(re.findall(r"```sh\n(.*?)\n```", text, re.S))


def test_the_docs_name_every_command_and_slash_command_and_the_github_settings() -> None:
    from tui.cli import COMMANDS
    from tui.commands import SLASH_COMMANDS

    pages = _pages()
    everything = "\n".join(pages.values())
    commands = _shell_blocks(everything)
    assert [c for c in COMMANDS if not re.search(rf"^coder-tui {c}\b", commands, re.M)] == []
    assert [s for s, _ in SLASH_COMMANDS if f"`/{s}`" not in everything] == []
    for setting in ("github_token", "github_api_url", "GITHUB_TOKEN", "GH_TOKEN", "gh auth"):
        assert setting in pages["github.md"]


def test_the_readme_links_every_page_and_the_extras_carry_mkdocs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert [p for p in _pages() if f"](docs/{p})" not in readme] == []
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("docs", "test"):  # CI installs [test] only
        assert any(re.match(r"mkdocs\b", requirement) for requirement in extras[extra]), extra
