"""Traffic shows the policy the same prompt as training and evaluation (regression: the simulator rendered whole
files while the policy was trained and graded on the oracle window, so its traffic held no usable answer)."""

from __future__ import annotations

import gzip
import json


def test_every_logged_session_carries_the_prompt_evaluation_shows(small_world):
    from evals.factory.instances import load_split, prompt_for
    from postgame.runtime import store

    cfg = small_world
    tasks = {i.instance_id: i for i in load_split(cfg, "train")}
    s = store(cfg)
    seen = 0
    for info in s.list(cfg.factory.simulate.log_prefix.rstrip("/") + "/"):
        for line in gzip.decompress(s.get(info.key)).splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # garbage another test of this world plants on purpose
            if not str(record.get("session_id", "")).startswith("sim-"):
                continue  # not a simulated session
            user = [m["content"] for m in record["messages"] if m["role"] == "user"]
            assert user == [prompt_for(cfg, tasks[record["task"]["instance_id"]])]
            seen += 1
    assert seen == 4  # the world's 4 simulated sessions
