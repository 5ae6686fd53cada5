"""tests/helpers/precompile.py: the xdist controller writes the rewritten bytecode pytest's import hook reads,
so the workers find it cached instead of each rewriting every test module (a fresh checkout)."""

from __future__ import annotations

import dis

from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from tests.helpers.precompile import _rewrite


def test_the_controller_writes_the_rewritten_pyc_the_workers_read(pytestconfig, tmp_path) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text("def test_one():\n    x = 1\n    assert x == 2\n", encoding="utf-8")
    pyc = tmp_path / "__pycache__" / ("test_sample" + PYC_TAIL)

    _rewrite(pytestconfig, [module])

    code = _read_pyc(module, pyc)  # what pytest's hook (AssertionRewritingHook.exec_module) reads first
    assert code is not None, f"no fresh rewritten bytecode at {pyc}"
    test_one = next(c for c in code.co_consts if getattr(c, "co_name", "") == "test_one")
    assert any(i.argval.startswith("@py_assert") for i in dis.get_instructions(test_one)
               if isinstance(i.argval, str)), "the asserts were not rewritten"

    written = pyc.stat().st_mtime_ns
    _rewrite(pytestconfig, [module])  # fresh: left alone
    assert pyc.stat().st_mtime_ns == written

