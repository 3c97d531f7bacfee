"""An episode's working copy: the base with its visible tests, the file tools over it, and sandboxed commands in it.

The copy lives for the whole episode (one folder, `postgame-episode-*`, under the harness's work root); every command
that runs code in it — `run_tests`, `bash` — is a fresh launch of the harness's sandbox over that same folder, so
nothing of the agent's runs outside it, and nothing it starts outlives the call (pid namespace, cgroup, timeout).
The file tools (list, view, search, edit) read and write the copy from this process, through the same path checks as
patches (`evals/harness/paths.py`): no absolute path, no `..`, no `.git`, and never through a symlink, so a link the
agent made with `bash` cannot make this process read or write the host.

A folder whose owner died (SIGKILL of the process running episodes) is removed by `reap`, with any process still
running from it; `AgentEnvironment` reaps on start.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evals.agent.repro import Reproduction, repro_argv, reproduced
from evals.agent.visible import visible_tests
from evals.factory.files import diff_file
from evals.harness import sandbox
from evals.harness.constants import SANDBOX_ENV, SANDBOX_TOOLS
from evals.harness.environment import base_tree, fresh_copy
from evals.harness.instance import Instance
from evals.harness.patching import apply_patch, patch_paths, safe_write
from evals.harness.paths import UnsafePath, check_rel, through_symlink
from evals.harness.protect import is_test_path
from evals.harness.repoenv import EnvCache, default_cache, ensure_env
from evals.harness.searchreplace import replace_once
from evals.harness.testrun import TestRun, UnsupportedTestCommand, _execute, pytest_args, work_root
from postgame.settings.harness import HarnessSettings

PREFIX = "postgame-episode-"
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".git"}


class WorkspaceError(Exception):
    """The episode's copy cannot be made (missing repository, a test patch that does not apply): infrastructure."""


class ToolInputError(ValueError):
    """An argument the agent got wrong (a path outside the copy, a file that is not there): an invalid call."""


@dataclass
class CommandResult:
    output: str
    returncode: int | None
    timed_out: bool
    seconds: float


@dataclass
class Workspace:
    instance: Instance
    root: Path  # the episode folder (owner file, scratch runs)
    copy: Path  # the agent's tree
    base: Path  # the reference base (no tests), read-only
    mode: sandbox.Mode
    test_paths: list[str]  # files the test patch touches
    visible: list[str]  # test files the agent can run
    hidden: list[str]  # test ids cut out of the agent's tree
    env_dir: Path | None = None
    runs: int = 0
    reused: int = 0  # test runs answered from an episode's memo (`run_tests`)
    notes: list[str] = field(default_factory=list)

    # -- the file tools ------------------------------------------------------------------------------------------
    def _path(self, rel: str, *, want: str = "file") -> Path:
        """`rel` in the copy, checked; `want`: "file", "dir", "any" (exists) or "new" (may not exist yet)."""
        rel = (rel or ".").strip()
        if rel in (".", "./", ""):
            return self.copy
        try:
            rel = check_rel(rel.removeprefix("./"))
        except UnsafePath as exc:
            raise ToolInputError(f"{exc}: paths are relative to the repository root") from None
        p = self.copy / rel
        if through_symlink(self.copy, rel) or p.is_symlink():
            raise ToolInputError(f"{rel!r} is (or is reached through) a symbolic link: not followed")
        if want == "file" and not p.is_file():
            raise ToolInputError(f"no file {rel!r}" + (" (it is a folder)" if p.is_dir() else ""))
        if want == "dir" and not p.is_dir():
            raise ToolInputError(f"no folder {rel!r}")
        if want == "any" and not p.exists():
            raise ToolInputError(f"no file or folder {rel!r}")
        return p

    def _walk(self, top: Path) -> list[str]:
        out = []
        for dirpath, dirnames, filenames in os.walk(top):  # os.walk does not follow symlinked folders
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in sorted(filenames):
                if not name.endswith((".pyc", ".pyo")):
                    out.append(str((Path(dirpath) / name).relative_to(self.copy)))
        return out

    def list_files(self, path: str = ".", limit: int = 200) -> str:
        files = self._walk(self._path(path, want="dir"))
        more = f"\n[... {len(files) - limit} more files]" if len(files) > limit else ""
        return "\n".join(files[:limit]) + more if files else "(no files)"

    def view(self, path: str, start: int = 1, end: int = 0, default_lines: int = 80) -> str:
        text = self._read(path)
        lines = text.splitlines()
        start = max(1, int(start))
        end = int(end) if end and int(end) >= start else start + default_lines - 1
        shown = lines[start - 1 : end]
        if not shown:
            return f"{path} has {len(lines)} lines; nothing at {start}-{end}"
        width = len(str(start + len(shown) - 1))
        body = "\n".join(f"{n:>{width}} {line}" for n, line in enumerate(shown, start))
        tail = f"\n[{path}: lines {start}-{start + len(shown) - 1} of {len(lines)}]"
        return body + tail

    def _read(self, path: str) -> str:
        p = self._path(path)
        try:
            return p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ToolInputError(f"{path!r} is not a UTF-8 text file") from None

    def search(self, pattern: str, path: str = ".", limit: int = 50) -> str:
        if not pattern:
            raise ToolInputError("empty pattern")
        top = self._path(path, want="any")
        files = [str(top.relative_to(self.copy))] if top.is_file() else self._walk(top)
        hits = []
        for rel in files:
            p = self.copy / rel
            if p.is_symlink():
                continue
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if pattern in line:
                    hits.append(f"{rel}:{n}: {line.strip()[:200]}")
        if not hits:
            return f"no line contains {pattern!r}"
        more = f"\n[... {len(hits) - limit} more matches]" if len(hits) > limit else ""
        return "\n".join(hits[:limit]) + more

    def edit(self, path: str, search: str, replace: str) -> tuple[bool, str]:
        """(changed, message). An empty `search` creates the file (or appends to it), as in edit blocks."""
        rel, old = self._edit_target(path, search)
        new = replace_once(old or "", search, replace)
        if new is None:
            return (
                False,
                f"edit failed: the search text was not found in {rel} (nothing changed; view the file to copy it exactly)",
            )
        if new == old:
            return False, f"edit changed nothing in {rel}"
        safe_write(self.copy, rel, new.encode("utf-8"))
        return True, edit_message(rel, search, replace)

    def _edit_target(self, path: str, search: str) -> tuple[str, str | None]:
        """(the file's path in the copy, its text; None when it does not exist yet) for an edit of `path`;
        ToolInputError when it cannot be edited (no path, a folder, a missing file with a search text)."""
        if path.strip() in ("", ".", "./"):
            raise ToolInputError("edit needs a file path")
        target = self._path(path, want="new")
        rel = target.relative_to(self.copy).as_posix()
        if target.is_dir():
            raise ToolInputError(f"{rel!r} is a folder")
        old = self._read(rel) if target.exists() else None
        if old is None and search.strip():
            raise ToolInputError(f"no file {rel!r} (an empty search text creates one)")
        return rel, old

    def edited(self, edits: list[tuple[str, str, str]]) -> dict[str, str] | None:
        """The texts of the files `edits` ((path, search, replace), in order) would leave, as `edit` makes them, with
        nothing written; None when one of them would fail or change nothing. An edit `edit` refuses raises
        ToolInputError (as does a second edit of a file the first one would create: rare, and refused)."""
        texts: dict[str, str] = {}
        for path, search, replace in edits:
            rel, old = self._edit_target(path, search)
            current = texts.get(rel, old or "")
            new = replace_once(current, search, replace)
            if new is None or new == current:
                return None
            texts[rel] = new
        return texts

    # -- commands in the sandbox ----------------------------------------------------------------------------------
    def _scratch(self) -> Path:
        self.runs += 1
        d = self.root / f"run-{self.runs}"
        d.mkdir()
        return d

    def run_tests(
        self, paths: list[str] | None, settings: HarnessSettings, memo: dict[str, TestRun] | None = None
    ) -> TestRun:
        """The visible tests (or `paths` among the copy's test files) in the sandbox, through the harness's launcher
        and result plugin: statuses by node id, as the grader reads them.

        With `memo` (one episode's, shared by its `run_tests` calls and its `VisibleTests` checks): a run of the same
        targets over a tree with the same content (`digest`) is answered from it instead of run again; only runs that
        finished (no timeout, no infrastructure error, no tampering) are kept. An agent's edit is tried against the
        visible tests, then `run_tests`, then reviewed on `submit`: one tree, one run."""
        targets = self.visible
        if paths:
            targets = []
            for rel in paths:
                file_part = rel.split("::", 1)[0]
                self._path(file_part)
                targets.append(rel)
        args = [*test_options(self.instance, self.copy), "-q", *targets]
        key = f"{self.digest()} {json.dumps(args)}" if memo is not None else ""
        if memo is not None and key in memo:
            self.reused += 1
            return memo[key]
        run = TestRun(self.instance.instance_id, patch_applied=True, sandbox=self.mode)
        notes: list[str] = []
        scratch = self._scratch()
        start = time.monotonic()
        try:
            _execute(self.mode, self.copy, scratch, args, settings, run, notes, self.env_dir)
            run.log = "\n".join(notes) + "\n" + run.log
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        run.seconds = time.monotonic() - start
        if memo is not None and not (run.timed_out or run.infra_error or run.tampering):
            memo[key] = run
        return run

    def digest(self) -> str:
        """The content of the copy as one hash: every entry's path and kind, a file's executable bit and bytes, a
        symbolic link's target, bytecode left out. Two copies with the same digest run their tests the same
        way: a run writes only into the copy (its /tmp and home are its own), so nothing it depends on is outside."""
        h = hashlib.sha256()
        for dirpath, dirnames, filenames in os.walk(self.copy):  # os.walk does not follow symlinked folders
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            top = Path(dirpath)
            for name in sorted([*filenames, *(d + "/" for d in dirnames)]):
                p = top / name.rstrip("/")
                rel = str(p.relative_to(self.copy)).encode("utf-8", "surrogateescape")
                if name.endswith((".pyc", ".pyo")):
                    continue
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    h.update(b"L " + rel + b"\0" + os.fsencode(os.readlink(p)) + b"\0")
                elif stat.S_ISREG(st.st_mode):
                    h.update(b"F " + rel + b"\0" + f"{st.st_mode & 0o111:o} {st.st_size}".encode() + b"\0")
                    with open(p, "rb") as f:  # never a fifo: only regular files are opened
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                else:  # a folder, or a fifo or socket the agent made: its name and kind count
                    h.update(b"O " + rel + b"\0" + f"{stat.S_IFMT(st.st_mode):o}".encode() + b"\0")
        return h.hexdigest()

    def bash(self, command: str, settings: HarnessSettings, max_bytes: int) -> CommandResult:
        """One shell command in the sandbox over the copy (bwrap mode only), with the test run's limits."""
        if self.mode != "bwrap":
            raise ToolInputError("bash needs the bwrap sandbox, and this episode runs in rlimits mode")
        return self._launch(["/bin/sh", "-c", command], settings, max_bytes)

    def reproduce(self, repro: Reproduction, settings: HarnessSettings) -> bool | None:
        """Does the tree now behave as the issue says it should (`evals.agent.repro`)? The issue's setup and its
        stated expectations run in the sandbox with the task's interpreter, beside the visible test modules'
        definitions. None when it could not tell (a timeout, a crash of the runner, a value it could not read).
        The verdict only steers which of the policy's own candidates the scaffold takes; the grade is the harness's."""
        python = f"{SANDBOX_ENV}/bin/python" if self.env_dir else sys.executable
        result = self._launch(repro_argv(python, repro, self.visible), settings, 64 * 1024)
        return None if result.timed_out else reproduced(result.output)

    def _launch(self, argv: list[str], settings: HarnessSettings, max_bytes: int) -> CommandResult:
        """`argv` in the sandbox over the copy, under the test run's rlimits (pg_exec), its output's tail."""
        scratch = self._scratch()
        out_path = scratch / "output.txt"
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        limits = sandbox.rlimits(settings, with_nproc=self.mode == "bwrap" or os.geteuid() != 0)
        tools = SANDBOX_TOOLS if self.mode == "bwrap" else str(sandbox.TOOLS_DIR)
        argv = [sys.executable, "-I", "-B", f"{tools}/pg_exec.py", "--limits", json.dumps(limits), "--", *argv]
        binds: tuple[sandbox.Bind, ...] = ((str(self.env_dir), SANDBOX_ENV, False),) if self.env_dir else ()
        if self.env_dir is not None:
            argv[0] = f"{SANDBOX_ENV}/bin/python"
        try:
            result = sandbox.run(
                argv,
                mode=self.mode,
                copy_dir=self.copy,
                home_dir=scratch,
                stdout_fd=fd,
                pass_fds=(),
                settings=settings,
                binds=binds,
                bin_dir=f"{SANDBOX_ENV}/bin" if self.env_dir else None,
            )
        finally:
            os.close(fd)
        try:
            output = _tail(out_path, max_bytes)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return CommandResult(output, result.returncode, result.timed_out, result.seconds)

    # -- the answer -----------------------------------------------------------------------------------------------
    def diff(self, texts: dict[str, str] | None = None) -> str:
        """The agent's change as a patch against the base: every file but the tests and what the test patch touches
        (the grader brings its own), so editing or deleting tests in the episode changes nothing that is graded.
        `texts` ({path: text}, from `edited`) stand in for those files of the copy: the patch the copy would have."""
        texts = texts or {}
        excluded = set(self.test_paths)
        names = set(self._walk(self.copy)) | set(texts)
        for dirpath, dirnames, filenames in os.walk(self.base):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            names.update(str((Path(dirpath) / f).relative_to(self.base)) for f in filenames)
        parts = []
        for rel in sorted(names):
            if rel in excluded or is_test_path(rel) or rel.endswith((".pyc", ".pyo")):
                continue
            old, new = _text(self.base / rel), texts[rel] if rel in texts else _text(self.copy / rel)
            if old is _BINARY or new is _BINARY:
                continue  # binary files are not part of an agent's answer
            parts.append(diff_file(rel, old, new))  # type: ignore[arg-type]
        return "".join(parts)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# pytest options that take the next word as their value.
_VALUED = {
    "-o",
    "--override-ini",
    "-k",
    "-m",
    "-p",
    "-c",
    "--rootdir",
    "--confcutdir",
    "--import-mode",
    "-W",
    "--deselect",
    "--ignore",
    "--basetemp",
}


def test_options(instance: Instance, copy: Path) -> list[str]:
    """The options of the instance's own test command (e.g. `-o pythonpath=src` for a src layout), its test paths
    left out: the visible runs take the options the grader runs with, and their own targets."""
    try:
        words = pytest_args(instance, []) if instance.test_cmd else ["-rA"]
    except UnsupportedTestCommand:
        words = ["-rA"]  # the grader will report it; the visible runs use pytest's defaults
    out: list[str] = []
    take_value = False
    for word in words:
        if take_value:
            out.append(word)
            take_value = False
        elif word.startswith("-"):
            out.append(word)
            take_value = word in _VALUED
        elif not ("::" in word or word.endswith(".py") or (copy / word).exists()):
            out.append(word)  # a positional that is not a test path
    return out


def edit_message(path: str, search: str, replace: str) -> str:
    """What an applied edit answers: the lines of its search text it changed, and how many lines it added."""
    old, new = search.splitlines(), replace.splitlines()
    changed = sum(1 for a, b in zip(old, new) if a != b)
    return f"edited {path}: {changed} line(s) changed, {len(new) - len(old):+d} line(s)"


_BINARY = object()


def _text(path: Path) -> str | None | object:
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return _BINARY


def _tail(path: Path, limit: int) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - limit))
        data = f.read()
    text = data.decode("utf-8", "replace")
    return text if size <= limit else f"[... {size - limit} bytes cut ...]\n{text}"


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def open_workspace(
    instance: Instance, *, repos_dir: Path | None, settings: HarnessSettings, envs: EnvCache | None = None
) -> Workspace:
    """Make the episode's copy: the base, the test patch applied, every FAIL_TO_PASS test cut out of it.
    Raises WorkspaceError for what is not the agent's doing (it ends the episode `infra_error`)."""
    from evals.harness.environment import EnvironmentMissing
    from evals.harness.repoenv import EnvBuildError

    mode, note = sandbox.choose_mode(settings)
    if mode is None:
        raise WorkspaceError(note)
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=work_root(settings)))
    (root / "owner").write_text(json.dumps({"pid": os.getpid(), "start": _start_time(os.getpid())}))
    try:
        base, source = base_tree(instance, repos_dir, settings.cache_dir)
        env_dir = None
        notes = [note]
        if instance.env_spec is not None:
            if mode != "bwrap":
                raise WorkspaceError(
                    f"instance {instance.instance_id!r} has an env_spec: per-repository "
                    f"environments need the bwrap sandbox, and this episode is in {mode} mode"
                )
            env_dir = ensure_env(instance, base, settings, envs or default_cache(settings), notes)
        copy = fresh_copy(base, root / "testbed")
        test_paths = patch_paths(instance.test_patch) if instance.test_patch.strip() else []
        if test_paths:
            applied = apply_patch(copy, instance.test_patch, base_dir=base, source=source)
            if not applied.applied:
                raise WorkspaceError(f"test_patch does not apply to the base: {applied.error}")
        files = {}
        for nodeid in instance.FAIL_TO_PASS:
            rel = nodeid.split("::", 1)[0]
            if rel not in files and (copy / rel).is_file() and not (copy / rel).is_symlink():
                files[rel] = (copy / rel).read_text(encoding="utf-8", errors="replace")
        hidden: list[str] = []
        for vf in visible_tests(files, instance.FAIL_TO_PASS, instance.PASS_TO_PASS):
            if vf.text is None:
                (copy / vf.path).unlink()
                hidden.append(vf.path)
            else:
                safe_write(copy, vf.path, vf.text.encode("utf-8"))
                hidden += [f"{vf.path}::{name}" for name in vf.removed]
        visible = [
            p for p in test_paths if p.endswith(".py") and os.path.basename(p) != "conftest.py" and (copy / p).is_file()
        ]
        return Workspace(instance, root, copy, base, mode, test_paths, visible, hidden, env_dir, notes=notes)
    except (EnvironmentMissing, EnvBuildError, OSError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise WorkspaceError(str(exc)) from None
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _owner_alive(root: Path) -> bool:
    try:
        owner = json.loads((root / "owner").read_text())
    except (OSError, ValueError):
        # No owner file yet: a workspace being made right now, or one from a crash before it was written.
        try:
            return time.time() - root.stat().st_mtime < 60
        except OSError:
            return False
    start = _start_time(int(owner["pid"]))
    return start is not None and start == owner.get("start")


def processes_inside(needle: str) -> list[int]:
    """Processes (other than this one) whose working folder starts with `needle` or whose command line holds it."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            cwd = ""
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            cmdline = ""
        if cwd.startswith(needle) or needle in cmdline:
            found.append(int(proc.name))
    return found


def _kill_leftovers(root: Path) -> int:
    """Processes whose working folder or command line is inside `root` (an rlimits-mode command that outlived its
    owner; in bwrap mode the pid namespace dies with the owner). Returns how many were killed."""
    killed = 0
    for pid in processes_inside(str(root)):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def reap(settings: HarnessSettings) -> list[str]:
    """Remove episode folders whose owner process is gone, and kill what still runs from them. Returns the folders
    removed. Safe to call at any time: a live owner's folder is never touched."""
    roots = {work_root(settings) or Path(tempfile.gettempdir()), Path(tempfile.gettempdir())}
    removed = []
    for top in roots:
        try:
            candidates = [p for p in top.iterdir() if p.name.startswith(PREFIX) and p.is_dir()]
        except OSError:
            continue
        for root in candidates:
            if _owner_alive(root):
                continue
            _kill_leftovers(root)
            shutil.rmtree(root, ignore_errors=True)
            removed.append(str(root))
    return removed
