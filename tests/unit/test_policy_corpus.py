"""The policy's tokenizer never reads eval or holdout code: it is trained on train-split projects only (a tokenizer
trained on every seed project leaks the held-out code's vocabulary across the split)."""

from __future__ import annotations

import pytest

from evals.factory.seeds import load_seeds
from evals.factory.splits import assign_splits
from models.policy import tokenizer_corpus
from postgame.settings.factory import FactorySettings

SEEDS = load_seeds()


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_tokenizer_corpus_holds_train_projects_and_no_eval_or_holdout_code(seed):
    # checked: fails when tokenizer_corpus reads every seed project (the old _tokenizer_corpus)
    settings = FactorySettings(seed=seed)
    splits = assign_splits([s.name for s in SEEDS], settings)
    corpus = "\n".join(tokenizer_corpus(settings))
    for s in SEEDS:
        sources = [data.decode() for path, data in s.source.items() if path.endswith(".py") and len(data) > 200]
        if splits[s.name] == "train":
            assert all(text in corpus for text in sources), s.name
        else:
            assert not any(text in corpus for text in sources), (s.name, splits[s.name])
