"""`postgame cycle` moves its bar stage by stage: `following_stages` reads the "Finished in state"
line each of the cycle's Prefect task runs logs, and tells the next stage, one step out of `len(CYCLE_STAGES)`."""

from __future__ import annotations

import logging

from flows.cycle import CYCLE_STAGES, following_stages


def finished(task_run_name: str, message: str = "Finished in state Completed()") -> None:
    logger = logging.getLogger("prefect.task_runs")
    logger.handle(
        logger.makeRecord(
            logger.name, logging.INFO, __file__, 0, message, (), None, extra={"task_run_name": task_run_name}
        )
    )


def test_each_finished_stage_tells_the_next_and_the_bar_ends_at_its_total():
    told: list[tuple[str, int]] = []
    with following_stages(lambda text, done: told.append((text, done))):
        finished("claim-0")  # a task of the cycle that is not a stage of the bar
        finished("ingest-1", "Beginning to read")  # a stage's other lines
        for n, stage in enumerate(CYCLE_STAGES):
            finished(f"{stage}-{n}")
    assert told == [(CYCLE_STAGES[0], 0), *((s, 1) for s in CYCLE_STAGES[1:]), ("done", 1)]
    assert sum(done for _, done in told) == len(CYCLE_STAGES)
    finished("ingest-9")  # after the block the bar is gone: nothing more is told
    assert len(told) == len(CYCLE_STAGES) + 1
