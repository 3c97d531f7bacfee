"""Builds a per-repository environment inside the build sandbox (see repoenv.py), step by step.

    python -I -B /opt/postgame-harness/pg_envbuild.py --plan JSON

The plan: `limits` (set on this process first, inherited by every step), `steps` (each `argv` run with `cwd`), and
`pth` (a path line written last into the venv's site-packages as `zz-postgame-harness.pth`, so the harness's own
packages, pytest among them, come after the environment's on sys.path). Each step is echoed as `$ ...`; a failing
step ends the build with the line `pg-envbuild: FAILED step N (exit X): <command>`, which the harness reports.
"""

import json
import os
import resource
import shlex
import subprocess
import sys
import sysconfig


def main() -> int:
    plan = json.loads(sys.argv[sys.argv.index("--plan") + 1])
    for name, (soft, hard) in plan["limits"].items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name.upper()), (soft, hard))
    for n, step in enumerate(plan["steps"], start=1):
        command = shlex.join(step["argv"])
        print(f"$ {command}", flush=True)
        code = subprocess.run(step["argv"], cwd=step["cwd"], stdin=subprocess.DEVNULL, check=False).returncode
        if code != 0:
            print(f"pg-envbuild: FAILED step {n} (exit {code}): {command}", flush=True)
            return 3
    venv = plan["venv"]
    paths = sysconfig.get_paths(vars={"base": venv, "platbase": venv})
    with open(os.path.join(paths["purelib"], "zz-postgame-harness.pth"), "w") as f:
        f.write(plan["pth"] + "\n")
    print("pg-envbuild: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
