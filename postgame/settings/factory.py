"""Settings of the task factory and the traffic simulator (section `factory:` of postgame.yaml; `tasks:` is still
read)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SPLITS = ("train", "eval", "holdout")  # splits of seed projects
INDOMAIN = "indomain"  # held-out bugs of train projects: the instance split that is never trained on
DEV = "dev"  # a share of those held out for tuning: settings are chosen on it, never decided on it
INSTANCE_SPLITS = (*SPLITS, INDOMAIN, DEV)

# The mutation operators `evals.factory.mutate` registers; named here so that a config naming another fails at load
# without the config importing the factory (a test keeps the two lists equal).
OPERATOR_NAMES = (
    "change_constant",
    "flip_arithmetic",
    "flip_boolean",
    "flip_comparison",
    "negate_condition",
    "off_by_one_index",
    "off_by_one_range",
    "off_by_one_slice",
    "remove_statement",
    "swap_arguments",
    "swap_statements",
    "wrong_return",
)


class SimulatorSettings(BaseModel):
    """`postgame simulate`: the champion attempts train tasks; each attempt becomes a schema-v1 log record."""

    model_config = ConfigDict(extra="forbid")

    log_prefix: str = Field(
        "agent-logs", description="Store prefix of the log objects: <prefix>/dt=YYYY-MM-DD/part-NNNN.jsonl.gz."
    )
    days: int = Field(
        1, ge=1, description="Sessions are spread over this many calendar days (UTC), ending now: one partition a day."
    )
    duplicate_rate: float = Field(0.0, ge=0, le=1, description="Share of sessions re-sent as an exact duplicate line.")
    malformed_rate: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of sessions followed by one broken line (half unparsable, half off-schema); reported exactly.",
    )
    secret_rate: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of sessions whose tool output leaks a fake secret (AWS key, GitHub token, private key, bearer token, password in URL, e-mail).",
    )
    batch_size: int = Field(
        8,
        ge=1,
        description="Prompts given to a single-answer policy per generate() call (an agent's episodes are all "
        "handed to the runner at once).",
    )
    usd_per_1k_tokens: float = Field(
        0.0, ge=0, description="Price per 1k tokens added to the CPU-time cost of a session."
    )


class OwnProjectsSettings(BaseModel):
    """A team's own repositories (`postgame factory add`): where they are kept, how they are built, their role."""

    model_config = ConfigDict(extra="forbid")

    split: Literal["train", "eval", "holdout"] = Field(
        "train",
        description="Role of every added project: train = in-domain (its bugs are trained on, a seeded share held out "
        "as `indomain`, its mined real bugs all `indomain`); eval / holdout = an unseen-project guard. "
        "factory.split_projects pins one project otherwise.",
    )
    instances_per_project: int = Field(40, gt=0, description="Synthetic instances kept per added project.")
    candidates_per_project: int = Field(240, gt=0, description="Most mutants tried per added project.")
    timeout_s: float = Field(
        120.0, gt=0, description="Wall-clock limit of one test run of an added project (its whole suite, at base)."
    )
    pip_download_args: list[str] = Field(
        default_factory=list,
        description="Extra arguments of the host's `pip download` that fetches an added project's wheels "
        "(e.g. ['--no-index', '--find-links=/wheels'] offline, ['--index-url=URL'] for a mirror).",
    )
    mine_runs: int = Field(3, ge=2, description="Runs of each side of a mined commit; tests that disagree are dropped.")

    @model_validator(mode="after")
    def _check(self) -> OwnProjectsSettings:
        """instances_per_project <= candidates_per_project."""
        if self.instances_per_project > self.candidates_per_project:
            raise ValueError(
                f"factory.own.instances_per_project = {self.instances_per_project} exceeds "
                f"factory.own.candidates_per_project = {self.candidates_per_project}"
            )
        return self


class FactorySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, description="Everything the factory builds is deterministic from this seed.")
    seeds_dir: str = Field("", description="Folder of seed projects; empty = the ones shipped in evals/seeds.")
    projects: list[str] = Field(default_factory=list, description="Seed projects to use; empty = all found.")
    operators: list[str] = Field(
        default_factory=list, description="Mutation operators by name; empty = all registered."
    )
    candidates_per_project: int = Field(240, gt=0, description="Most mutants tried per project (in seeded order).")
    instances_per_project: int = Field(
        60,
        gt=0,
        description="Validated instances kept per project; trying stops once reached (7 train projects x 60 + 5 "
        "guard projects x guard_instances_per_project 27 = 555).",
    )
    validation_runs: int = Field(2, ge=2, description="Harness runs per candidate; results that disagree drop it.")
    timeout_s: float = Field(
        10.0,
        gt=0,
        description="Wall-clock limit of one validation test run (a mutant can loop); clean suites take ~1 s.",
    )
    workers: int = Field(0, ge=0, description="Parallel validation processes; 0 = number of cores.")
    shipped_verdicts: bool = Field(
        True,
        description="Seed the verdict cache with the default world's test verdicts shipped in "
        "evals/factory/verdicts.tar.xz (each reused only where its mutant, suite, harness code and settings are "
        "the same; python scripts/pack_verdicts.py remakes it); false = every mutant's tests run here.",
    )
    split_fractions: dict[str, float] = Field(
        default_factory=lambda: {"train": 0.6, "eval": 0.2, "holdout": 0.2},
        description="Share of seed projects (not instances) in each split; a project belongs to exactly one.",
    )
    split_projects: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Pin projects to splits, e.g. {holdout: [semver]}; the rest are drawn by seed.",
    )
    indomain_fraction: float = Field(
        0.5,
        ge=0,
        lt=1,
        description="Share of each train project's instances set aside as split `indomain`: new bugs "
        "in the projects the model serves, never trained on (seeded, per project).",
    )
    dev_fraction: float = Field(
        0.3333,
        ge=0,
        lt=1,
        description="Share of each train project's held-out bugs (`indomain_fraction`) moved to split `dev`: the "
        "bugs settings are tuned on, so that the gate decides (`indomain`) on bugs no setting was chosen on "
        "(seeded, per project; never trained on either). 0 = no dev split, the shipped world.",
    )
    guard_instances_per_project: int = Field(
        27,
        ge=0,
        description="Validated instances kept per eval / holdout seed project; 0 = instances_per_project. The "
        "gate grades `promote.guard_instances` of each guard split, so guard projects need fewer than train ones.",
    )
    store_prefix: str = Field("tasks", description="Store prefix of build manifests, instances and git bundles.")
    envs_prefix: str = Field("envs", description="Store prefix of the content-addressed environment snapshots.")
    simulate: SimulatorSettings = SimulatorSettings()
    own: OwnProjectsSettings = OwnProjectsSettings()

    @model_validator(mode="after")
    def _check(self) -> FactorySettings:
        """operators are registered names; split_fractions has exactly the keys train, eval, holdout, each >= 0,
        summing to 1; split_projects pins each project to one of those splits at most; instances_per_project <=
        candidates_per_project."""
        unknown = sorted(set(self.operators) - set(OPERATOR_NAMES))
        if unknown:
            raise ValueError(f"factory.operators = {unknown}: unknown; valid names: {', '.join(OPERATOR_NAMES)}")
        if set(self.split_fractions) != set(SPLITS):
            raise ValueError(
                f"factory.split_fractions keys = {sorted(self.split_fractions)}: must be exactly {list(SPLITS)}"
            )
        total = sum(self.split_fractions.values())
        if any(v < 0 for v in self.split_fractions.values()) or abs(total - 1) > 1e-6:
            raise ValueError(
                f"factory.split_fractions = {self.split_fractions}: must be ≥ 0 and sum to 1 (sum {total})"
            )
        if not set(self.split_projects) <= set(SPLITS):
            raise ValueError(f"factory.split_projects keys = {sorted(self.split_projects)}: allowed {list(SPLITS)}")
        pinned = [p for names in self.split_projects.values() for p in names]
        twice = sorted({p for p in pinned if pinned.count(p) > 1})
        if twice:
            raise ValueError(
                f"factory.split_projects pins {twice} to more than one split; a project is in one split only"
            )
        if self.instances_per_project > self.candidates_per_project:
            raise ValueError(
                f"factory.instances_per_project = {self.instances_per_project} exceeds "
                f"factory.candidates_per_project = {self.candidates_per_project}"
            )
        return self
