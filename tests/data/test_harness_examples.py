"""Every example instance shipped with the harness grades as it must (each property guards the grader itself):
- gold patch -> resolved (the instance is solvable and its test lists are right);
- empty patch -> unresolved (the instance is not trivially solved);
- test patch alone -> every FAIL_TO_PASS test fails, every PASS_TO_PASS test passes (the tests really test the fix).
"""

import pytest

from evals.harness import load_instances
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.selfcheck import check_instances
from tests.harness_fixtures import quick_settings


@pytest.fixture(scope="module")
def example_repos(tmp_path_factory):
    dest = tmp_path_factory.mktemp("example-repos")
    build_repos(dest)  # also checks the built commits are the instances' base_commit
    return dest


def test_examples_exist():
    instances = load_instances(INSTANCES_FILE)
    assert len(instances) >= 5
    assert all(i.FAIL_TO_PASS and i.patch and i.test_patch for i in instances)


def test_every_example_grades_as_it_must(example_repos):
    checks = check_instances(
        load_instances(INSTANCES_FILE), repos_dir=example_repos, settings=quick_settings(), workers=2
    )
    assert {c.instance_id: c.problems for c in checks if c.problems} == {}
