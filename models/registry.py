"""The MLflow model registry: candidates are registered versions, the serving model is the alias `champion`.

A version is logged as an MLflow pyfunc whose artifact is the Hugging Face checkpoint folder, so it loads anywhere
with `mlflow.pyfunc.load_model("models:/postgame-policy@champion")` and serves as plain text-in, text-out.
Aliases are read from `get_registered_model(...).aliases`, never from `search_model_versions` (mlflow#16734).

Aliases: `challenger` names the version under review now (removed once it is decided), `champion` the serving one.
Moving `champion` is compare-and-set (`move_champion(..., expected=V)`: refused with `StaleChampion` when the champion
is no longer V) and every move is recorded as a registered-model tag `champion.move.NNNNNN` holding `{"from", "to",
"why", "by", "at", "rollback"}`; a rollback restores the champion before the current one in the promotion line those
moves draw (`rollback_target`), never a version that was rolled back from. Tags rather than a JSON artifact: a
registered model has no artifact store of its own (an artifact would live in some run), while its tags show on the
model's page in the MLflow UI, need no run, and come back with the one `get_registered_model` call that also reads the
aliases. MLflow has no conditional write, so the check and the move are two requests: a race inside those milliseconds
is not excluded here (the cycle runs one at a time); a move from a stale read, however old, is.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from models.scores import Evaluation, SplitScores
from postgame.config import Config
from postgame.errors import RollbackError, StaleChampion

CHAMPION = "champion"
CHALLENGER = "challenger"
MOVE_TAG = "champion.move."


def _pyfunc_class():
    from mlflow.pyfunc import PythonModel

    class PolicyModel(PythonModel):
        """Text in (a prompt per row), completion out; generation settings come with the checkpoint."""

        def load_context(self, context):
            from transformers import AutoModelForCausalLM

            from models.tokenizer import load_tokenizer  # the tokenizer as the checkpoint saved it

            self.tokenizer = load_tokenizer(context.artifacts["hf_dir"])
            self.model = AutoModelForCausalLM.from_pretrained(context.artifacts["hf_dir"])

        def predict(self, context, model_input, params=None):
            import torch

            prompts = list(model_input["prompt"]) if hasattr(model_input, "columns") else list(model_input)
            max_new = int((params or {}).get("max_new_tokens", 64))
            outs = []
            for prompt in prompts:
                ids = self.tokenizer(prompt, return_tensors="pt")
                with torch.no_grad():
                    gen = self.model.generate(
                        **ids, max_new_tokens=max_new, do_sample=False, pad_token_id=self.tokenizer.pad_token_id
                    )
                outs.append(self.tokenizer.decode(gen[0, ids["input_ids"].shape[1] :], skip_special_tokens=True))
            return outs

    return PolicyModel


@dataclass(frozen=True)
class VersionInfo:
    name: str
    version: str
    run_id: str
    tags: dict[str, str]
    aliases: tuple[str, ...] = ()

    @property
    def uri(self) -> str:
        return f"models:/{self.name}/{self.version}"

    def metric(self, key: str) -> float | None:
        value = self.tags.get(f"eval.{key}")
        return float(value) if value is not None else None


def client(cfg: Config):
    from mlflow import MlflowClient

    from postgame.runtime import resolve

    uri = resolve(cfg).tracking_uri
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def _info(cfg: Config, mv) -> VersionInfo:
    aliases = tuple(a for a, v in _aliases(cfg).items() if str(v) == str(mv.version))
    return VersionInfo(
        name=mv.name, version=str(mv.version), run_id=mv.run_id or "", tags=dict(mv.tags or {}), aliases=aliases
    )


def _aliases(cfg: Config) -> dict[str, str]:
    from mlflow.exceptions import MlflowException

    try:
        model = client(cfg).get_registered_model(cfg.tracking.registered_model)
    except MlflowException:
        return {}
    return {alias: str(version) for alias, version in (model.aliases or {}).items()}


def version_by_alias(cfg: Config, alias: str) -> VersionInfo | None:
    version = _aliases(cfg).get(alias)
    if version is None:
        return None
    return _info(cfg, client(cfg).get_model_version(cfg.tracking.registered_model, version))


def champion_version(cfg: Config) -> VersionInfo | None:
    return version_by_alias(cfg, CHAMPION)


def log_policy(cfg: Config, model_dir: Path, *, run_id: str) -> str:
    """Log the checkpoint as a pyfunc model of `run_id`; returns its URI (`models:/m-...`), loadable anywhere."""
    import mlflow

    from postgame.runtime import resolve

    active = mlflow.active_run()
    if active is not None and active.info.run_id == run_id:
        return _log_pyfunc(model_dir)
    resolve(cfg)  # points MLflow at the stack
    # MLflow refuses to resume a run of another experiment than the process's active one (set by an earlier
    # set_experiment, e.g. of another command in the same process): make the run's own experiment the active one.
    mlflow.set_experiment(experiment_id=client(cfg).get_run(run_id).info.experiment_id)
    with mlflow.start_run(run_id=run_id):
        return _log_pyfunc(model_dir)


# What the pyfunc imports to load and serve a checkpoint (MLflow adds itself), pinned to the versions installed here.
# Named rather than inferred: MLflow infers them by loading the model in a new process on every log_model (~6 s of
# a 2-core machine for each registered version, ~60 s when it is busy), and that guess left out torch.
SERVING_PACKAGES = ("torch", "transformers", "tokenizers", "cloudpickle")


def serving_requirements() -> list[str]:
    from importlib.metadata import version

    return [f"{name}=={version(name)}" for name in SERVING_PACKAGES]


def _log_pyfunc(model_dir: Path) -> str:
    import mlflow

    info = mlflow.pyfunc.log_model(
        name="policy",
        python_model=_pyfunc_class()(),
        artifacts={"hf_dir": str(model_dir)},
        pip_requirements=serving_requirements(),
    )
    return info.model_uri


def register(cfg: Config, model_uri: str, *, tags: dict[str, str], description: str = "") -> VersionInfo:
    """Register a logged model as a new version of the policy, tag it and point `challenger` at it.

    A model a version already holds (promote re-run after a crash past its registration, the candidate cached) gets
    that version back, the tags written over it: one candidate is one version."""
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    c = client(cfg)
    name = cfg.tracking.registered_model
    held = [v for v in c.search_model_versions(f"name='{name}'") if v.source == model_uri]
    if held:
        mv = min(held, key=lambda v: int(v.version))
        for key, value in tags.items():
            c.set_model_version_tag(name, str(mv.version), key, str(value))
    else:
        mv = mlflow.register_model(model_uri, name, tags={k: str(v) for k, v in tags.items()})
    if description:
        c.update_model_version(mv.name, str(mv.version), description=description)
    c.set_registered_model_alias(mv.name, CHALLENGER, str(mv.version))
    return _info(cfg, c.get_model_version(mv.name, str(mv.version)))


def register_base(
    cfg: Config,
    model_dir: Path,
    *,
    run_id: str | None = None,
    tags: dict[str, str] | None = None,
    description: str = "The base policy (postgame bootstrap).",
) -> tuple[VersionInfo, bool]:
    """Log and register the base checkpoint at `model_dir` as a version (tag `origin: bootstrap`) and make it
    `champion` when there is none yet or the champion is an earlier base: the first cycle's candidate then has to
    beat a measured policy, not an empty one. `run_id` is the MLflow run to log it in (default: a new run
    `bootstrap`). Returns the version and whether it is champion now."""
    import mlflow

    from postgame.runtime import resolve

    if run_id is None:
        resolve(cfg)  # points MLflow at the stack
        mlflow.set_experiment(cfg.tracking.experiment)
        with mlflow.start_run(run_name="bootstrap") as run:
            run_id = run.info.run_id
    model_uri = log_policy(cfg, model_dir, run_id=run_id)
    version = register(
        cfg, model_uri, tags={"origin": "bootstrap", "lineage.run_id": run_id, **(tags or {})}, description=description
    )
    current = champion_version(cfg)
    made = current is None or current.tags.get("origin") == "bootstrap"
    if made:
        set_champion(cfg, version.version, why="the base policy: the first champion")
        clear_challenger(cfg, version.version)
    return version, made


def get_version(cfg: Config, version: str) -> VersionInfo:
    return _info(cfg, client(cfg).get_model_version(cfg.tracking.registered_model, str(version)))


def actor() -> str:
    """Who is acting from this process: $POSTGAME_ACTOR, else the OS user."""
    try:
        return os.environ.get("POSTGAME_ACTOR") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@dataclass(frozen=True)
class ChampionMove:
    """One move of `champion`: from which version (None = no champion before), to which, why, by whom, when, and
    whether it was a rollback (the version it left was rolled back from)."""

    to: str
    from_: str | None
    why: str
    by: str
    at: float
    rollback: bool = False

    def to_dict(self) -> dict:
        return {
            "from": self.from_,
            "to": self.to,
            "why": self.why,
            "by": self.by,
            "at": self.at,
            "rollback": self.rollback,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ChampionMove:
        why = data.get("why", "")
        # Moves recorded before the flag existed say so only in their reason (`rollback(...)` wrote it that way);
        # read as plain moves, a registry's old rollbacks would send the next rollback back to the bad version.
        rollback = data.get("rollback", why.startswith("rollback from "))
        return cls(
            to=str(data["to"]),
            from_=None if data.get("from") is None else str(data["from"]),
            why=why,
            by=data.get("by", ""),
            at=float(data.get("at", 0)),
            rollback=bool(rollback),
        )


def promotion_line(moves: Sequence[ChampionMove]) -> list[str]:
    """The champions a rollback can go back through, oldest first, the last the one serving per the history.

    A move to V puts V last (once); a rollback also takes the version it left off the line: rolling back never
    brings back a version that was rolled back from (only a deliberate move to it does)."""
    line: list[str] = []
    for move in moves:
        if move.rollback and move.from_ is not None:
            line = [v for v in line if v != move.from_]
        line = [v for v in line if v != move.to] + [move.to]
    return line


def rollback_target(moves: Sequence[ChampionMove], current: str | None) -> str | None:
    """The version a rollback from `current` restores: the champion that served before it in the promotion line,
    or None when there is none."""
    earlier = [v for v in promotion_line(moves) if v != current]
    return earlier[-1] if current is not None and earlier else None


def champion_history(cfg: Config) -> list[ChampionMove]:
    """Every recorded champion move, oldest first."""
    from mlflow.exceptions import MlflowException

    try:
        model = client(cfg).get_registered_model(cfg.tracking.registered_model)
    except MlflowException:
        return []
    moves = sorted((k, v) for k, v in (model.tags or {}).items() if k.startswith(MOVE_TAG))
    return [ChampionMove.from_dict(json.loads(value)) for _, value in moves]


def move_champion(
    cfg: Config, to: str, *, expected: str | None, why: str, by: str, rollback: bool = False
) -> ChampionMove:
    """Point `champion` at version `to` if it still points at `expected` (None = no champion); record the move
    (`rollback`: it rolls back from `expected`, which leaves the promotion line).

    Raises StaleChampion when the champion changed since the caller read it."""
    c = client(cfg)
    name = cfg.tracking.registered_model
    current = _aliases(cfg).get(CHAMPION)
    if current != (str(expected) if expected is not None else None):
        raise StaleChampion(
            f"champion of {name} is {_v(current)}, not {_v(expected)} as this move assumed "
            f"(to v{to}: {why}); re-read it and decide again",
            expected=expected,
            actual=current,
        )
    c.get_model_version(name, str(to))  # the target exists (raises otherwise)
    move = ChampionMove(to=str(to), from_=current, why=why[:2000], by=by, at=round(time.time(), 3), rollback=rollback)
    c.set_registered_model_alias(name, CHAMPION, str(to))
    c.set_registered_model_tag(
        name, f"{MOVE_TAG}{len(champion_history(cfg)) + 1:06d}", json.dumps(move.to_dict(), sort_keys=True)
    )
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(move.at))
    tag_version(cfg, str(to), {"champion.since": stamp, "champion.by": by, "champion.why": why[:500]})
    return move


def _v(version: str | None) -> str:
    return f"v{version}" if version is not None else "none"


def set_champion(cfg: Config, version: str, *, why: str = "set directly", by: str | None = None) -> ChampionMove:
    """Make `version` champion whatever serves now (e.g. the first, base version); the move is recorded."""
    return move_champion(cfg, version, expected=_aliases(cfg).get(CHAMPION), why=why, by=by or actor())


def rollback(cfg: Config, *, to: str | None = None, why: str = "", by: str | None = None) -> ChampionMove:
    """Restore the champion that served before the current one in the promotion line (`rollback_target`), or version
    `to`, recording why. Compare-and-set like any move. Raises RollbackError when there is no earlier champion."""
    current = _aliases(cfg).get(CHAMPION)
    if to is None:
        history = champion_history(cfg)
        to = rollback_target(history, current)
        if to is None:
            left = [v for v in dict.fromkeys(m.from_ for m in history if m.rollback) if v not in (None, current)]
            gone = f"; rolled back from: {', '.join(map(_v, left))}" if left else ""
            raise RollbackError(
                f"no previous champion of {cfg.tracking.registered_model} to restore (current: "
                f"{_v(current)}{gone}); name one with --to V"
            )
    if str(to) == current:
        raise RollbackError(f"v{to} is already champion")
    reason = f"rollback from {_v(current)} to v{to}" + (f": {why}" if why else "")
    return move_champion(cfg, str(to), expected=current, why=reason, by=by or actor(), rollback=True)


def clear_challenger(cfg: Config, version: str) -> None:
    """Take `challenger` off `version` once it is decided (only if it still names that version)."""
    if _aliases(cfg).get(CHALLENGER) == str(version):
        client(cfg).delete_registered_model_alias(cfg.tracking.registered_model, CHALLENGER)


def set_description(cfg: Config, version: str, text: str) -> None:
    client(cfg).update_model_version(cfg.tracking.registered_model, str(version), description=text)


def store_scores(cfg: Config, run_id: str, scores: SplitScores) -> None:
    """A policy's per-instance scores on one graded set, kept in its run as `scores/<cache key>.json`."""
    client(cfg).log_dict(run_id, scores.to_dict(), f"scores/{scores.cache_key}.json")


def load_scores(cfg: Config, run_id: str, key: str) -> SplitScores | None:
    """The stored scores with this cache key, or None."""
    from mlflow.exceptions import MlflowException

    if not run_id:
        return None
    with tempfile.TemporaryDirectory(prefix="postgame-scores-") as tmp:
        try:
            path = client(cfg).download_artifacts(run_id, f"scores/{key}.json", tmp)
            return SplitScores.from_dict(json.loads(Path(path).read_text()))
        except (MlflowException, OSError, ValueError, KeyError):
            return None


def log_evaluation(cfg: Config, run_id: str, evaluation: Evaluation) -> None:
    """Headline metrics and `eval/per_instance.json` (both models' outcome on every graded instance) in run_id."""
    c = client(cfg)
    champ = evaluation.champion_splits or {}
    rows = []
    for split, scores in evaluation.candidate_splits.items():
        theirs = champ[split].by_id() if split in champ else {}
        for o in scores.outcomes:
            other = theirs.get(o.instance_id)
            rows.append(
                {
                    "split": split,
                    "instance_id": o.instance_id,
                    "project": o.project,
                    "candidate": asdict(o),
                    "champion": asdict(other) if other else None,
                }
            )
        c.log_metric(run_id, f"eval.{split}.resolved_rate", scores.rate)
        c.log_metric(run_id, f"eval.{split}.instances", scores.n)
        c.log_metric(run_id, f"eval.{split}.errors", scores.errors)
        if split in champ:
            c.log_metric(run_id, f"eval.{split}.champion_resolved_rate", champ[split].rate)
    c.log_metric(run_id, f"eval.{cfg.promote.metric}", evaluation.candidate.metric)
    c.log_dict(
        run_id,
        {
            "decide_split": evaluation.decide_split,
            "champion_version": evaluation.champion_version,
            "notes": list(evaluation.notes),
            "instances": rows,
        },
        "eval/per_instance.json",
    )


def tag_version(cfg: Config, version: str, tags: dict[str, str]) -> None:
    c = client(cfg)
    for key, value in tags.items():
        c.set_model_version_tag(cfg.tracking.registered_model, str(version), key, str(value))


def download_version(cfg: Config, version: str) -> Path:
    """The version's checkpoint folder, cached under home (registry artifacts are immutable)."""
    import mlflow.artifacts

    from postgame.runtime import resolve

    dest = cfg.home / "cache" / "models" / cfg.tracking.registered_model / str(version)
    if (dest / "MLmodel").exists():
        return _hf_dir(dest)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    resolve(cfg)  # points MLflow at the stack
    mlflow.artifacts.download_artifacts(
        artifact_uri=f"models:/{cfg.tracking.registered_model}/{version}", dst_path=str(tmp)
    )
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return _hf_dir(dest)


def _hf_dir(model_dir: Path) -> Path:
    """The checkpoint folder inside a downloaded pyfunc model (its `hf_dir` artifact keeps the source's name)."""
    found = sorted(p.parent for p in (model_dir / "artifacts").rglob("config.json"))
    if not found:
        raise FileNotFoundError(f"no checkpoint (config.json) under {model_dir / 'artifacts'}")
    return found[0]
