"""Commands of the task factory (the coding-task world); `postgame factory ...` still works.

    postgame factory build [--seed N] [--force] [--json]     # build (or find) the catalog; counts per split
    postgame factory ls [--split NAME] [--json]              # instances: id, split, project, operator, F2P/P2P
    postgame factory show INSTANCE_ID [--prompt] [--json]    # one instance (statement, gold patch, tests)
    postgame factory export --split NAME --out DIR [--project NAME]   # DIR/instances.jsonl + DIR/repos/<owner>__<name>
    postgame factory add URL_OR_PATH [--ref REF] [--name NAME] [--test-cmd CMD] [--json]   # register a repository
    postgame factory projects [--json]                       # the registered repositories
    postgame factory remove NAME                             # take one out
    postgame factory mine NAME [--max N] [--json]            # real bug fixes from its history -> its indomain split

An exported split is evaluated with `postgame eval run --instances DIR/instances.jsonl --repos DIR/repos ...`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from postgame.console import echo_json

factory_app = typer.Typer(no_args_is_help=True, help="The task factory's catalog: build, list, show, export.")


@factory_app.command("build")
def build_cmd(
    seed: int | None = typer.Option(None, "--seed", help="Override factory.seed."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when this build is in the store."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object: build id, counts per split."),
) -> None:
    """Build the task catalog (seed projects → validated instances) or find it in the store."""
    from evals.factory.build import build_tasks
    from postgame import runtime

    progress = None if as_json else (lambda msg: typer.echo(f"  {msg}", err=True))
    result = build_tasks(runtime.current_config(), force=force, seed=seed, progress=progress)
    if as_json:
        echo_json(result.to_dict())
        return
    typer.echo(result.summary())
    for name, p in sorted(result.projects.items()):
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(p.dropped.items())) or "none"
        typer.echo(
            f"  {name:12s} {p.split:8s} {p.kept:3d} kept of {p.tried:3d} tried  (dropped: {dropped})"
            + (f"  ERROR: {p.error}" if p.error else "")
        )


@factory_app.command("ls")
def ls_cmd(
    split: str | None = typer.Option(None, "--split", help="train, eval or holdout."),
    as_json: bool = typer.Option(False, "--json", help="One JSON list."),
) -> None:
    """List the instances of the current build."""
    from evals.factory.instances import load_records
    from postgame import runtime

    rows = [
        {
            "instance_id": r["instance_id"],
            "split": r["split"],
            "project": r["seed_project"],
            "operator": (r.get("mutation") or {}).get("operator", "mined"),
            "fail_to_pass": len(r["FAIL_TO_PASS"]),
            "pass_to_pass": len(r["PASS_TO_PASS"]),
        }
        for r in load_records(runtime.current_config(), split)
    ]
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        typer.echo(
            f"{r['instance_id']:44s} {r['split']:8s} {r['operator']:18s} F2P {r['fail_to_pass']:3d}  "
            f"P2P {r['pass_to_pass']:3d}"
        )
    typer.echo(f"{len(rows)} instances")


@factory_app.command("show")
def show_cmd(
    instance_id: str = typer.Argument(..., help="An instance id, as `tasks ls` prints it."),
    prompt: bool = typer.Option(False, "--prompt", help="Print the prompt the policy is shown."),
    as_json: bool = typer.Option(False, "--json", help="The full SWE-bench record."),
) -> None:
    """One instance: problem statement, gold patch, tests (and the hidden mutation)."""
    from evals.factory.instances import load_records, load_split, prompt_for
    from postgame import runtime
    from postgame.errors import PostgameError

    cfg = runtime.current_config()
    matches = [r for r in load_records(cfg) if r["instance_id"] == instance_id]
    if not matches:
        raise PostgameError(f"no instance {instance_id!r} in the current build (see `postgame factory ls`)")
    rec = matches[0]
    if prompt:
        inst = next(i for i in load_split(cfg, rec["split"]) if i.instance_id == instance_id)
        typer.echo(prompt_for(cfg, inst))
        return
    if as_json:
        echo_json(rec)
        return
    m = rec["mutation"]
    typer.echo(f"{rec['instance_id']}  ({rec['split']}, {rec['repo']} @ {rec['base_commit'][:12]})")
    typer.echo(f"environment {rec['environment']}")
    if rec.get("mined_from"):
        typer.echo(f"mined from  commit {rec['mined_from']} (base {rec['base_commit']})")
    else:
        typer.echo(f"mutation    {m['operator']} at {m['path']}:{m['line']}  {m['original']!r} -> {m['replacement']!r}")
    typer.echo(f"tests       FAIL_TO_PASS {len(rec['FAIL_TO_PASS'])}, PASS_TO_PASS {len(rec['PASS_TO_PASS'])}")
    typer.echo("\n" + rec["problem_statement"])
    typer.echo(rec["patch"])


@factory_app.command("export")
def export_cmd(
    split: str = typer.Option(..., "--split", help="train, eval or holdout."),
    out: Path = typer.Option(..., "--out", help="Folder to write instances.jsonl and repos/ into."),
    project: str | None = typer.Option(None, "--project", help="Only this project's instances."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object."),
) -> None:
    """Write a split for `postgame eval run --instances OUT/instances.jsonl --repos OUT/repos` (mined instances, and
    every instance of an added project, carry their base snapshot under OUT/envs/ and their env_spec)."""
    from evals.factory.instances import export_split
    from postgame import runtime

    result = export_split(runtime.current_config(), split, out, project=project)
    if as_json:
        echo_json(
            {
                "split": result.split,
                "instances": result.instances,
                "instances_path": result.instances_path,
                "repos_dir": result.repos_dir,
            }
        )
        return
    typer.echo(f"{result.instances} {split} instances -> {result.instances_path}\nrepositories -> {result.repos_dir}")


@factory_app.command("add")
def add_cmd(
    source: str = typer.Argument(..., help="A git URL or a local git repository."),
    ref: str | None = typer.Option(None, "--ref", help="Commit, tag or branch to pin (default: its HEAD)."),
    name: str | None = typer.Option(None, "--name", help="Project name (default: the repository's name)."),
    test_cmd: str | None = typer.Option(None, "--test-cmd", help="The pytest command (default: detected)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object: the project record."),
) -> None:
    """Register a repository as a project of the task world: its environment built, its suite run at base."""
    from dataclasses import asdict

    from evals.factory.projects import add_project
    from evals.factory.repometa import RepoUnsupported
    from postgame import runtime
    from postgame.errors import PostgameError

    cfg = runtime.current_config()
    progress = None if as_json else (lambda msg: typer.echo(f"  {msg}", err=True))
    try:
        project = add_project(
            source,
            cfg.factory,
            cfg.eval,
            runtime.store(cfg),
            cache_dir=cfg.home / "cache" / "factory",
            ref=ref,
            name=name,
            test_cmd=test_cmd,
            progress=progress,
        )
    except RepoUnsupported as exc:
        raise PostgameError(f"cannot add {source}: {exc}; nothing was registered") from None
    if as_json:
        echo_json(asdict(project))
        return
    typer.echo(project.summary())
    if project.failing_at_base or project.flaky_at_base:
        typer.echo(
            f"  excluded from every FAIL_TO_PASS / PASS_TO_PASS: {len(project.failing_at_base)} failing at base, "
            f"{len(project.flaky_at_base)} flaky (see `postgame factory projects --json`)"
        )
    typer.echo("  next: `postgame factory build` adds its synthetic bugs; `postgame factory mine " + project.name + "`")


@factory_app.command("projects")
def projects_cmd(as_json: bool = typer.Option(False, "--json", help="One JSON list of project records.")) -> None:
    """The registered repositories: source, commit, environment, counts."""
    from dataclasses import asdict

    from evals.factory.projects import list_projects
    from postgame import runtime

    cfg = runtime.current_config()
    projects = list_projects(cfg.factory, runtime.store(cfg))
    if as_json:
        echo_json([asdict(p) for p in projects])
        return
    for p in projects:
        env = f"{len(p.pinned)} packages" if p.env_spec else "no dependencies"
        typer.echo(
            f"{p.name:16s} {p.source}  @ {p.commit[:12]}  {p.layout:4s}  {env}; {p.passing} tests pass, "
            f"{len(p.failing_at_base) + len(p.flaky_at_base)} excluded"
        )
    typer.echo(f"{len(projects)} projects")


@factory_app.command("remove")
def remove_cmd(name: str = typer.Argument(..., help="A project name, as `factory projects` lists it.")) -> None:
    """Take a registered repository out of the task world (the next `factory build` leaves it out)."""
    from evals.factory.projects import remove_project
    from evals.factory.repometa import RepoUnsupported
    from postgame import runtime
    from postgame.errors import PostgameError

    cfg = runtime.current_config()
    try:
        removed = remove_project(cfg.factory, runtime.store(cfg), name)
    except RepoUnsupported as exc:
        raise PostgameError(str(exc)) from None
    typer.echo(f"removed project {name} ({removed} objects)")


@factory_app.command("mine")
def mine_cmd(
    name: str = typer.Argument(..., help="A registered project."),
    max_kept: int = typer.Option(20, "--max", min=1, help="Stop once this many instances are kept."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object: project, commits_examined, kept, ..."),
) -> None:
    """Real bug fixes from the project's history as instances of its in-domain split (never trained on)."""
    from evals.factory.mine import mine_project, to_dict
    from evals.factory.repometa import RepoUnsupported
    from postgame import runtime
    from postgame.errors import PostgameError

    cfg = runtime.current_config()
    progress = None if as_json else (lambda msg: typer.echo(f"  {msg}", err=True))
    try:
        result = mine_project(
            name,
            cfg.factory,
            cfg.eval,
            runtime.store(cfg),
            cache_dir=cfg.home / "cache" / "factory",
            max_kept=max_kept,
            progress=progress,
        )
    except RepoUnsupported as exc:
        raise PostgameError(str(exc)) from None
    if as_json:
        echo_json(to_dict(result))
        return
    typer.echo(result.summary())
    typer.echo("  next: `postgame factory build` puts them in the catalog's indomain split")


def register(app: typer.Typer) -> None:
    app.add_typer(factory_app, name="factory")
    app.add_typer(factory_app, name="tasks", hidden=True)  # the name users knew first
