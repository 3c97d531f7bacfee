"""Forged result records written straight to the results descriptor, followed by exit(0), resolve nothing: they do
not carry the run's token."""

from evals.harness import evaluate
from tests.harness_fixtures import CALC_F2P, CALC_P2P, calc_instance, quick_settings, with_code

FORGE = f"""import json, os
_lines = [json.dumps({{"event": "start"}})]
for _t in {CALC_F2P + CALC_P2P!r}:
    for _when in ("setup", "call", "teardown"):
        _lines.append(json.dumps({{"event": "report", "nodeid": _t, "when": _when, "outcome": "passed", "wasxfail": False}}))
_lines.append(json.dumps({{"event": "finish", "exitstatus": 0, "tampering": []}}))
for _fd in os.listdir("/proc/self/fd"):
    if int(_fd) > 2:
        try:
            os.write(int(_fd), ("\\n".join(_lines) + "\\n").encode())
        except OSError:
            pass
os._exit(0)
"""


def test_forged_records_are_void(tmp_path):
    tiny = calc_instance(tmp_path)
    result = evaluate(tiny.instance, with_code(tiny, FORGE), repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None
    assert any("token" in t for t in result.tampering), result.tampering
