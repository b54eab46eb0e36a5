"""The map store, damaged or handed secrets (issue 20): a damaged store is set aside with one warning
and the run goes on (it crashed every run in the folder); keys and tokens are masked on write and
on read, so they are not fed back to the model."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent.knowledge.store import MapStore, take_notices
from agent.secrets import register
from tests.conftest import run_cli, write_files
from tests.fakellm import FakeLLM, Reply

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
KEY = "my-own-provider-key-0123456789"


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\x00" * 100)


def _torn(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xff" * 4000 + data[4100:])


def _bad_defs(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE files SET defs = '{not json'")


def _bad_summary(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("INSERT OR REPLACE INTO summaries VALUES ('x', 'a.py', '[1, 2]', 'm', 0)")
        db.execute("INSERT OR REPLACE INTO files VALUES ('a.py','x',1,0,'python',1,'[]','[]',NULL)")


def _other_schema(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE files")
        db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, whatever TEXT)")


def _bad_symbol(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("""UPDATE files SET defs = '[["main", "function", 1, 2, 3]]', refs = '7'""")


DAMAGE = {"garbage": _garbage, "torn": _torn, "bad-defs": _bad_defs, "bad-summary": _bad_summary,
          "other-schema": _other_schema, "bad-symbol": _bad_symbol}


def _built_store(key: str) -> Path:
    from agent.knowledge.store import FileRecord
    from agent.knowledge.symbols import Symbol

    store = MapStore(key)
    store.put_files([FileRecord("a.py", "sha1", 10, 0, "python", True, (Symbol("main", "function", 1),),
                                frozenset({"b"}))])
    store.put_summary("sha1", "a.py", {"purpose": "the app"}, "m", 0.0)
    store.close()
    return store.path


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_store_is_set_aside_and_a_fresh_one_used(damage: str) -> None:
    path = _built_store(f"damaged-{damage}")
    take_notices()
    DAMAGE[damage](path)
    store = MapStore(f"damaged-{damage}")
    try:
        store.files(), store.summaries()  # reading finds what the open did not
        assert store.files() == {} and store.summaries() == {}  # fresh: the map is built again
        store.put_summary("s", "b.py", {"purpose": "x"}, "m", 0.0)
        assert store.summaries() == {"s": {"purpose": "x"}}
    finally:
        store.close()
    notices = take_notices()
    assert len(notices) == 1 and "was damaged" in notices[0] and "set aside as map.sqlite3.damaged-" in notices[0]
    assert [p.name.startswith("map.sqlite3.damaged-") for p in path.parent.iterdir()].count(True) >= 1


@pytest.mark.parametrize("damage", ["garbage", "bad-defs"])
def test_a_run_in_a_folder_with_a_damaged_store_warns_and_answers(fake_llm: FakeLLM, tmp_path: Path,
                                                                  isolated_home: Path, damage: str) -> None:
    ws = write_files(tmp_path / "ws", {"app.py": "def main():\n    return 1\n", "util.py": "def helper(): pass\n"})
    args = ("run", "hi", "--workspace", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
            "--api-key", "sk-test-stores-000000")
    fake_llm.script(Reply(text="first"))
    assert run_cli(isolated_home, *args, timeout=120).returncode == 0
    stores = list(isolated_home.rglob("map.sqlite3"))
    assert len(stores) == 1
    DAMAGE[damage](stores[0])
    for answer in ("second", "third"):  # every later run in the folder, not just the next
        fake_llm.script(Reply(text=answer))
        done = run_cli(isolated_home, *args, timeout=120)
        assert done.returncode == 0 and answer in done.stdout, done.stderr
        assert "Traceback" not in done.stderr
    assert done.stderr.count("was damaged") == 0  # said once, on the run that set it aside
    assert len(list(stores[0].parent.glob("map.sqlite3.damaged-*"))) == 1
    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert "app.py" in system  # the map was built afresh and is in the prompt again


def test_the_first_run_after_damage_says_so(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"app.py": "x = 1\n"})
    args = ("run", "hi", "--workspace", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
            "--api-key", "sk-test-stores-000000")
    fake_llm.script(Reply(text="first"), Reply(text="second"))
    run_cli(isolated_home, *args, timeout=120)
    _garbage(next(isolated_home.rglob("map.sqlite3")))
    done = run_cli(isolated_home, *args, timeout=120)
    assert done.returncode == 0 and "warning: the codebase map store" in done.stderr and "was damaged" in done.stderr


def test_secrets_are_masked_on_write_and_on_read() -> None:
    register(KEY)
    store = MapStore("secrets")
    try:
        store.put_summary("s1", "config.py", {"purpose": f"holds {TOKEN} and {KEY}"}, "m", 0.0)
        from agent.knowledge.store import FileRecord

        store.put_files([FileRecord("config.py", "s1", 1, error=f"could not parse near {TOKEN}")])
        raw = store.path.read_bytes()
        assert TOKEN.encode() not in raw and KEY.encode() not in raw
        assert store.summaries()["s1"]["purpose"] == "holds [redacted] and [redacted]"
        with sqlite3.connect(store.path) as db:  # a store written before masking
            db.execute("INSERT INTO summaries VALUES ('s2', 'old.py', ?, 'm', 0)",
                       (json.dumps({"purpose": f"old {TOKEN}"}),))
        assert TOKEN not in json.dumps(store.summaries())  # not fed back to the model
    finally:
        store.close()
