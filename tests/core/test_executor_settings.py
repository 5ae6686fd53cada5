"""The `executor:` section of scarbook.yaml: every mistake named with its line and the fix."""

from __future__ import annotations

import pytest

from scarbook.config import DEFAULT_WORKSPACE_BYTES, ExecutorSettings
from scarbook.errors import ConfigError


def _load(project, text: str):
    from scarbook.config import load_config

    path = project.config(text)
    return load_config(path), path


def test_default_is_the_local_pool(project):
    cfg, _ = _load(project, "runs: 2\n")
    assert cfg.executor == ExecutorSettings()
    assert cfg.executor.type == "local"


def test_a_ray_executor_with_everything(project):
    cfg, _ = _load(project, """\
        executor:
          type: ray
          address: auto
          num_cpus: 2
          resources: {docker: 1}
          runtime_env: {env_vars: {A: "1"}}
          max_workspace_bytes: 1000
        """)
    assert cfg.executor == ExecutorSettings("ray", "auto", 2.0, {"docker": 1.0}, {"env_vars": {"A": "1"}}, 1000)


def test_a_bare_ray_executor_starts_ray_here(project):
    cfg, _ = _load(project, "executor: ray\n")
    assert cfg.executor == ExecutorSettings("ray", None, 1.0, {}, None, DEFAULT_WORKSPACE_BYTES)


@pytest.mark.parametrize("text, message", [
    ("executor: {type: dask}\n", "1: executor.type must be one of local, ray, got 'dask' — "
                                 "write executor: {type: ray, address: auto}"),
    ("executor:\n  type: ray\n  adress: auto\n", "3: unknown key executor.adress for a ray executor — a ray "
     "executor takes: type, address, num_cpus, resources, runtime_env, max_workspace_bytes"),
    ("executor: {type: local, address: auto}\n", "1: unknown key executor.address for a local executor — "
     "a local executor takes: type"),
    ("executor:\n  type: ray\n  num_cpus: many\n", "3: executor.num_cpus must be a number of at least 0, "
     "got 'many' — write num_cpus: 1"),
    ("executor:\n  type: ray\n  address: 5\n", "3: executor.address must be a Ray address, got 5 — write "
     "address: auto (a running cluster) or ray://head-host:10001; leave it out to start Ray on this machine"),
    ("executor:\n  type: ray\n  resources: [gpu]\n", "3: executor.resources must map a Ray resource name "
     "to an amount — write resources: {docker: 1}"),
    ("executor:\n  type: ray\n  max_workspace_bytes: -1\n", "3: executor.max_workspace_bytes must be a whole "
     f"number of bytes, got -1 — write max_workspace_bytes: {DEFAULT_WORKSPACE_BYTES}"),
])
def test_bad_executor_settings_name_the_line_and_the_fix(project, text, message):
    with pytest.raises(ConfigError) as err:
        _load(project, text)
    assert str(err.value) == f"{project.root / 'scarbook.yaml'}:{message}"
