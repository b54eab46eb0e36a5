"""Full garbage collections wait for a pause in typing (but not forever)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from tui.gcpolicy import FULL_AT_LATEST, FULL_EVERY, GEN2_NEVER, IDLE_INPUT, GcPolicy


@pytest.fixture
def restore_gc() -> Iterator[None]:
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_start_freezes_and_leaves_full_collections_to_the_policy(restore_gc: None) -> None:
    GcPolicy().start()
    assert gc.isenabled() and gc.get_threshold()[2] == GEN2_NEVER and gc.get_freeze_count() > 0


def test_collects_only_after_a_pause_in_typing() -> None:
    policy = GcPolicy()
    now = time.monotonic()
    policy.last_full = now - FULL_EVERY - 1
    policy.last_input = now  # typing right now
    assert not policy.tick()
    policy.last_input = now - IDLE_INPUT - 0.1
    assert policy.tick() and policy.full_collections == 1
    assert not policy.tick()  # not again until FULL_EVERY has passed


def test_typing_without_pause_still_gets_a_collection_eventually() -> None:
    policy = GcPolicy()
    policy.last_full = time.monotonic() - FULL_AT_LATEST - 1
    policy.key_pressed()
    assert policy.tick()
