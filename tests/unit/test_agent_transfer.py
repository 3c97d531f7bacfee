"""Stage 2 of the agent base (models/agent_transfer.py): repairs of code the base never read, and the shipped
checkpoint's manifest recording both stages' settings."""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

import pytest

from models.agent import COMPACT_TEMPLATE
from models.agent_base import AgentBaseSettings, _default_tools, _edit_args
from models.agent_transfer import TransferSettings, unseen_files, unseen_rows
from models.base_data import function_mutations, repair_example, stdlib_files
from models.tokenizer import load_tokenizer
from postgame.config import BootstrapSettings

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "base_agent"


@pytest.fixture(scope="module")
def files():
    return unseen_files(BootstrapSettings(), TransferSettings())


def test_unseen_code_is_none_the_base_read_and_no_seed_project(files):
    read = {f.path for f in stdlib_files(BootstrapSettings())}
    stdlib = [f for f in files if f.project == "stdlib-unseen"]
    packages = {f.project for f in files} - {"stdlib-unseen"}
    assert stdlib and packages == {"torch", "peft"}
    assert not read & {f.path for f in stdlib}  # the pre-training subset is left out
    assert all(f.project in {"stdlib-unseen", "torch", "peft"} for f in files)  # no seed project, train or held out
    assert not [f.path for f in files if "/tests/" in f"/{f.path}" or "/_vendor/" in f.path]
    assert [f.path for f in stdlib] == sorted(f.path for f in stdlib)  # the same list on every build
    assert all(1500 < len(f.text.encode()) < 40_000 for f in files)


def test_a_repair_of_unseen_code_can_only_be_copied_from_the_prompt(files):
    file = next(f for f in files if f.path == "torch/optim/sgd.py")
    rng = random.Random(0)
    mutation = function_mutations(file, rng, 1)[0]
    example = repair_example(file, mutation, None, rng)
    gold = _edit_args(example.completion)
    assert gold is not None and gold["path"] == "torch/optim/sgd.py"
    assert gold["search"] in example.prompt  # the bug's lines are shown, mutated
    assert gold["search"] not in file.text and gold["replace"] in file.text  # and the answer restores the original


def test_only_the_agents_own_turns_are_learned_never_a_wrong_first_edit(files):
    tok = load_tokenizer(SHIPPED)
    tok.chat_template = COMPACT_TEMPLATE
    chosen = [f for f in files if f.project == "stdlib-unseen"][:8]
    rows = unseen_rows(chosen, tok, TransferSettings(), _default_tools(), AgentBaseSettings(recover_share=0.5))
    assert len(rows) >= 6
    recovered = 0
    for ids, labels in rows:
        learned = tok.decode([t for t, label in zip(ids, labels) if label != -100])
        assert "submit" in learned and "run_tests" in learned
        for shown in ("You are fixing a bug", "Visible tests:", "passed", "Find the bug"):
            assert shown not in learned, shown  # prompts, tool results and the system prompt are never targets
        runs = sum(1 for i, label in enumerate(labels) if label != -100 and (i == 0 or labels[i - 1] == -100))
        turns = tok.decode(ids).count("<assistant>")
        assert runs in (turns, turns - 1)  # every turn of the agent learned, but a wrong first edit
        recovered += runs == turns - 1
    assert 0 < recovered < len(rows)  # some rows start with a wrong edit, shown but never learned


def test_the_shipped_agent_base_was_built_with_these_settings():
    manifest = json.loads((SHIPPED / "manifest.json").read_text())
    stage1 = manifest["stage1"]
    assert stage1["settings"] == asdict(AgentBaseSettings(precision=stage1["settings"]["precision"]))
    assert manifest["settings"] == asdict(TransferSettings())
    assert manifest["stage1"]["sha256"] != manifest["sha256"]
