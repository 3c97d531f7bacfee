"""The MLflow model registry: candidates are registered versions, the serving model is the alias `champion`.

A version is logged as an MLflow pyfunc whose artifact is the Hugging Face checkpoint folder, so it loads anywhere
with `mlflow.pyfunc.load_model("models:/postgame-policy@champion")` and serves as plain text-in, text-out.
Aliases are read from `get_registered_model(...).aliases`, never from `search_model_versions` (mlflow#16734).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from postgame.config import Config

CHAMPION = "champion"
CHALLENGER = "challenger"


def _pyfunc_class():
    import mlflow.pyfunc

    class PolicyModel(mlflow.pyfunc.PythonModel):
        """Text in (a prompt per row), completion out; generation settings come with the checkpoint."""

        def load_context(self, context):
            from transformers import AutoModelForCausalLM, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(context.artifacts["hf_dir"])
            self.model = AutoModelForCausalLM.from_pretrained(context.artifacts["hf_dir"])

        def predict(self, context, model_input, params=None):
            import torch

            prompts = list(model_input["prompt"]) if hasattr(model_input, "columns") else list(model_input)
            max_new = int((params or {}).get("max_new_tokens", 64))
            outs = []
            for prompt in prompts:
                ids = self.tokenizer(prompt, return_tensors="pt")
                with torch.no_grad():
                    gen = self.model.generate(**ids, max_new_tokens=max_new, do_sample=False,
                                              pad_token_id=self.tokenizer.pad_token_id)
                outs.append(self.tokenizer.decode(gen[0, ids["input_ids"].shape[1]:], skip_special_tokens=True))
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
    return VersionInfo(name=mv.name, version=str(mv.version), run_id=mv.run_id or "", tags=dict(mv.tags or {}),
                       aliases=aliases)


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
    with mlflow.start_run(run_id=run_id):
        return _log_pyfunc(model_dir)


def _log_pyfunc(model_dir: Path) -> str:
    import mlflow

    info = mlflow.pyfunc.log_model(name="policy", python_model=_pyfunc_class()(), artifacts={"hf_dir": str(model_dir)})
    return info.model_uri


def register(cfg: Config, model_uri: str, *, tags: dict[str, str], description: str = "") -> VersionInfo:
    """Register a logged model as a new version of the policy, tag it and point `challenger` at it."""
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    mv = mlflow.register_model(model_uri, cfg.tracking.registered_model, tags={k: str(v) for k, v in tags.items()})
    c = client(cfg)
    if description:
        c.update_model_version(mv.name, str(mv.version), description=description)
    c.set_registered_model_alias(mv.name, CHALLENGER, str(mv.version))
    return _info(cfg, c.get_model_version(mv.name, str(mv.version)))


def set_champion(cfg: Config, version: str) -> None:
    client(cfg).set_registered_model_alias(cfg.tracking.registered_model, CHAMPION, str(version))


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
    mlflow.artifacts.download_artifacts(artifact_uri=f"models:/{cfg.tracking.registered_model}/{version}",
                                        dst_path=str(tmp))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return _hf_dir(dest)


def _hf_dir(model_dir: Path) -> Path:
    """The checkpoint folder inside a downloaded pyfunc model (its `hf_dir` artifact keeps the source's name)."""
    found = sorted(p.parent for p in (model_dir / "artifacts").rglob("config.json"))
    if not found:
        raise FileNotFoundError(f"no checkpoint (config.json) under {model_dir / 'artifacts'}")
    return found[0]
