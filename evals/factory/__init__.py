"""The task factory and the traffic simulator: a world of verifiable coding tasks that a laptop can run.

    postgame factory build [--seed N] [--json]     # seed projects -> harness-validated SWE-bench instances
    postgame factory ls | show ID | export --split NAME --out DIR
    postgame simulate --sessions N [--json]      # the champion's production traffic (models.traffic), as logs

Modules, in the order data flows: `seeds` (the seed projects under evals/seeds), `mutate` (bug operators by name),
`verify` (which mutants are bugs: real harness runs, twice), `statements` (problem statements from the failing
tests), `files` (tarballs, diffs, git repositories), `splits` (train/eval/holdout by project), `build` (the
catalog in the store), `instances` (reading it back: `load_split`), `simulate` (traffic, given a policy), `cli`. The prompt and answer
format the policy sees live in `evals.prompts`. Imports are light: nothing runs or connects on import.
"""
