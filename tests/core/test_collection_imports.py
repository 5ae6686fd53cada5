"""Collecting the suite imports what the test modules' definitions need, not what only some tests use (issue 37).

Every xdist worker collects every test module before it runs one test: a library imported at collection is
imported by all of them, and on 2 CPUs the four workers' collections are the first seconds of every run.
The judge's SDK (anthropic: ~1.5 s of CPU to import, through scarbook.judge.batch's top-level import), scipy
(~0.8 s, the stats tests' oracle) and Ray (~0.5 s, though one worker runs every Ray test) were; now the
tests and functions that use them import them.
"""

from __future__ import annotations

from tests.helpers.collection_imports import collection_imports

LEFT_TO_THE_TESTS = ("anthropic", "scipy", "ray")


def test_collecting_the_suite_leaves_the_judge_sdk_scipy_and_ray_to_the_tests_that_use_them(tmp_path) -> None:
    loaded = collection_imports(tmp_path)
    assert sorted({m.partition(".")[0] for m in loaded} & set(LEFT_TO_THE_TESTS)) == []
    # the check would notice a library imported at collection: the TUI tests' modules import Textual, and
    # every module its own scarbook modules
    assert {"textual.app", "tests.judge.test_batch", "scarbook.judge.batch", "tests.stats.test_decisions"} <= loaded
