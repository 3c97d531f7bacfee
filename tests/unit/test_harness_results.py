"""The results plugin's records -> statuses, and every sign of tampering voids the results."""

import json

import pytest

from evals.harness.results import parse_records

TOKEN = "tok"


def rec(event, **kw):
    return json.dumps({"event": event, "t": TOKEN, **kw})


def run(*reports, finish=True, extra=()):
    lines = [rec("start"), rec("collection")]
    for nodeid, when, outcome, wasxfail in reports:
        lines.append(rec("report", nodeid=nodeid, when=when, outcome=outcome, wasxfail=wasxfail))
    lines += list(extra)
    if finish:
        lines.append(rec("finish", exitstatus=0, tampering=[]))
    return ("\n".join(lines) + "\n").encode()


def phases(nodeid, setup="passed", call="passed", teardown="passed", wasxfail=False):
    out = [(nodeid, "setup", setup, False)]
    if call is not None:
        out.append((nodeid, "call", call, wasxfail))
    out.append((nodeid, "teardown", teardown, False))
    return out


@pytest.mark.parametrize(
    "kwargs,status",
    [
        (dict(), "PASSED"),
        (dict(call="failed"), "FAILED"),
        (dict(call="skipped"), "SKIPPED"),
        (dict(call="skipped", wasxfail=True), "XFAIL"),
        (dict(call="passed", wasxfail=True), "XPASS"),
        (dict(setup="failed", call=None), "ERROR"),
        (dict(setup="skipped", call=None), "SKIPPED"),
        (dict(teardown="failed"), "ERROR"),
        (dict(call=None), "ERROR"),
    ],
)
def test_status_like_pytest_summary(kwargs, status):
    parsed = parse_records(run(*phases("t.py::a", **kwargs)), TOKEN)
    assert parsed.statuses == {"t.py::a": status}
    assert parsed.started and parsed.finished and not parsed.tampering


def test_collection_error_is_recorded_as_error():
    parsed = parse_records(run(extra=[rec("collect_error", nodeid="t.py", longrepr="ImportError")]), TOKEN)
    assert parsed.statuses == {"t.py": "ERROR"}
    assert "ImportError" in parsed.collect_errors["t.py"]


def test_no_finish_means_no_results():  # killed, crashed, or os._exit(0) after forging
    parsed = parse_records(run(*phases("t.py::a"), finish=False), TOKEN)
    assert parsed.started and not parsed.finished and parsed.statuses == {}


def test_nothing_written_means_not_started():
    parsed = parse_records(b"", TOKEN)
    assert not parsed.started and parsed.statuses == {}


@pytest.mark.parametrize(
    "extra",
    [
        ["not json"],
        [json.dumps({"event": "report", "nodeid": "t.py::a", "when": "call", "outcome": "passed"})],  # no token
        [json.dumps({"event": "report", "nodeid": "t.py::a", "when": "call", "outcome": "passed", "t": "guess"})],
        [rec("start")],
        [rec("report", nodeid="t.py::a", when="call", outcome="passed", wasxfail=False)],  # phase twice
        [rec("mystery")],
    ],
)
def test_tampering_voids_everything(extra):
    parsed = parse_records(run(*phases("t.py::a", call="failed"), extra=extra), TOKEN)
    assert parsed.tampering and parsed.statuses == {}


def test_records_after_finish_are_tampering():
    data = run(*phases("t.py::a")) + (rec("report", nodeid="t.py::b", when="call", outcome="passed") + "\n").encode()
    parsed = parse_records(data, TOKEN)
    assert parsed.tampering and parsed.statuses == {}


def test_plugin_flags_are_kept():
    data = "\n".join([rec("start"), rec("finish", exitstatus=0, tampering=["plugin registered during the run: x"])])
    parsed = parse_records(data.encode(), TOKEN)
    assert parsed.tampering == ["plugin registered during the run: x"]


def sub(nodeid, outcome, wasxfail=False):
    return rec("report", nodeid=nodeid, when="call", outcome=outcome, wasxfail=wasxfail, subtest=True, label="(i=1)")


@pytest.mark.parametrize(
    "subtests,kwargs,status",
    [
        (["passed", "passed"], dict(), "PASSED"),
        (["passed", "failed"], dict(), "FAILED"),  # unittest: the test's own call report still says passed
        (["failed"], dict(call="failed"), "FAILED"),  # the subtests fixture: pytest fails the test itself too
        (["skipped", "passed"], dict(), "PASSED"),
        (["failed"], dict(call="skipped", wasxfail=True), "FAILED"),
        (["failed"], dict(teardown="failed"), "ERROR"),
        (["weird"], dict(), "FAILED"),  # an outcome pytest never writes passes nothing
        ([], dict(), "PASSED"),
    ],
)
def test_subtests_can_only_take_a_test_down(subtests, kwargs, status):
    setup, *rest = phases("t.py::a", **kwargs)
    data = run(setup, extra=[])  # start, collection, setup, finish
    lines = data.decode().splitlines()[:-1] + [sub("t.py::a", o) for o in subtests]
    lines += [rec("report", nodeid=n, when=w, outcome=o, wasxfail=x) for n, w, o, x in rest]
    lines.append(rec("finish", exitstatus=0, tampering=[]))
    parsed = parse_records(("\n".join(lines) + "\n").encode(), TOKEN)
    assert not parsed.tampering
    assert parsed.statuses == {"t.py::a": status}
    assert bool(parsed.failed_subtests) == (status == "FAILED" or (status == "ERROR" and subtests == ["failed"]))


def test_a_second_call_report_that_is_not_a_subtest_is_still_tampering():
    extra = [sub("t.py::a", "passed"), rec("report", nodeid="t.py::a", when="call", outcome="passed", wasxfail=False)]
    parsed = parse_records(run(*phases("t.py::a", call="failed"), extra=extra), TOKEN)
    assert parsed.tampering == ["t.py::a call reported twice"] and parsed.statuses == {}


def test_a_subtest_flag_outside_the_call_phase_is_an_ordinary_report():
    extra = [rec("report", nodeid="t.py::a", when="setup", outcome="passed", wasxfail=False, subtest=True)]
    parsed = parse_records(run(*phases("t.py::a"), extra=extra), TOKEN)
    assert parsed.tampering and parsed.statuses == {}
