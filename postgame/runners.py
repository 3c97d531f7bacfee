"""The fan-out engine chosen by config (`runner:`): a Prefect task runner, and a mapper that submits work through it.

    with prefect_mapper(cfg.runner) as mapper:           # inside a Prefect flow (needs the Prefect API)
        results = list(mapper(fn, items))               # fn(item) per item, as Prefect task runs, results in order
    with local_mapper(cfg.runner) as mapper:            # anywhere (CLI, benchmarks): the same engine, no Prefect API
        ...
    task_runner(cfg.runner)                  # the Prefect TaskRunner itself, e.g. for @flow(task_runner=...)

Kinds: `process` (default; Prefect's ProcessPoolTaskRunner / a spawn process pool), `thread`, `dask` (prefect-dask's
DaskTaskRunner on the cluster at `runner.address`, or on a LocalCluster started for the run), `serial` (in this
process). A mapper keeps at most `runner.window` items in flight (default 2 per worker) and yields results in the
order of the items, so the caller can merge them exactly as a one-process loop would. `fn` and the items must be
picklable (module-level functions, dataclasses); on a cluster each worker needs the postgame package installed.
With a runner that pickles (process, dask), Prefect also ships the flow run's context with every task run, and that
context holds the flow object and its parameters: the calling flow must be a module-level function (a flow defined
inside another function is pickled by value, closure and all). In a Dask traceback the first error, "not the same
object as postgame.runners.apply", is expected (prefect-dask wraps each task in a closure named after it, which plain
pickle cannot find by name); the error that matters is the chained cloudpickle one.

Prefect task runners run tasks through the Prefect API: outside a flow run (no API) Prefect would start a temporary
server in every worker process. `local_mapper` therefore drives the same engines directly for the CLI; the Prefect
tasks (`tasks/ingest.py`, `tasks/evaluate.py`) use `prefect_mapper`.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from postgame.settings.runner import RunnerSettings

Mapper = Callable[[Callable, Iterable], Iterator]


def worker_count(settings: RunnerSettings) -> int:
    return settings.workers or os.cpu_count() or 1


def _window(settings: RunnerSettings) -> int:
    return settings.window or 2 * worker_count(settings)


def _ordered(submit: Callable[[Callable, Any], Any], result: Callable[[Any], Any], window: int) -> Mapper:
    """A mapper over `submit(fn, item) -> future`: at most `window` in flight, results in item order."""

    def mapper(fn: Callable, items: Iterable) -> Iterator:
        pending: deque = deque()
        for item in items:
            pending.append(submit(fn, item))
            if len(pending) >= window:
                yield result(pending.popleft())
        while pending:
            yield result(pending.popleft())

    return mapper


def _serial(fn: Callable, items: Iterable) -> Iterator:
    return map(fn, items)


def _dask_cluster_kwargs(settings: RunnerSettings) -> dict:
    """A LocalCluster of single-threaded worker processes (the GIL makes threads useless for parsing)."""
    return {"n_workers": worker_count(settings), "threads_per_worker": 1, "processes": True, "dashboard_address": None}


def task_runner(settings: RunnerSettings):
    """The Prefect TaskRunner for `settings` (serial gets a one-thread ThreadPoolTaskRunner)."""
    if settings.kind == "dask":
        from prefect_dask import DaskTaskRunner

        if settings.address:
            return DaskTaskRunner(address=settings.address)
        return DaskTaskRunner(cluster_class="distributed.LocalCluster", cluster_kwargs=_dask_cluster_kwargs(settings))
    if settings.kind == "process":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=worker_count(settings))
    from prefect.task_runners import ThreadPoolTaskRunner

    return ThreadPoolTaskRunner(max_workers=1 if settings.kind == "serial" else worker_count(settings))


def apply(fn: Callable, item: Any) -> Any:
    """The body of each fanned-out Prefect task run: `fn(item)`."""
    return fn(item)


def _task_name(fn: Callable) -> str:
    inner = fn.func if isinstance(fn, functools.partial) else fn
    return getattr(inner, "__name__", "fan-out")


@contextmanager
def prefect_mapper(settings: RunnerSettings, runner=None) -> Iterator[Mapper]:
    """Submit each item as a Prefect task run through the configured task runner (or `runner`, e.g. one built by
    the caller around an existing Dask cluster). Needs the Prefect API, as any flow does."""
    from prefect import task
    from prefect.cache_policies import NO_CACHE

    if settings.kind == "serial" and runner is None:
        yield _serial
        return
    with runner or task_runner(settings) as started:

        def submit(fn: Callable, item: Any):
            unit = task(name=_task_name(fn), persist_result=False, cache_policy=NO_CACHE, log_prints=False)(apply)
            return started.submit(unit, parameters={"fn": fn, "item": item})

        yield _ordered(submit, lambda future: future.result(), _window(settings))


@contextmanager
def local_mapper(settings: RunnerSettings) -> Iterator[Mapper]:
    """The same engines without Prefect: a spawn process pool, threads, or a Dask client (address or LocalCluster)."""
    if settings.kind == "serial":
        yield _serial
        return
    if settings.kind == "dask":
        from distributed import Client, LocalCluster

        if settings.address:
            with Client(settings.address) as client:
                yield _ordered(functools.partial(client.submit, pure=False), lambda f: f.result(), _window(settings))
            return
        with LocalCluster(**_dask_cluster_kwargs(settings)) as cluster, Client(cluster) as client:
            yield _ordered(functools.partial(client.submit, pure=False), lambda f: f.result(), _window(settings))
        return
    from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

    pool: Executor
    if settings.kind == "process":
        import multiprocessing

        pool = ProcessPoolExecutor(max_workers=worker_count(settings), mp_context=multiprocessing.get_context("spawn"))
    else:
        pool = ThreadPoolExecutor(max_workers=worker_count(settings), thread_name_prefix="fan-out")
    with pool:
        yield _ordered(pool.submit, lambda f: f.result(), _window(settings))
