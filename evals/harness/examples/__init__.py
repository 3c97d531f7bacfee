"""Hand-written example instances of the harness: tiny repositories with one real bug each.

    python -m evals.harness.examples.build /tmp/example-repos      # the repositories, as bare git repositories
    postgame eval run --instances evals/harness/examples/instances.jsonl --predictions P.jsonl \\
        --repos /tmp/example-repos --out /tmp/eval-out

`repos/<owner>__<name>/` holds each repository's base tree as plain files; `instances.jsonl` the instances (gold
patch, test patch, FAIL_TO_PASS / PASS_TO_PASS found by running the base and the gold patch in the harness).
"""

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
INSTANCES_FILE = EXAMPLES_DIR / "instances.jsonl"
REPOS_DIR = EXAMPLES_DIR / "repos"
