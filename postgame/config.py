"""One typed config for every stage, loaded from one YAML file with env overrides.

Where it comes from, first match wins: `--config FILE`, `$POSTGAME_CONFIG`, `./postgame.yaml`, built-in defaults.
Env overrides: `POSTGAME_<SECTION>__<KEY>=value` (e.g. `POSTGAME_EVAL__TIMEOUT_S=30`); values are parsed as YAML.
All state lives under `home` (`$POSTGAME_HOME`, default `./.postgame`).

Unknown keys and bad values fail at load with a `ConfigError` naming the key, the value and what is allowed.
Importing this module has no side effects: nothing is created until a command asks for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from postgame.errors import ConfigError
from postgame.settings.agent import AgentSettings
from postgame.settings.demo import CostSettings, DemoSettings
from postgame.settings.factory import FactorySettings
from postgame.settings.harness import HarnessSettings
from postgame.settings.ingest import IngestSettings
from postgame.settings.operate import OperateSettings
from postgame.settings.promote import PromoteSettings
from postgame.settings.runner import RunnerSettings
from postgame.settings.scaffold import ScaffoldSettings
from postgame.settings.train import CurateSettings, TrainSettings
from postgame.settings.validate import ValidateSettings

ENV_PREFIX = "POSTGAME_"
RESERVED_ENV = {"POSTGAME_HOME", "POSTGAME_CONFIG"}
SECTION_SPELLINGS = (("factory", "tasks"),)  # a section with two names: an override goes to the one the file uses


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StackSettings(_Section):
    """The local stack that `postgame up` starts. Loopback only unless `host` says otherwise.

    Prefect and MLflow keep their state in SQLite files under home (`database: sqlite`, the embedded default) or in
    PostgreSQL (`database: postgres`): a local server that `postgame up` starts from the Debian package, or the
    server of `database_url` (docs/database.md)."""

    host: str = Field("127.0.0.1", description="Interface every service binds to.")
    prefect_port: int = Field(4200, ge=1, le=65535, description="Prefect server (UI and API).")
    mlflow_port: int = Field(5000, ge=1, le=65535, description="MLflow tracking server and model registry.")
    s3_port: int = Field(8333, ge=1, le=65535, description="SeaweedFS's S3 API (the object store).")
    weed_port_base: int = Field(
        19330,
        ge=1024,
        le=65500,
        description="SeaweedFS's internal ports: this one and the next 6 (master, volume, "
        "filer, each with its gRPC port, and the S3 gRPC port).",
    )
    start_timeout_s: float = Field(
        90.0,
        gt=0,
        description="`postgame up` fails, naming the services and their "
        "logs, when they are not healthy within this many seconds.",
    )
    database: Literal["sqlite", "postgres"] = Field(
        "sqlite",
        description="Where Prefect and MLflow keep their state: SQLite files under home, or PostgreSQL (the "
        "production database of both; a local server started by `postgame up` unless database_url is set).",
    )
    database_url: SecretStr = Field(
        SecretStr(""),
        description="An external PostgreSQL server, postgresql://USER[:PASSWORD]@HOST[:PORT]: its databases "
        "`prefect` and `mlflow` are used (created when missing) and no local server is started; prefer "
        "POSTGAME_STACK__DATABASE_URL in the environment. Empty = the local server.",
    )
    postgres_port: int = Field(
        5442, ge=1, le=65535, description="The local PostgreSQL (`database: postgres`, no database_url), on `host`."
    )

    @model_validator(mode="after")
    def _check(self) -> StackSettings:
        """database_url is a postgresql:// URL without a database name, and only with `database: postgres`."""
        url = self.database_url.get_secret_value()
        if url and self.database != "postgres":
            raise ValueError(f"database_url is set but database = {self.database!r}: set database: postgres")
        if url and (not url.startswith(("postgresql://", "postgres://")) or urlsplit(url).path.strip("/")):
            raise ValueError(
                f"database_url = {mask_url(url)!r} must be the postgresql:// URL of a server: user, password, "
                "host and port, no database name (postgame uses the databases `prefect` and `mlflow`)"
            )
        return self


_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+@", re.IGNORECASE)


def mask_url(text: str) -> str:
    """`text` with the password of every URL in it replaced by ***: what may be printed of a database URL."""
    return _URL_PASSWORD.sub(r"\1***@", text)


class StoreSettings(_Section):
    """The object store holding logs, snapshots and task environments.

    `uri` is `s3://bucket` (SeaweedFS of the stack or any S3) or a folder path. Empty = `s3://postgame` when the stack
    runs, else the folder `<home>/store`. Credentials come from env (`AWS_ACCESS_KEY_ID`, ...) or these keys; they are
    never logged.
    """

    uri: str = Field(
        "", description="s3://bucket or a folder; empty = s3://postgame when the stack runs, else <home>/store."
    )
    endpoint_url: str = Field("", description="S3 endpoint; empty = the local stack's SeaweedFS.")
    access_key_id: SecretStr = Field(SecretStr(""), description="Prefer AWS_ACCESS_KEY_ID in the environment.")
    secret_access_key: SecretStr = Field(SecretStr(""), description="Prefer AWS_SECRET_ACCESS_KEY in the environment.")
    region: str = Field("us-east-1", description="S3 region name given to the client.")


class TrackingSettings(_Section):
    """MLflow. Empty `tracking_uri` = the stack's server when it runs, else `sqlite:///<home>/mlflow.db`."""

    tracking_uri: str = Field(
        "",
        description="MLflow tracking (and registry) URI; empty = the stack's server "
        "when it runs, else sqlite:///<home>/mlflow.db.",
    )
    experiment: str = Field("postgame", description="MLflow experiment of the cycle, training and bootstrap runs.")
    registered_model: str = Field(
        "postgame-policy",
        description="Registered model whose versions are the candidates; aliases `champion` and `challenger`.",
    )


class BootstrapSettings(_Section):
    """`postgame bootstrap`: how the base policy is pre-trained (models/bootstrap.py). Changing any key changes the
    base's content hash, so the shipped checkpoint no longer matches and is rebuilt by `--from-scratch`."""

    seed: int = Field(0, description="Every draw of data and every initial weight follows from it.")
    threads: int = Field(2, ge=1, description="torch threads; the same value gives the same weights.")
    stdlib_max_files: int = Field(200, ge=0, description="Standard library modules read (sorted; tests excluded).")
    stdlib_max_file_bytes: int = Field(40_000, gt=0, description="Larger stdlib modules are skipped.")
    stdlib_mutations_per_file: int = Field(20, ge=0, description="Synthetic repairs made per stdlib module.")
    seq_len: int = Field(192, gt=16, description="Tokens per pre-training chunk.")
    batch_size: int = Field(8, gt=0, description="Sequences per optimizer step, every stage.")
    learning_rate: float = Field(1.5e-3, gt=0, description="AdamW peak learning rate (cosine decay after warmup).")
    warmup_steps: int = Field(100, ge=0, description="Linear warmup steps before the peak learning rate.")
    lm_steps: int = Field(2000, ge=0, description="Stage 1: next-token pre-training on the code corpus.")
    curriculum_steps: int = Field(600, ge=0, description="Stage 2: copy a span; copy and edit one token; repair.")
    repair_steps: int = Field(6000, ge=0, description="Stage 3: SFT on synthetic repairs and train-split gold.")
    seed_code_share: float = Field(0.5, ge=0, le=1, description="Share of pre-training chunks from train projects.")
    train_split: Literal["withheld", "shown"] = Field(
        "shown",
        description="The train split's bugs, the pool the demo's traffic serves: shown = their mutants and gold answers "
        "are in the repair data (the shipped base's recipe; it then knows every bug its traffic holds, and no candidate "
        "trained on that traffic beat it: BENCHMARKS.md); withheld = neither is, so traffic brings the base work it "
        "has not seen, as production brings a deployed model (benchmarks/bench_production_pool.py).",
    )
    project_repair_share: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Share of the seed projects' other mutants repaired in stage 3 (a fixed draw by project, path "
        "and mutation key); the base still reads all their code. 1.0 (the shipped recipe) drills it on every one.",
    )
    gold_share: float = Field(
        0.1, ge=0, le=1, description="Share of stage-3 examples that are train-split gold (train_split: shown)."
    )
    replay_share: float = Field(0.1, ge=0, le=1, description="Share of stage-3 batches that replay pre-training.")
    precision: Literal["bf16", "fp32"] = Field(
        "fp32",
        description="Number format of the training steps of the base and the agent base on the CPU: fp32 (the "
        "shipped checkpoints' recipe: ~2 h on 2 cores) or bf16 autocast (~1.4x faster with native bfloat16, "
        "AVX512-BF16 or AMX; ~12x slower on an AVX2-only CPU: benchmarks/bench_precision.py). The build's first line "
        "says what each takes here.",
    )


class PolicySettings(_Section):
    """The policy. Default: the base shipped in models/base (a small Qwen2 pre-trained by `postgame bootstrap`);
    the architecture keys below are the base's and that of an untrained embedded policy."""

    base_model: str = Field(
        "",
        description="A local Hugging Face checkpoint folder to start from; empty = the "
        "pre-trained base shipped in models/base (an untrained embedded one, "
        "built under home, where it is missing).",
    )
    engine: Literal["transformers", "vllm"] = Field(
        "transformers", description="vllm needs GPUs: pip install 'postgame[gpu]'."
    )
    hidden_size: int = Field(192, gt=0, description="Model width (Qwen2 hidden_size).")
    intermediate_size: int = Field(576, ge=0, description="MLP width; 0 = 2 x hidden_size.")
    num_layers: int = Field(4, gt=0, description="Transformer layers.")
    num_heads: int = Field(4, gt=0, description="Attention heads.")
    vocab_size: int = Field(
        4096,
        ge=300,
        description="Size of the byte-level BPE vocabulary trained on the seed "
        "projects' code (256 bytes + merges + special tokens).",
    )
    max_position_embeddings: int = Field(
        2048, gt=0, description="Longest sequence the model takes (prompt + completion; also DPO's max_length)."
    )
    max_prompt_tokens: int = Field(
        320,
        gt=0,
        description="Longer prompts are truncated (left side kept: the code window and the answer format come last).",
    )
    max_new_tokens: int = Field(128, gt=0, description="Longest completion generated.")
    temperature: float = Field(
        1.0, gt=0, description="Sampling temperature (traffic, pass@k, GRPO); evaluation is greedy."
    )
    seed: int = Field(0, description="Default sampling seed, and the initial weights of an embedded policy.")
    prompt_context: Literal["oracle", "file"] = Field(
        "oracle",
        description="What a prompt shows: `oracle` = the function the failing tests reach (SWE-bench's "
        "oracle retrieval; what a small model can act on), `file` = the localised files whole.",
    )
    bootstrap: BootstrapSettings = BootstrapSettings()


class Config(_Section):
    """Every section of postgame.yaml (reference: docs/config.md, written from these models)."""

    home: Path = Field(
        Path(".postgame"),
        description="All state: servers' data, logs, caches, outputs; $POSTGAME_HOME wins over the file.",
    )
    stack: StackSettings = StackSettings()
    store: StoreSettings = StoreSettings()
    tracking: TrackingSettings = TrackingSettings()
    ingest: IngestSettings = IngestSettings()
    validate_: ValidateSettings = Field(ValidateSettings(), alias="validate")
    curate: CurateSettings = CurateSettings()
    policy: PolicySettings = PolicySettings()
    scaffold: ScaffoldSettings = Field(
        ScaffoldSettings(),
        description="What the agent scaffold does between the "
        "policy's completions and the answer it submits (models/answer.py).",
    )
    train: TrainSettings = TrainSettings()
    eval: HarnessSettings = HarnessSettings()
    agent: AgentSettings = Field(
        AgentSettings(), description="The agent environment: tools and episode limits (evals/agent/)."
    )
    factory: FactorySettings = Field(
        FactorySettings(),
        validation_alias=AliasChoices("factory", "tasks"),
        description="The coding-task world and the traffic simulator.",
    )
    promote: PromoteSettings = PromoteSettings()
    cost: CostSettings = CostSettings()
    runner: RunnerSettings = RunnerSettings()
    operate: OperateSettings = Field(
        OperateSettings(),
        description="Continuous operation: schedule, one cycle at a time, retries, service timeouts, auth.",
    )
    demo: DemoSettings = DemoSettings()

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _set_path(data: dict[str, Any], dotted: list[str], value: Any) -> None:
    node = data
    for part in dotted[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"config error: {'.'.join(dotted)} overrides a non-section value")
    node[dotted[-1]] = value


def _env_overrides(env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or name in RESERVED_ENV:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if len(path) < 2 or not all(path):
            continue  # not an override (e.g. POSTGAME_SOMETHING of another tool); overrides are SECTION__KEY
        try:
            value = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError:
            value = raw
        _set_path(out, path, value)
    return out


def _one_spelling(over: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """`over` with each section of two names (SECTION_SPELLINGS) under the name `data` (the file) uses, so that
    `POSTGAME_FACTORY__SEED` and a file's `tasks:` section merge instead of clashing as two sections."""
    out = dict(over)
    for names in SECTION_SPELLINGS:
        spelled = next((name for name in names if name in data), names[0])
        for name in names:
            if name != spelled and name in out:
                out[spelled] = _merge(out.get(spelled, {}), out.pop(name))
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _describe(err: Mapping[str, Any]) -> str:
    key = ".".join(str(p) for p in err["loc"]).replace("validate_", "validate")
    value = err.get("input")
    if err["type"] == "extra_forbidden":
        return f"config error: unknown key {key!r} (value {value!r}); check the spelling against postgame.yaml.example"
    allowed = err["msg"]
    ctx = err.get("ctx") or {}
    if "expected" in ctx:
        allowed = f"allowed: {ctx['expected']}"
    return mask_url(f"config error: {key} = {value!r}: {allowed}")


def config_path(explicit: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    environ: Mapping[str, str] = os.environ if env is None else env
    if explicit:
        return Path(explicit)
    if environ.get("POSTGAME_CONFIG"):
        return Path(environ["POSTGAME_CONFIG"])
    default = Path("postgame.yaml")
    return default if default.exists() else None


def load_config(path: str | Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Load, merge env overrides, validate. Raises ConfigError with one line naming key, value and rule."""
    env = dict(os.environ if env is None else env)
    data: dict[str, Any] = {}
    file = config_path(path, env)
    if file is not None:
        if not file.exists():
            raise ConfigError(f"config error: file {str(file)!r} does not exist")
        try:
            loaded = yaml.safe_load(file.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"config error: {file} is not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"config error: {file} must hold a mapping of sections, got {type(loaded).__name__}")
        data = loaded
    data = _merge(data, _one_spelling(_env_overrides(env), data))
    if env.get("POSTGAME_HOME"):
        data["home"] = env["POSTGAME_HOME"]
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc.errors()[0])) from None
    return cfg.model_copy(update={"home": cfg.home.expanduser().absolute()})


def answering_once(cfg: Config) -> Config:
    """`cfg` with the policy answering once (`agent.enabled: false`): for what measures the single answer itself (its
    benchmarks), whatever the config says."""
    return cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"enabled": False})})
