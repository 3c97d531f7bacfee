"""Runs one shell command of an agent inside the sandbox, after setting the same resource limits as a test run.

python -I -B /opt/postgame-harness/pg_exec.py --limits JSON -- /bin/sh -c COMMAND
"""

import json
import os
import resource
import sys


def main() -> int:
    argv = sys.argv[1:]
    sep = argv.index("--")
    opts = dict(zip(argv[:sep:2], argv[1:sep:2]))
    for name, (soft, hard) in json.loads(opts["--limits"]).items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name.upper()), (soft, hard))
    command = argv[sep + 1 :]
    os.execv(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
