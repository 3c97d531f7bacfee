"""Reading what the results plugin (`inside/pg_results.py`) wrote: records -> per-test statuses.

Pure. The records come through a file descriptor the harness opened outside the sandboxed copy; stdout is never
read for results. A status is derived the way pytest's `-rA` summary names it:
setup failed -> ERROR; setup skipped -> SKIPPED (XFAIL when xfail-marked); call passed -> PASSED (XPASS when
xfail-marked); call failed -> FAILED; call skipped -> SKIPPED (XFAIL when xfail-marked); a failed teardown turns
the test into ERROR. A collection error is recorded as ERROR under the collector's node id.

Subtests (`unittest`'s `self.subTest(...)`, pytest's `subtests` fixture, the `pytest-subtests` plugin) come as extra
"call" reports, flagged `subtest`, under the test's node id. They can only take a test down: a test passes only when
it and every one of its subtests pass, so one failed subtest (or one with any outcome but passed/skipped) makes a
PASSED/XPASS/XFAIL/SKIPPED test FAILED (an ERROR stays ERROR); skipped and xfailed subtests fail nothing, as in
pytest's own summary. A forged subtest report can therefore never make a test pass.

Results count only when pytest reached its end ("finish"): a run that was killed, crashed or exited early (a model's
`os._exit(0)` after printing or forging results) has every test failed. Signs of tampering void every result too:
a record without the run's token (the token reached the plugin through a pipe, never through a file, argument or
variable), malformed lines, a second "start", a test phase reported twice (subtest reports aside), records after
"finish", or what the plugin flagged itself (plugins, hooks or pytest internals changed during the run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from evals.harness.constants import TestStatus


@dataclass(frozen=True)
class ParsedResults:
    started: bool  # the plugin ran: the sandbox and pytest came up (before any repository code ran)
    finished: bool  # pytest reached sessionfinish; without it no status counts
    exitstatus: int | None
    statuses: dict[str, str] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)
    tampering: list[str] = field(default_factory=list)
    failed_subtests: dict[str, list[str]] = field(default_factory=dict)  # node id -> labels of its failed subtests


def _status(reports: dict[str, dict], subtest_outcomes: list[str]) -> str:
    status = _own_status(reports)
    if any(o not in ("passed", "skipped") for o in subtest_outcomes) and status != TestStatus.ERROR.value:
        return TestStatus.FAILED.value
    return status


def _own_status(reports: dict[str, dict]) -> str:
    setup, call, teardown = reports.get("setup"), reports.get("call"), reports.get("teardown")
    if setup and setup["outcome"] == "failed":
        return TestStatus.ERROR.value
    if setup and setup["outcome"] == "skipped":
        return (TestStatus.XFAIL if setup.get("wasxfail") else TestStatus.SKIPPED).value
    status = TestStatus.ERROR.value  # set up but never called: treated as an error
    if call:
        xf = call.get("wasxfail")
        status = {
            "passed": TestStatus.XPASS if xf else TestStatus.PASSED,
            "failed": TestStatus.FAILED,
            "skipped": TestStatus.XFAIL if xf else TestStatus.SKIPPED,
        }.get(call["outcome"], TestStatus.ERROR).value
    if teardown and teardown["outcome"] == "failed":
        return TestStatus.ERROR.value
    return status


def parse_records(data: bytes, token: str) -> ParsedResults:
    started = finished = False
    exitstatus: int | None = None
    tampering: list[str] = []
    reports: dict[str, dict[str, dict]] = {}
    subtests: dict[str, list[str]] = {}
    failed_subtests: dict[str, list[str]] = {}
    collect_errors: dict[str, str] = {}
    for n, raw in enumerate(data.splitlines(), start=1):
        try:
            rec = json.loads(raw)
            event = rec["event"]
        except (ValueError, TypeError, KeyError):
            tampering.append(f"malformed results line {n}")
            continue
        if rec.get("t") != token:
            tampering.append(f"results line {n} does not carry the run's token (forged)")
            continue
        if finished:
            tampering.append(f"results written after the session finished (line {n})")
        if event == "start":
            if started:
                tampering.append("a second start record")
            started = True
        elif event == "collection":
            pass
        elif event == "collect_error":
            collect_errors[str(rec.get("nodeid"))] = str(rec.get("longrepr", ""))
        elif (
            event == "report"
            and isinstance(rec.get("nodeid"), str)
            and rec.get("subtest") is True
            and rec.get("when") == "call"
        ):
            subtests.setdefault(rec["nodeid"], []).append(str(rec.get("outcome")))
            if rec.get("outcome") not in ("passed", "skipped"):
                failed_subtests.setdefault(rec["nodeid"], []).append(str(rec.get("label", "")))
            reports.setdefault(rec["nodeid"], {})
        elif (
            event == "report"
            and isinstance(rec.get("nodeid"), str)
            and rec.get("when") in ("setup", "call", "teardown")
        ):
            phases = reports.setdefault(rec["nodeid"], {})
            if rec["when"] in phases:
                tampering.append(f"{rec['nodeid']} {rec['when']} reported twice")
            phases[rec["when"]] = rec
        elif event == "finish":
            finished = True
            exitstatus = rec.get("exitstatus") if isinstance(rec.get("exitstatus"), int) else None
            tampering.extend(str(t) for t in rec.get("tampering") or [])
        else:
            tampering.append(f"unknown results record (line {n})")
    if not started and reports:
        tampering.append("test reports without a start record")
    statuses = {nodeid: _status(r, subtests.get(nodeid, [])) for nodeid, r in reports.items()}
    for nodeid in collect_errors:
        statuses.setdefault(nodeid, TestStatus.ERROR.value)
    if tampering or not finished:
        statuses = {}
    return ParsedResults(started, finished, exitstatus, statuses, collect_errors, tampering, failed_subtests)
