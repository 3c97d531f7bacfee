"""`postgame agent`: a policy, or a script of tool calls, as an agent in the sandboxed environment.

    postgame agent run --instances F.jsonl --repos DIR [--policy champion|VERSION|PATH] --out DIR [--tools all] [--json]
    postgame agent replay --instances F.jsonl --repos DIR --script S.jsonl --out DIR [--tools all] [--json]

Each instance is one episode (evals/agent/): the policy's tool calls until `submit`, a limit or a fault, the working
copy's diff graded by the harness. Writes OUT/trajectories.jsonl (OpenAI chat messages with tool calls) and
OUT/report.json (outcome mix, resolved, turns and tokens per episode, each harness report). A replay script holds one
JSON object a line, `{"tool": NAME, "args": {...}}`, with an optional `"instance_id"` to address one instance.
`--tools all` (or a comma-separated list) overrides `agent.tools`, bash included. While the episodes run, a progress
bar over them on stderr (on a terminal, without --json). Exits 0 when the episodes ran, whatever they resolved; 2
with one line when they cannot run.
"""

from __future__ import annotations

from pathlib import Path

import typer

from postgame import runtime
from postgame.console import echo_json

agent_app = typer.Typer(no_args_is_help=True, help="Run a policy or a script of tool calls as an agent.")


def _fail(message: str) -> None:
    typer.echo(f"postgame agent: error: {message}", err=True)
    raise typer.Exit(2)


def _settings(tools: str | None, max_steps: int | None):
    from pydantic import ValidationError

    cfg = runtime.current_config()
    overrides = {k: v for k, v in {"tools": tools, "max_steps": max_steps}.items() if v is not None}
    try:
        agent = cfg.agent.model_validate({**cfg.agent.model_dump(), **overrides})
    except ValidationError as exc:
        err = exc.errors()[0]
        _fail(f"agent.{'.'.join(map(str, err['loc']))} = {err.get('input')!r}: {err['msg']}")
    return cfg, agent


def _instances(path: Path):
    from evals.harness.instance import HarnessInputError, load_instances

    try:
        return load_instances(path)
    except HarnessInputError as exc:
        _fail(str(exc))


def _run(cfg, agent, instances, factory, repos: Path | None, out: Path, as_json: bool) -> None:
    from evals.agent.batch import run_episodes
    from postgame.console import progress_bar

    with progress_bar("episodes", len(instances), enabled=not as_json) as tell:
        report = run_episodes(
            instances,
            factory,
            agent=agent,
            harness=cfg.eval,
            repos_dir=repos,
            out_dir=out,
            runner=cfg.runner,
            progress=lambda instance_id, done: tell(f"{instance_id} done", done),
        )
    if as_json:
        echo_json({**report.to_dict(), "out": str(out)})
    else:
        typer.echo(report.summary())
        typer.echo(f"trajectories: {out / 'trajectories.jsonl'}; report: {out / 'report.json'}")


def replay(
    instances: Path = typer.Option(..., "--instances", help="Instances (SWE-bench JSONL)."),
    repos: Path | None = typer.Option(None, "--repos", help="Folder of <owner>__<name> git repositories."),
    script: Path = typer.Option(..., "--script", help="Tool calls, one JSON object a line."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    tools: str | None = typer.Option(None, "--tools", help="'all' or a comma-separated list of tools."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Override agent.max_steps."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Play a script of tool calls as one episode per instance and grade each (debug an environment)."""
    from evals.agent.batch import load_script

    cfg, agent = _settings(tools, max_steps)
    try:
        factory = load_script(script)
    except (OSError, ValueError) as exc:
        _fail(str(exc))
    _run(cfg, agent, _instances(instances), factory, repos, out, as_json)


def run(
    instances: Path = typer.Option(..., "--instances", help="Instances (SWE-bench JSONL)."),
    repos: Path | None = typer.Option(None, "--repos", help="Folder of <owner>__<name> git repositories."),
    policy: str = typer.Option("champion", "--policy", help="champion, a registry version, or a checkpoint folder."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    tools: str | None = typer.Option(None, "--tools", help="'all' or a comma-separated list of tools."),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Override agent.max_steps."),
    sample: bool = typer.Option(False, "--sample", help="Sample turns (policy.temperature) instead of greedy."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run a policy as an agent, one episode per instance, and grade each."""
    from models.agent import policy_factory

    cfg, agent = _settings(tools, max_steps)
    path, name = _policy_dir(cfg, policy)
    factory = policy_factory(cfg, path, name, greedy=not sample)
    _run(cfg, agent, _instances(instances), factory, repos, out, as_json)


def _policy_dir(cfg, policy: str) -> tuple[Path, str]:
    """The checkpoint folder of `champion` (the base before any promotion), a registry version, or a folder."""
    if Path(policy).is_dir():
        return Path(policy), policy
    from models.policy import load_champion
    from models.registry import download_version

    if policy == "champion":
        champ = load_champion(cfg)
        return champ.path, f"{champ.name}@{champ.version}"
    if policy.lstrip("v").isdigit():
        version = policy.lstrip("v")
        return download_version(cfg, version), f"{cfg.tracking.registered_model}@{version}"
    _fail(f"--policy {policy!r} is not 'champion', a version number or a checkpoint folder")
    raise AssertionError


def register(app: typer.Typer) -> None:
    agent_app.command("run")(run)
    agent_app.command("replay")(replay)
    app.add_typer(agent_app, name="agent")
