"""Instructions where users keep them (issue 23, item 5): AGENTS.md from the repository's root
down to the working folder, CLAUDE.md as the fallback name, the user's global file, `@path`
imports, and the 20,000-character cut said to the user."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from agent import paths
from tests.conftest import write_files
from tests.fakellm import Reply


def _system(h: Any) -> str:
    return h.llm.requests[-1]["messages"][0]["content"]


async def test_root_down_to_the_working_folder_nearest_last_with_fallback_and_global(trusted_harness: Any,
                                                                                       tmp_path: Path) -> None:
    repo = write_files(tmp_path / "repo", {"AGENTS.md": "ROOT: use tabs.\n", "CLAUDE.md": "ROOT-CLAUDE\n",
                                           "pkg/CLAUDE.md": "PKG: claude file.\n",
                                           "pkg/app/AGENTS.md": "APP: use spaces.\n",
                                           "pkg/app/main.py": "x = 1\n", "other/AGENTS.md": "OTHER\n"})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    (paths.config_dir() / "AGENTS.md").write_text("GLOBAL: answer briefly.\n")
    h = trusted_harness(root=repo / "pkg" / "app")
    h.script(Reply(text="ok"))
    await h.run("hi")
    system = _system(h)
    order = [system.index(text) for text in ("GLOBAL: answer briefly.", "ROOT: use tabs.", "PKG: claude file.",
                                             "APP: use spaces.")]
    assert order == sorted(order)  # global first, then root down: the nearest has the last word
    assert "ROOT-CLAUDE" not in system and "OTHER" not in system  # CLAUDE.md only where AGENTS.md is missing
    shown = [name for name, _ in h.session.instructions.files]
    assert shown[1:] == ["AGENTS.md", "pkg/CLAUDE.md", "pkg/app/AGENTS.md"]
    assert h.session.instructions.files[1][1] == len("ROOT: use tabs.\n")


async def test_imports_relative_confined_depth_limited_without_cycles(trusted_harness: Any, tmp_path: Path) -> None:
    outside = write_files(tmp_path / "outside", {"secret.md": "OUTSIDE-SECRET\n"})
    ws = write_files(tmp_path / "ws", {
        "AGENTS.md": "See @docs/style.md and @README for the overview.\nMail me at a@b.c, or ask @alice.\n"
                     "`@docs/ignored.md` in code is not an import.\nAlso @../outside/secret.md\n",
        "README": "README-TEXT\n", "docs/style.md": "STYLE\n@./more/deep.md\n@../AGENTS.md\n",
        "docs/more/deep.md": "DEEP\n", "docs/ignored.md": "IGNORED-TEXT\n"})
    assert outside.exists()
    h = trusted_harness(root=ws)
    h.script(Reply(text="ok"))
    await h.run("hi")
    system = _system(h)
    assert "STYLE" in system and "README-TEXT" in system and "DEEP" in system
    assert "IGNORED-TEXT" not in system and "OUTSIDE-SECRET" not in system
    assert system.count("See @docs/style.md") == 1  # the cycle back to AGENTS.md is not followed
    warnings = [e.message for e in h.of("warning")]
    assert any("@../outside/secret.md" in w and "only files inside the repository" in w for w in warnings), warnings


async def test_the_cut_is_said_to_the_user(trusted_harness: Any) -> None:
    h = trusted_harness({"AGENTS.md": "rule\n" * 5000})
    h.script(Reply(text="ok"), Reply(text="ok"))
    await h.run("hi")
    await h.run("again")
    cut = [e.message for e in h.of("warning") if "cut at 20,000 characters" in e.message]
    assert len(cut) == 1 and "25,0" in cut[0], cut  # said once, with the size
    assert "[instructions cut at 20,000" in _system(h)


async def test_an_untrusted_repository_cannot_import_your_files(trusted_harness: Any, tmp_path: Path) -> None:
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text('api_key = "sk-user-secret-key-123456"\n')
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link.md").symlink_to(paths.user_config_file())
    config = paths.user_config_file()
    hostile = {"AGENTS.md": f"@{config}\n@~/.ssh/id_rsa\n@link.md\n@sub/AGENTS.md\n",
               "CLAUDE.md": "not read: AGENTS.md is there\n"}
    h = trusted_harness(hostile, trusted=False, root=tmp_path / "ws")
    h.script(Reply(text="ok"))
    await h.run("hi")
    system = _system(h)
    assert "sk-user-secret" not in str(h.llm.requests) and "not read" not in system
    assert f"@{config}" in system  # the text itself is kept, as AGENTS.md always was
    warnings = " ".join(e.message for e in h.of("warning"))
    assert "only files inside the repository" in warnings and "link.md" in warnings
