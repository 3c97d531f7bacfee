"""The agent environment: a coding task as an episode of tool calls, graded by the harness at the end.

    from evals.agent import make_environment
    env = make_environment(AgentSettings(), HarnessSettings(), repos_dir="repos")
    first = env.reset(instance)                       # the task, the visible tests, how to act
    obs = env.step("view", {"path": "calc/ops.py"})   # gym-style: Step(observation, done, outcome)
    obs = env.edit(path="calc/ops.py", search="a // b", replace="a / b")   # or call the tool method itself
    env.submit(); env.get_reward()                    # 1.0 resolved, 0.0 not, None on an infrastructure error

TRL's `GRPOTrainer(environment_factory=trl_environment_factory(settings, harness, instances=...))` drives the same
environment: the tools are methods (names, type hints and docstrings become the tool schema), `reset(**columns)`
starts a rollout (a dataset row's `instance_id`, looked up in the instances it was given) and `get_reward()` is read
once per finished rollout (`TRLEnvironment`: TRL takes every public method for a tool, so it gets only these). A
Gymnasium/OpenEnv wrapper needs only `reset` and `step`.

Every episode ends exactly one way (`OUTCOMES`): `submitted` (graded), `budget_exhausted` (agent.max_steps calls),
`timeout` (a command past agent.step_timeout_s, or the episode past agent.episode_timeout_s), `invalid_actions`
(agent.max_invalid_actions invalid calls in a row, or a rollout that stopped calling tools without submitting) or
`infra_error` (the sandbox, the repository or the grader failed: reward None, never 0). The reward is the harness's
grade of the working copy's diff (tests excluded) in a fresh copy — `evals.harness.evaluate`, unchanged — so what an
episode does to its own tests gains nothing.
"""

from __future__ import annotations

import functools
import inspect
import re
import time
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.agent.repro import Reproduction, reproduction
from evals.agent.workspace import ToolInputError, Workspace, WorkspaceError, open_workspace, reap
from evals.harness.evaluator import GradeCache, GradeResult, evaluate
from evals.harness.instance import Instance
from evals.harness.repoenv import EnvCache
from evals.harness.testrun import TestRun
from postgame.settings.agent import OUTCOMES, AgentSettings
from postgame.settings.harness import HarnessSettings


@dataclass(frozen=True)
class Step:
    observation: str
    done: bool
    outcome: str | None


@dataclass
class ToolEvent:
    step: int
    tool: str
    args: dict[str, Any]
    observation: str
    valid: bool
    seconds: float


@dataclass
class EpisodeResult:
    instance_id: str
    outcome: str
    reward: float | None
    steps: int
    invalid_calls: int
    seconds: float
    patch: str
    reason: str = ""
    grade: GradeResult | None = None
    events: list[ToolEvent] = field(default_factory=list)
    visible_tests: list[str] = field(default_factory=list)
    hidden_tests: list[str] = field(default_factory=list)

    @property
    def resolved(self) -> bool:
        return self.grade is not None and self.grade.resolved and self.outcome == "submitted"

    @property
    def p2p_broken(self) -> int:
        """PASS_TO_PASS tests the graded patch broke (0 when nothing was applied: an empty patch breaks nothing)."""
        if self.grade is None or not self.grade.patch_applied or self.grade.status == "error":
            return 0
        return len(self.grade.tests_status.get("PASS_TO_PASS", {}).get("failure", []))


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 40
    return f"{text[:head]}\n[... {len(text) - head - tail} characters cut ...]\n{text[-tail:]}"


class _EpisodeEnds(Exception):
    def __init__(self, outcome: str, observation: str):
        super().__init__(observation)
        self.outcome, self.observation = outcome, observation


_reaped = False


class AgentEnvironment:
    """One episode at a time over one instance (see the module docstring). Make it with `make_environment`."""

    tool_names: tuple[str, ...] = ()

    def __init__(
        self,
        settings: AgentSettings,
        harness: HarnessSettings,
        *,
        repos_dir: str | Path | None = None,
        instances: Mapping[str, Instance] | None = None,
        cache: GradeCache | None = None,
        envs: EnvCache | None = None,
        model_name_or_path: str = "",
    ):
        global _reaped
        self.settings, self.harness = settings, harness
        self.repos_dir = Path(repos_dir) if repos_dir else None
        self.instances = dict(instances or {})
        self.cache, self.envs, self.model_name_or_path = cache, envs, model_name_or_path
        self._ws: Workspace | None = None
        self._checker: Any = None  # the episode's VisibleTests (evals.agent.verify), opened on first use
        self._repro: Reproduction | None = None
        self._result: EpisodeResult | None = None
        self._instance: Instance | None = None
        if not _reaped:
            _reaped = True
            reap(harness)

    # -- episode life -----------------------------------------------------------------------------------------------
    def reset(
        self, instance: Instance | Mapping[str, Any] | str | None = None, *, context: str | None = None, **columns: Any
    ) -> str:
        """Start an episode on `instance` (an Instance, a record, or an id among `instances`; TRL passes the dataset
        row's columns, of which `instance_id` names it). `context` replaces the task text of the first observation
        (e.g. the scaffold's oracle prompt: the issue and the code it concerns). Returns the first observation."""
        self.close()
        inst = self._resolve(instance if instance is not None else columns.get("instance_id"))
        self._instance, self._steps, self._invalid, self._streak = inst, 0, 0, 0
        self._withheld = False  # a change the review refused and no later submit cleared: never graded
        self._events: list[ToolEvent] = []
        self._runs: dict[str, TestRun] = {}  # the episode's test runs by tree: `Workspace.run_tests`'s memo
        self._repro = reproduction(inst.problem_statement)  # the example and expectations (try_edits)
        self._start = time.monotonic()
        self._result = None
        try:
            self._ws = open_workspace(inst, repos_dir=self.repos_dir, settings=self.harness, envs=self.envs)
        except WorkspaceError as exc:
            self._finish("infra_error", reason=str(exc))
            return f"The environment could not be set up: {exc}"
        return self._first_observation(inst, self._ws, context)

    def _resolve(self, ref: Any) -> Instance:
        if isinstance(ref, Instance):
            return ref
        if isinstance(ref, Mapping):
            return Instance.model_validate(dict(ref))
        if isinstance(ref, str) and ref in self.instances:
            return self.instances[ref]
        raise KeyError(f"unknown instance {ref!r}: pass an Instance, or give the environment `instances`")

    def _first_observation(self, inst: Instance, ws: Workspace, context: str | None) -> str:
        names = ", ".join(self.tool_names)
        tests = ", ".join(ws.visible) or "none"
        task = context if context else f"Task {inst.instance_id} in {inst.repo}:\n{inst.problem_statement}"
        return first_observation(task, tests, names, self.settings.max_observation_chars)

    @property
    def done(self) -> bool:
        return self._result is not None

    @property
    def outcome(self) -> str | None:
        return self._result.outcome if self._result else None

    def result(self) -> EpisodeResult:
        if self._result is None:
            raise RuntimeError("the episode has not ended")
        return self._result

    def close(self) -> None:
        if self._checker is not None:
            self._checker.__exit__(None, None, None)
            self._checker = None
        if self._ws is not None:
            self._ws.close()
            self._ws = None

    def try_edits(self, edits: list[Mapping[str, Any]], reproduce: bool = False) -> bool | None:
        """Would these edits (`edit`'s arguments, in order), made now, keep the visible tests passing? Nothing is
        written and no step is spent: the patch the working copy would have is checked as `submit`'s review checks
        one (a fresh copy, the visible tests at base and with it). False when an edit would fail or change nothing;
        None when the check could not run. The scaffold's check of a candidate turn (models.agent.choose_turn), as a
        single answer's candidates are run against the visible tests before one is submitted (models/answer.py).

        With `reproduce`, first: would they make the issue's own example behave as the issue says it should
        (`evals.agent.repro`; False when it would not, None when the statement states nothing checkable or the run
        could not tell), and only then the visible tests. No edits: the copy as it is now."""
        if self._ws is None or self._result is not None:
            return None
        try:
            triples = [(str(e["path"]), str(e["search"]), str(e["replace"])) for e in edits]
            texts = self._ws.edited(triples) if triples else {}
        except (KeyError, TypeError, ToolInputError):
            return False
        if texts is None:
            return False
        try:
            settings = self._step_settings()
        except _EpisodeEnds:
            return None  # the episode's time is up: its next call ends it
        try:
            checker = self._visible_tests(settings)
            patch = self._ws.diff(texts)
            if reproduce:
                if self._repro is None:
                    return None
                fixed = checker.reproduces(patch, self._repro, settings)
                if fixed is not True:
                    return fixed
            return checker.check(patch, settings).passed
        except WorkspaceError:
            return None

    def get_reward(self) -> float | None:
        """The episode's reward, read once the rollout is over (TRL). A rollout that stopped calling tools before it
        submitted ends here: `budget_exhausted` if its budget was spent, else `invalid_actions`."""
        if self._result is None:
            if self._steps >= self.settings.max_steps:
                self._finish("budget_exhausted", reason="the step budget was spent")
            else:
                self._finish("invalid_actions", reason="the rollout stopped calling tools without submitting")
        return self.result().reward

    def exhaust(self, reason: str) -> None:
        """End the episode `budget_exhausted` for a limit the environment does not keep itself (a rollout's context
        window full): graded as any unsubmitted episode is."""
        if self._result is None:
            self._finish("budget_exhausted", reason=reason)

    # -- one call ---------------------------------------------------------------------------------------------------
    def step(self, name: str, arguments: Mapping[str, Any] | None = None) -> Step:
        """Call tool `name` with `arguments` (a JSON object's worth); an unknown tool or arguments that do not fit
        are an invalid call, answered with an observation that says why."""
        arguments = dict(arguments or {})
        if name not in self.tool_names:
            obs = self.invalid(f"unknown tool {name!r}; the tools are {', '.join(self.tool_names)}")
        else:
            problem = _check_arguments(getattr(type(self), name), arguments)
            obs = self.invalid(f"{name}: {problem}") if problem else getattr(self, name)(**arguments)
        return Step(obs, self.done, self.outcome)

    def invalid(self, reason: str) -> str:
        """Record an invalid call (also: a policy reply with no tool call, arguments that are not JSON)."""
        return self._call("invalid", reason=reason)

    def _call(self, tool: str, **args: Any) -> str:
        if self._instance is None:
            raise RuntimeError("call reset(instance) before any tool")
        if self._result is not None:
            return f"The episode is over ({self._result.outcome}): no more tool calls."
        self._steps += 1
        start = time.monotonic()
        valid = tool != "invalid"
        try:
            if time.monotonic() - self._start > self.settings.episode_timeout_s:
                raise _EpisodeEnds("timeout", f"The episode ran past its {self.settings.episode_timeout_s:g} s limit.")
            if not valid:
                obs = f"Invalid call: {args['reason']}"
            else:
                obs = getattr(self, f"_do_{tool}")(**args)
        except ToolInputError as exc:
            valid, obs = False, f"Invalid call: {tool}: {exc}"
        except _EpisodeEnds as end:
            obs = end.observation
            self._record(tool, args, obs, True, start)
            self._finish(end.outcome, reason=end.observation)
            return _cap(obs, self.settings.max_observation_chars)
        self._record(tool, args, obs, valid, start)
        self._streak = 0 if valid else self._streak + 1
        self._invalid += 0 if valid else 1
        if self._streak >= self.settings.max_invalid_actions:
            obs += f"\n{self._streak} invalid calls in a row: the episode ends."
            self._finish("invalid_actions", reason=f"{self._streak} invalid calls in a row")
        elif self._steps >= self.settings.max_steps and self._result is None:
            obs += f"\nThe step budget ({self.settings.max_steps} calls) is used up: the episode ends."
            self._finish("budget_exhausted", reason=f"{self.settings.max_steps} calls without submit")
        return _cap(obs, self.settings.max_observation_chars)

    def _record(self, tool: str, args: dict, obs: str, valid: bool, start: float) -> None:
        self._events.append(ToolEvent(self._steps, tool, args, obs, valid, round(time.monotonic() - start, 3)))

    def _finish(self, outcome: str, *, reason: str = "") -> None:
        assert outcome in OUTCOMES, outcome
        inst = self._instance
        assert inst is not None
        patch = self._ws.diff() if self._ws is not None and not self._withheld else ""
        grade: GradeResult | None = None
        reward: float | None = None if outcome == "infra_error" else 0.0
        if outcome == "submitted" or (outcome != "infra_error" and self.settings.grade_unsubmitted):
            grade = evaluate(
                inst,
                patch,
                repos_dir=self.repos_dir,
                settings=self.harness,
                cache=self.cache,
                model_name_or_path=self.model_name_or_path,
                envs=self.envs,
            )
            reward = grade.reward
            if grade.status == "error":
                outcome, reason = "infra_error", f"grading failed: {grade.error}"
        ws = self._ws
        self._result = EpisodeResult(
            inst.instance_id,
            outcome,
            reward,
            self._steps,
            self._invalid,
            round(time.monotonic() - self._start, 3),
            patch,
            reason,
            grade,
            list(self._events),
            list(ws.visible) if ws else [],
            list(ws.hidden) if ws else [],
        )
        self.close()

    def _step_settings(self) -> HarnessSettings:
        left = self.settings.episode_timeout_s - (time.monotonic() - self._start)
        if left <= 0:
            raise _EpisodeEnds("timeout", f"The episode ran past its {self.settings.episode_timeout_s:g} s limit.")
        return self.harness.model_copy(update={"timeout_s": max(1.0, min(self.settings.step_timeout_s, left))})

    # -- what each tool does ----------------------------------------------------------------------------------------
    @property
    def _workspace(self) -> Workspace:
        assert self._ws is not None
        return self._ws

    def _do_list_files(self, path: str = ".") -> str:
        return self._workspace.list_files(path)

    def _do_view(self, path: str, start: int = 1, end: int = 0) -> str:
        return self._workspace.view(path, start, end, self.settings.view_lines)

    def _do_search(self, pattern: str, path: str = ".") -> str:
        return self._workspace.search(pattern, path)

    def _do_edit(self, path: str, search: str, replace: str) -> str:
        return self._workspace.edit(path, search, replace)[1]

    def _do_run_tests(self, paths: list[str] | None = None) -> str:
        settings = self._step_settings()
        run = self._workspace.run_tests(paths, settings, self._runs)
        if run.infra_error:
            raise _EpisodeEnds("infra_error", f"The test run failed to start: {run.infra_error}")
        if run.timed_out:
            raise _EpisodeEnds("timeout", f"The tests ran past the {settings.timeout_s:g} s limit and were killed.")
        return tests_observation(run.statuses, run.log)

    def _do_bash(self, command: str) -> str:
        if not command.strip():
            raise ToolInputError("empty command")
        settings = self._step_settings()
        res = self._workspace.bash(command, settings, self.settings.max_observation_chars * 4)
        if res.timed_out:
            raise _EpisodeEnds("timeout", f"The command ran past the {settings.timeout_s:g} s limit and was killed.")
        return f"exit code {res.returncode}\n{res.output}".rstrip()

    def _do_submit(self) -> str:
        patch = self._workspace.diff()
        refused = self._review(patch) if self.settings.review_on_submit and patch.strip() else None
        if refused is None:
            self._withheld = False
            files = patch.count("diff --git ")
            raise _EpisodeEnds("submitted", f"Submitted ({files} file(s) changed). The episode is over.")
        if not self._withheld:  # the first refusal: the agent may fix or revert
            self._withheld = True
            return (
                f"Submit refused: {refused}. Fix or revert your edits and run the tests; a submit while they still "
                "fail submits no change."
            )
        raise _EpisodeEnds("submitted", f"Submitted no change: {refused}. The episode is over.")  # `_finish`: ""

    def _visible_tests(self, settings: HarnessSettings) -> Any:
        """The episode's VisibleTests: opened once (a fresh copy, its visible tests run at base within `settings`,
        the call's `_step_settings`)."""
        from evals.agent.verify import VisibleTests

        if self._checker is None:
            assert self._instance is not None
            self._checker = VisibleTests(
                self._instance, settings, repos_dir=self.repos_dir, memo=self._runs
            ).__enter__()
        return self._checker

    def _review(self, patch: str) -> str | None:
        """Why `patch` may not be submitted — the visible tests that passed at base and do not with it, or why they
        could not tell (`evals.agent.verify.VisibleTests`: a fresh copy with the tests as the task gave them, so the
        agent's own edits to its tests count for nothing here, as in grading) — or None when it may."""
        settings = self._step_settings()  # each run within the step limit and the time the episode has left
        try:
            verdict = self._visible_tests(settings).check(patch, settings)
        except WorkspaceError as exc:
            raise _EpisodeEnds("infra_error", f"The visible tests could not be set up: {exc}") from exc
        if verdict.passed:
            return None
        self._step_settings()  # a run cut short by the episode's limit ends the episode here
        if not verdict.broken:
            return f"the visible tests cannot pass with your changes ({verdict.reason})"
        shown = ", ".join(verdict.broken[:10]) + (
            f" and {len(verdict.broken) - 10} more" if len(verdict.broken) > 10 else ""
        )
        return f"{len(verdict.broken)} visible test(s) that passed before your changes fail now: {shown}"


def first_observation(task: str, tests: str, tools: str, limit: int) -> str:
    """The episode's first observation: what the agent can use, then the task, ending as the task's own text ends
    (a scaffold's oracle prompt ends where its answer starts: the embedded base reads the code it must fix right
    before it writes the fix, as it learned to). The task is cut to `limit` characters with the line before it."""
    head = f"Visible tests: {tests}. Tools: {tools}. Call one tool per turn; call submit() when the fix is done."
    task = task.strip() + "\n"
    return head + "\n\n" + task[: max(0, limit - len(head) - 2)]


_DURATION = re.compile(r" in \d+(?:\.\d+)?s\b")  # pytest's "1 error in 0.12s"


def tests_observation(statuses: Mapping[str, str], log: str, *, max_ids: int = 10, max_error_lines: int = 12) -> str:
    """A test run as the agent sees it: counts, the failing ids, the first error lines. Nothing of the wall clock: a
    run's duration (in the summary line, or pytest's own "in 0.12s") would make the same policy's greedy episode
    depend on the machine's load, and the gate pairs episodes played at different times."""
    counts: dict[str, int] = {}
    for status in statuses.values():
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())) or "no tests ran"
    failing = sorted(n for n, s in statuses.items() if s not in ("PASSED", "XFAIL", "SKIPPED"))
    lines = [f"visible tests: {summary}"]
    lines += [f"FAILED {n}" for n in failing[:max_ids]]
    if len(failing) > max_ids:
        lines.append(f"[... {len(failing) - max_ids} more failing]")
    output = log.split("---- test output ----", 1)[-1]
    errors = [line.rstrip() for line in output.splitlines() if line.startswith("E ")][:max_error_lines]
    if not statuses:  # nothing was collected: show the end of pytest's own output (a syntax or import error)
        errors = [_DURATION.sub("", line.rstrip()) for line in output.strip().splitlines()[-max_error_lines:]]
    if errors:
        lines += ["first error lines:", *errors]
    return "\n".join(lines)


def _check_arguments(method: Any, arguments: dict[str, Any]) -> str:
    """Why `arguments` do not fit `method` ('' when they do): unknown or missing names, values of the wrong type."""
    sig = inspect.signature(method)
    try:
        sig.bind(None, **arguments)
    except TypeError as exc:
        return f"bad arguments: {exc}"
    hints = typing.get_type_hints(method)
    for name, value in arguments.items():
        if not _fits(value, hints.get(name, Any)):
            return f"argument {name!r} must be {_type_name(hints[name])}, got {type(value).__name__}"
    return ""


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", str(hint))


# -- the tools: public methods, so that their signatures and docstrings are the schema a chat template renders ------
def list_files(self, path: str = ".") -> str:
    """List the files under a folder of the repository.

    Args:
        path: A folder relative to the repository root ("." for all).
    """
    return self._call("list_files", path=path)


def view(self, path: str, start: int = 1, end: int = 0) -> str:
    """Show lines of a file, numbered.

    Args:
        path: A file relative to the repository root.
        start: The first line to show (1-based).
        end: The last line to show (0 = a screenful from start).
    """
    return self._call("view", path=path, start=start, end=end)


def search(self, pattern: str, path: str = ".") -> str:
    """Find the lines that contain a text (plain text, not a regular expression).

    Args:
        pattern: The text to look for.
        path: A file or folder relative to the repository root.
    """
    return self._call("search", pattern=pattern, path=path)


def edit(self, path: str, search: str, replace: str) -> str:
    """Replace the first occurrence of a text in a file (an empty search text creates the file or appends to it).

    Args:
        path: A file relative to the repository root.
        search: The exact text to replace, copied from the file.
        replace: The text to put in its place.
    """
    return self._call("edit", path=path, search=search, replace=replace)


def run_tests(self, paths: list[str] | None = None) -> str:
    """Run the visible tests (or the given test files or test ids) and report what failed.

    Args:
        paths: Test files or test ids to run; none = every visible test.
    """
    return self._call("run_tests", paths=paths)


def bash(self, command: str) -> str:
    """Run one shell command in the repository (sandboxed, no network, time-limited).

    Args:
        command: The command line.
    """
    return self._call("bash", command=command)


def submit(self) -> str:
    """Submit the changes made so far as the fix; ends the episode."""
    return self._call("submit")


TOOLS = {f.__name__: f for f in (list_files, view, search, edit, run_tests, bash, submit)}


@functools.cache
def environment_class(tools: tuple[str, ...]) -> type[AgentEnvironment]:
    """The environment class whose public methods are exactly `tools` (one class per tool set: TRL reads the
    tools off the class)."""
    return type(
        "CodingEnvironment",
        (AgentEnvironment,),
        {"tool_names": tools, **{t: TOOLS[t] for t in tools}, "__module__": __name__},
    )


def make_environment(settings: AgentSettings, harness: HarnessSettings, **kwargs: Any) -> AgentEnvironment:
    """An environment with the tools `settings.tools` enables (see AgentEnvironment for the keyword arguments)."""
    return environment_class(tuple(settings.tools))(settings, harness, **kwargs)


class TRLEnvironment:
    """An environment as TRL's `GRPOTrainer(environment_factory=...)` reads one: every public function of the class
    is a tool (`inspect.getmembers` of the class; TRL 1.16), besides `reset` and `get_reward`. AgentEnvironment
    itself has more public methods (`step`, `close`, `result`, `try_edits`, ...) that TRL would offer the model as
    tools, so TRL gets this: the tools, `reset` and `get_reward` over one AgentEnvironment (`env`)."""

    def __init__(self, env: AgentEnvironment):
        self._env = env

    def reset(self, **columns: Any) -> str:
        """Start an episode on the dataset row's `instance_id` (see AgentEnvironment.reset)."""
        return self._env.reset(**columns)

    def get_reward(self) -> float | None:
        """The harness's grade of the episode (see AgentEnvironment.get_reward)."""
        return self._env.get_reward()

    def _call(self, tool: str, **args: Any) -> str:
        return self._env._call(tool, **args)


@functools.cache
def trl_class(tools: tuple[str, ...]) -> type[TRLEnvironment]:
    """The TRLEnvironment class whose tools are `tools`."""
    return type("CodingTools", (TRLEnvironment,), {**{t: TOOLS[t] for t in tools}, "__module__": __name__})


def trl_environment_factory(settings: AgentSettings, harness: HarnessSettings, **kwargs: Any):
    """What `GRPOTrainer(environment_factory=...)` takes: a callable making one TRLEnvironment (with the tools
    `settings.tools` enables) per rollout slot; `kwargs` as for make_environment (`instances`, `repos_dir`, ...)."""
    cls = trl_class(tuple(settings.tools))
    return lambda: cls(make_environment(settings, harness, **kwargs))
