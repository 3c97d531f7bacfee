"""Starts a test run inside the sandbox, before any code of the repository can run.

    python -I -B /opt/postgame-harness/pg_launch.py --fd N --token-fd M --root /testbed --limits JSON -- <pytest args>

Sets the resource limits, reads the run's token from a pipe (then closed: the token is in no file, argument or
variable the code under test could read), loads the results plugin from this trusted folder (never from the
repository: `-I` keeps the current folder and PYTHON* variables out of sys.path), writes the "start" record, then
runs pytest in-process.
The repository folder is put on sys.path only after pytest's plugin autoload, so files the model adds there cannot
be picked up as plugins or shadow pytest.
"""

import importlib.util
import json
import os
import resource
import sys


def main() -> int:
    argv = sys.argv[1:]
    sep = argv.index("--")
    opts = dict(zip(argv[:sep:2], argv[1:sep:2]))
    pytest_args = argv[sep + 1 :]
    for name, (soft, hard) in json.loads(opts["--limits"]).items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name.upper()), (soft, hard))
    plugin_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pg_results.py")
    spec = importlib.util.spec_from_file_location("pg_results", plugin_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the results plugin {plugin_path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pg_results"] = module
    spec.loader.exec_module(module)
    token_fd = int(opts["--token-fd"])
    token = b""
    while chunk := os.read(token_fd, 256):
        token += chunk
    os.close(token_fd)
    plugin = module.ResultsPlugin(int(opts["--fd"]), opts["--root"], token.decode())
    plugin.emit({"event": "start", "pid": os.getpid()})

    import pytest

    os.chdir(opts["--root"])
    sys.argv = ["pytest", *pytest_args]
    code = pytest.main(pytest_args, plugins=[plugin])
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
