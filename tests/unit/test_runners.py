"""The `runner:` section and the mappers built from it: bad values fail at load, results come back in order, and no
more than `window` items are read ahead (each holds a whole log object in memory)."""

from __future__ import annotations

import pytest

from postgame.config import load_config
from postgame.errors import ConfigError
from postgame.runners import local_mapper, task_runner
from postgame.settings.runner import RunnerSettings


def test_defaults_and_bad_values_fail_at_load_naming_the_key(tmp_path):
    cfg = load_config(path=None, env={"POSTGAME_HOME": str(tmp_path)})
    assert cfg.runner.kind == "process" and cfg.runner.address == ""
    with pytest.raises(ConfigError, match="runner.kind"):
        load_config(path=None, env={"POSTGAME_HOME": str(tmp_path), "POSTGAME_RUNNER__KIND": "ray"})
    with pytest.raises(ConfigError, match="only used with runner.kind = dask"):
        load_config(path=None, env={"POSTGAME_HOME": str(tmp_path), "POSTGAME_RUNNER__ADDRESS": "tcp://h:8786"})
    with pytest.raises(ConfigError, match="scheduler URL"):
        load_config(
            path=None,
            env={"POSTGAME_HOME": str(tmp_path), "POSTGAME_RUNNER__KIND": "dask", "POSTGAME_RUNNER__ADDRESS": "h:8786"},
        )


def test_each_kind_gives_its_prefect_task_runner():
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    assert isinstance(task_runner(RunnerSettings(kind="process", workers=3)), ProcessPoolTaskRunner)
    assert isinstance(task_runner(RunnerSettings(kind="thread")), ThreadPoolTaskRunner)
    remote = task_runner(RunnerSettings(kind="dask", address="tcp://10.0.0.5:8786"))
    assert isinstance(remote, DaskTaskRunner) and remote.address == "tcp://10.0.0.5:8786"
    local = task_runner(RunnerSettings(kind="dask", workers=2))
    assert local.address is None and local.cluster_kwargs["n_workers"] == 2


def slow_square(x: int) -> int:
    import random
    import time

    time.sleep(random.random() / 100)  # finish out of order
    return x * x


@pytest.mark.parametrize("kind", ["serial", "thread"])
def test_results_come_back_in_item_order_with_a_bounded_read_ahead(kind):
    read = []

    def items():
        for i in range(20):
            read.append(i)
            yield i

    with local_mapper(RunnerSettings(kind=kind, workers=3, window=4)) as mapper:
        out = []
        for result in mapper(slow_square, items()):
            assert len(read) - len(out) <= 4  # never more than `window` items taken but not yet given back
            out.append(result)
    assert out == [i * i for i in range(20)]
