"""A re-run of promote after MLflow died mid-promote registered the same logged model a second time: found by the
fault suite (scripts/faults.py, MLflow row, 2026-12-01): MLflow was killed after the candidate was registered (v5,
decision tags written, the rest not), the re-run got train and evaluate *Cached*, resumed at promote and registered
the same `models:/m-...` again as v6 — two versions of one candidate, the first with a half-written record.

Registering a model URI that a version already holds now returns that version, with the new tags written over it.
"""

from __future__ import annotations

import json


def _folder(cfg, label: str) -> str:
    folder = cfg.home / "checkpoints" / label
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"label": label}))
    return folder.as_uri()


def test_registering_the_same_model_again_returns_its_version(cfg):
    from models import registry

    uri = _folder(cfg, "candidate")
    first = registry.register(cfg, uri, tags={"promotion.decision": "rejected", "prefect.flow_run_id": "crashed"})
    registry.clear_challenger(cfg, first.version)
    # MLflow went away here; the re-run resumes at promote with the same (cached) candidate
    again = registry.register(
        cfg, uri, tags={"promotion.decision": "rejected", "prefect.flow_run_id": "re-run"}, description="review"
    )
    assert again.version == first.version
    name = cfg.tracking.registered_model
    assert [str(v.version) for v in registry.client(cfg).search_model_versions(f"name='{name}'")] == [first.version]
    assert again.tags["prefect.flow_run_id"] == "re-run" and again.aliases == ("challenger",)
    assert registry.client(cfg).get_model_version(name, again.version).description == "review"

    other = registry.register(cfg, _folder(cfg, "next"), tags={})  # another model is another version
    assert other.version != first.version
