"""What the base policy learns from: train-project and stdlib code only, synthetic repairs that never show a held-out
bug (nor, withheld, a train bug: the traffic's), the share of project mutants drilled, answers that restore the
original code, and mutations of big files mapped back to the right bytes."""

from __future__ import annotations

import random

from evals.factory.mutate import find_mutations
from evals.factory.seeds import load_seeds
from evals.harness.searchreplace import parse_edits, replace_once
from models.base_data import (
    SourceFile,
    drilled,
    function_mutations,
    held_out_bugs,
    pretraining_corpus,
    repair_data,
    seed_files,
    stdlib_files,
    synthetic_repairs,
)
from postgame.config import BootstrapSettings

SEED = load_seeds(names=["lrucache"])[0]


def _records(keys: list[tuple[str, str]], split: str) -> list[dict]:
    return [
        {
            "instance_id": f"x-{k}",
            "split": split,
            "seed_project": SEED.name,
            "mutation": {"path": path, "key": k},
            "problem_statement": "s",
        }
        for path, k in keys
    ]


def test_synthetic_repairs_never_include_a_held_out_bug_and_restore_the_original():
    # checked: fails when synthetic_repairs ignores `excluded` (the held-out keys then appear among the sources)
    files = [f for f in seed_files([SEED]) if f.path == "lrucache/lru.py"]
    every = find_mutations(files[0].text, files[0].path)
    held = [(files[0].path, m.key) for m in every[::5]]
    records = (
        _records(held[: len(held) // 2], "indomain")
        + _records(held[len(held) // 2 :], "eval")
        + _records([(files[0].path, every[1].key)], "train")
    )
    excluded = held_out_bugs(records)
    assert len(excluded) == len(held)
    settings = BootstrapSettings(project_repair_share=1.0)
    repairs = synthetic_repairs(files, excluded, settings)
    sources = {e.source for e in repairs}
    assert sources and not sources & excluded
    assert (SEED.name, files[0].path, every[1].key) in sources  # a train bug is fair game
    unfiltered = {e.source for e in synthetic_repairs(files, set(), settings)}
    assert excluded <= unfiltered  # the filter, not chance, keeps them out
    by_key = {m.key: m for m in every}
    for example in repairs[::11]:
        mut = by_key[example.source[2]]
        buggy = mut.apply(files[0].text)
        (edit,) = parse_edits(example.completion)
        assert edit.search != edit.replace and edit.search in example.prompt
        assert replace_once(buggy, edit.search, edit.replace) == files[0].text


def test_withheld_train_bugs_are_neither_repaired_nor_given_as_gold_and_shown_ones_are():
    # checked: fails when repair_data ignores train_split (the train bug is then among the sources, gold not empty)
    files = [f for f in seed_files([SEED]) if f.path == "lrucache/lru.py"]
    every = find_mutations(files[0].text, files[0].path)
    train = [(files[0].path, m.key) for m in every[:4]]
    records = _records(train, "train") + _records([(files[0].path, every[5].key)], "indomain")
    keys = {(SEED.name, path, k) for path, k in train}
    for split in ("withheld", "shown"):
        settings = BootstrapSettings(train_split=split, project_repair_share=1.0)
        synthetic, gold, left_out = repair_data(files, records, {SEED.name: SEED}, settings)
        sources = {e.source for e in synthetic}
        assert (SEED.name, files[0].path, every[5].key) not in sources  # held out either way
        if split == "withheld":
            assert not gold and not sources & keys and left_out == 5
        else:
            assert len(gold) == 4 and keys <= sources and left_out == 1


def test_the_drilled_share_of_project_mutants_is_a_fixed_draw_and_stdlib_is_untouched():
    # checked: fails when synthetic_repairs ignores project_repair_share (every mutant is then repaired), and when
    # the draw is random rather than by key (two builds then keep different mutants)
    files = [f for f in seed_files([SEED]) if not f.path.startswith("tests/")]
    stdlib = [f for f in stdlib_files(BootstrapSettings(stdlib_max_files=3))]
    settings = {share: BootstrapSettings(project_repair_share=share) for share in (0.25, 0.5, 1.0)}
    kept = {share: {e.source for e in synthetic_repairs(files, set(), s)} for share, s in settings.items()}
    assert kept[0.25] == {e.source for e in synthetic_repairs(files, set(), settings[0.25])}
    assert kept[0.25] < kept[0.5] < kept[1.0]
    assert 0.15 < len(kept[0.25]) / len(kept[1.0]) < 0.35
    assert all(drilled(key, 0.25) for key in kept[0.25])
    assert len(synthetic_repairs(stdlib, set(), settings[0.25])) == len(synthetic_repairs(stdlib, set(), settings[1.0]))


def test_corpus_is_stdlib_and_the_given_train_projects_only():
    settings = BootstrapSettings(stdlib_max_files=5)
    corpus = pretraining_corpus([SEED], settings)
    assert {f.project for f in corpus} == {"stdlib", SEED.name}
    assert len([f for f in corpus if f.project == "stdlib"]) == 5
    assert all("test" not in f.path.split("/")[0] for f in corpus if f.project == "stdlib")


def test_function_mutations_of_a_stdlib_module_map_back_to_the_right_bytes():
    # checked: fails when the `if 1:` header's length is not subtracted from the offsets
    file = next(
        f
        for f in stdlib_files(BootstrapSettings(stdlib_max_files=60))
        if f.path == "bisect.py" or f.path.startswith("json/")
    )
    muts = function_mutations(file, random.Random(0), 10)
    assert muts
    data = file.text.encode()
    for m in muts:
        assert data[m.start : m.end].decode() == m.original
        assert file.text.splitlines()[m.line - 1].strip()  # `line` points at code
        compile(m.apply(file.text), file.path, "exec")


def test_an_indented_method_is_mutated_in_place():
    text = "class A:\n    def f(self, x):\n        if x < 1:\n            return x + 1\n        return x\n"
    file = SourceFile("stdlib", "python/stdlib", "a.py", text)
    for seed in range(6):
        (m,) = function_mutations(file, random.Random(seed), 1)
        assert text.encode()[m.start : m.end].decode() == m.original and 2 <= m.line <= 5
