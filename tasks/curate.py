"""Curate: validated snapshots → a content-addressed training set (`postgame.curate`): SFT rows from verified
answers, DPO pairs from the same task, GRPO prompts with their outcome variance.

Only sessions on train-split tasks are used, so evaluation never measures what training saw. With
`curate.replay_snapshots: N` the newest N snapshots earlier cycles trained on are curated too (before the new ones).
"""

from __future__ import annotations

from prefect import task

from postgame.config import Config
from postgame.curate import CuratedDataset, curate_snapshots, snapshots_to_learn
from tasks.resume import RESUMABLE
from tasks.retry import TRANSIENT_RETRIES


@task(name="curate", **RESUMABLE, **TRANSIENT_RETRIES)
def curate(cfg: Config, snapshot_ids: list[str]) -> CuratedDataset:
    from evals.factory.instances import split_map

    return curate_snapshots(cfg, snapshots_to_learn(cfg, snapshot_ids), split_map(cfg))  # lineage names every one
