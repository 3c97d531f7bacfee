"""The task factory and the traffic simulator: a world of verifiable coding tasks that a laptop can run.

    postgame tasks build [--seed N] [--json]     # seed projects -> harness-validated SWE-bench instances
    postgame tasks ls | show ID | export --split NAME --out DIR
    postgame simulate --sessions N [--json]      # the champion's production traffic, as schema-v1 logs

Modules, in the order data flows: `seeds` (the seed projects under evals/seeds), `mutate` (bug operators by name),
`validate` (which mutants are bugs: real harness runs, twice), `statements` (problem statements from the failing
tests), `snapshot` (tarballs, diffs, git repositories), `splits` (train/eval/holdout by project), `build` (the
catalog in the store), `catalog` (reading it back: `load_tasks`), `simulate` (traffic), `cli`. The prompt and answer
format the policy sees live in `evals.prompts`. Imports are light: nothing runs or connects on import.
"""
