"""The results plugin, loaded inside the sandbox from outside the repository (see pg_launch.py).

It writes one JSON record per line, each carrying the run's token, to a file descriptor the harness opened outside
the sandboxed copy: the "start" record, every test report (`nodeid, when, outcome, wasxfail`, and `subtest` + `label`
for a subtest's report), collection errors, and a "finish" record with pytest's exit status and any sign of
tampering: plugins or hook implementations registered after collection began (conftest files excepted: the harness
has already reverted those the model wrote), or core pytest functions replaced during the run. Text printed on stdout
never counts.

Limits, said plainly: the code under test runs in this very process. It can write forged records to the same
descriptor (the token makes that need a search of this process's memory), or patch pytest in ways these checks do
not see. The harness closes the known routes (conftest, config,
plugins, stdout, early exit, skips); this plugin detects the common in-process ones. It is not a proof.
"""

import json
import os
import sys
import types

import _pytest.python
import _pytest.reports
import _pytest.runner
import pytest

_WATCHED_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_collection_modifyitems",
    "pytest_collectreport",
    "pytest_itemcollected",
    "pytest_deselected",
)
_WATCHED_FUNCS = (
    (_pytest.runner, "call_and_report"),
    (_pytest.runner, "runtestprotocol"),
    (_pytest.runner, "call_runtest_hook"),
    (_pytest.runner.CallInfo, "from_call"),
    (_pytest.reports.TestReport, "from_item_and_call"),
    (_pytest.reports.TestReport, "__init__"),
    (_pytest.python.Function, "runtest"),
    (_pytest.python, "pytest_pyfunc_call"),
)
_INTERNAL = ("_pytest", "pytest", "pluggy")
# Subtest reports: pytest >= 9's built-in `SubtestReport` (unittest `subTest`, the `subtests` fixture) and the
# `pytest-subtests` plugin's `SubTestReport`. Both are TestReports with a `.context` holding `msg` and `kwargs`, and
# come as extra "call" reports under the test's own node id.
_SUBTEST_CLASSES = ("SubtestReport", "SubTestReport")


def _is_subtest(report):
    if report.when != "call" or not isinstance(report, _pytest.reports.TestReport):
        return False
    context = getattr(report, "context", None)
    return (
        any(cls.__name__ in _SUBTEST_CLASSES for cls in type(report).__mro__)
        and hasattr(context, "msg")
        and hasattr(context, "kwargs")
    )


def _subtest_label(report):
    try:
        context = report.context
        parts = [f"[{context.msg}]"] if context.msg is not None else []
        if context.kwargs:
            parts.append("(" + ", ".join(f"{k}={v}" for k, v in context.kwargs.items()) + ")")
        return " ".join(parts)[:200] or "(<subtest>)"
    except Exception:  # noqa: BLE001 - a label is for the log only
        return "(<subtest>)"


class ResultsPlugin:
    def __init__(self, fd, root, token):
        self._fd = fd
        self._token = token
        self._root = root
        self._write = os.write
        self._dumps = json.dumps
        self._plugins = None
        self._hookimpls = {}
        self._funcs = [(owner, name, owner.__dict__.get(name)) for owner, name in _WATCHED_FUNCS]

    def emit(self, record):
        data = (self._dumps({**record, "t": self._token}) + "\n").encode()
        try:
            while data:
                data = data[self._write(self._fd, data) :]
        except OSError:
            pass

    @pytest.hookimpl(tryfirst=True)
    def pytest_load_initial_conftests(self, early_config):
        # After plugin autoload: dist-info folders or modules the model adds to the repository stay inert.
        if self._root not in sys.path:
            sys.path.insert(0, self._root)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        pm = session.config.pluginmanager
        # Objects are kept (not only their ids) so an id cannot be reused by something registered later.
        self._plugins = {id(p): p for p in pm.get_plugins()}
        for name in _WATCHED_HOOKS:
            caller = getattr(pm.hook, name, None)
            if caller is not None:
                self._hookimpls[name] = {id(h): h for h in caller.get_hookimpls()}
        self.emit({"event": "collection"})

    def pytest_collectreport(self, report):
        if report.failed:
            self.emit({"event": "collect_error", "nodeid": report.nodeid, "longrepr": str(report.longrepr)[-4000:]})

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        record = {
            "event": "report",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "wasxfail": hasattr(report, "wasxfail"),
        }
        if _is_subtest(report):
            record.update(subtest=True, label=_subtest_label(report))
        self.emit(record)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self.emit({"event": "finish", "exitstatus": int(exitstatus), "tampering": self._tampering(session)})

    def _tampering(self, session):
        if self._plugins is None:
            return []
        pm = session.config.pluginmanager
        allowed = set(self._plugins) | {id(p) for p in getattr(pm, "_conftest_plugins", ())}

        def suspicious(plugin):
            if id(plugin) in allowed:
                return False
            module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
            return str(module).split(".")[0] not in _INTERNAL

        found = []
        for name, plugin in pm.list_name_plugin():
            if plugin is not None and suspicious(plugin):
                found.append(f"plugin registered during the run: {name}")
        for hook, before in self._hookimpls.items():
            for impl in getattr(pm.hook, hook).get_hookimpls():
                if id(impl) not in before and suspicious(impl.plugin):
                    found.append(f"hook implementation added during the run: {hook} from {impl.plugin_name}")
        for owner, name, original in self._funcs:
            if owner.__dict__.get(name) is not original:
                found.append(f"pytest internals replaced during the run: {getattr(owner, '__name__', owner)}.{name}")
        return sorted(set(found))
