"""The policy as an agent: tool calls parsed from completions, the chat template rendered with `tools=`, and the
path a user's real checkpoint takes (a local Hugging Face folder with its own tool-calling chat template), on CPU
with a small folder built here in that shape and taught one tool call."""

from __future__ import annotations

import json

import pytest

from evals.agent import make_environment
from evals.agent.episode import SYSTEM_PROMPT, run_episode, tool_schemas
from models.agent import COMPACT_TEMPLATE, ChatPolicy, parse_turn
from postgame.config import PolicySettings
from postgame.settings.agent import AgentSettings
from tests.harness_fixtures import calc_instance, quick_settings
from tests.support import tiny_qwen2

# A Hermes/Qwen-style template, as real tool-calling checkpoints ship (chat_template.jinja).
HERMES = (
    "{%- if tools %}<|im_start|>system\n<tools>\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}</tools>\n"
    'Call a tool as <tool_call>{"name": NAME, "arguments": ARGS}</tool_call><|im_end|>\n{% endif %}'
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<|im_start|>assistant\n{% if m.content %}{{ m.content }}{% endif %}"
    '{% for c in m.tool_calls or [] %}<tool_call>\n{"name": "{{ c.function.name }}", "arguments": '
    "{{ c.function.arguments | tojson }}}\n</tool_call>{% endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SUBMIT_CALL = '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call><|im_end|>'


def test_parse_turn_reads_hermes_tool_calls_and_keeps_bad_json_raw():
    msg = parse_turn(
        'Looking.<tool_call>{"name": "view", "arguments": {"path": "a.py"}}</tool_call>'
        '<tool_call>{"name": "edit", "arguments": {"path": </tool_call>',
        3,
    )
    assert msg["content"] == "Looking."
    first, second = msg["tool_calls"]
    assert first == {
        "id": "call_3_0",
        "type": "function",
        "function": {"name": "view", "arguments": json.dumps({"path": "a.py"})},
    }
    assert second["function"]["name"] == "edit" and second["function"]["arguments"].startswith('{"name"')
    assert parse_turn("no call here", 1) == {"role": "assistant", "content": "no call here"}
    bare = parse_turn('{"name": "run_tests", "parameters": {"paths": ["t.py"]}}', 2)  # Llama 3's form
    assert bare["content"] is None and bare["tool_calls"][0]["function"] == {
        "name": "run_tests",
        "arguments": json.dumps({"paths": ["t.py"]}),
    }


def test_the_compact_template_renders_tools_calls_and_results():
    from models.policy import SHIPPED_BASE
    from models.tokenizer import load_tokenizer

    tok = load_tokenizer(SHIPPED_BASE)
    tok.chat_template = COMPACT_TEMPLATE
    env = make_environment(AgentSettings(), quick_settings())
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "view", "arguments": '{"path": "a.py"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "1 x = 1"},
    ]
    from models.agent import template_messages

    text = tok.apply_chat_template(
        template_messages(messages), tools=tool_schemas(env), add_generation_prompt=True, tokenize=False
    )
    assert text.startswith("tools: list_files(path) view(path,start,end)")
    assert '<call>view {"path": "a.py"}</call>' in text
    assert "<tool>1 x = 1" in text and text.endswith("<assistant>")


def test_the_compact_template_writes_an_edit_as_the_block_the_base_knows_and_reads_it_back():
    from models.agent import template_messages
    from models.policy import SHIPPED_BASE
    from models.tokenizer import load_tokenizer

    tok = load_tokenizer(SHIPPED_BASE)
    tok.chat_template = COMPACT_TEMPLATE
    args = {"path": "calc/ops.py", "search": "    return a // b\n", "replace": "    return a / b\n"}
    msgs = [
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "edit", "arguments": json.dumps(args)}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "d", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}],
        },
    ]
    text = tok.apply_chat_template(template_messages(msgs), tokenize=False)
    block = "calc/ops.py\n<<<<<<< SEARCH\n    return a // b\n=======\n    return a / b\n>>>>>>> REPLACE\n"
    assert "<assistant>" + block + tok.eos_token in text and "<call>run_tests {}</call>" in text
    assert json.loads(parse_turn(block, 1)["tool_calls"][0]["function"]["arguments"]) == args
    assert parse_turn("<call>run_tests {}</call>", 2)["tool_calls"][0]["function"] == {
        "name": "run_tests",
        "arguments": "{}",
    }


@pytest.fixture(scope="module")
def tool_checkpoint(tmp_path_factory):
    """A tiny Qwen2 with its own tool-calling chat template, taught to answer any task with a submit call."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("hf-tool-model")
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|im_end|>", "<|pad|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator([HERMES, SUBMIT_CALL, SYSTEM_PROMPT] * 3, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|pad|>")
    from tokenizers import decoders

    tok.backend_tokenizer.decoder = decoders.ByteLevel()
    tok.chat_template = HERMES
    model = tiny_qwen2(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        max_position_embeddings=4096,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    tok.save_pretrained(out)
    model.save_pretrained(out)
    # Teach it the one call: the rendered first turn of an episode, then the submit call.
    policy = ChatPolicy(out, settings=PolicySettings(), max_new_tokens=32)
    env = make_environment(AgentSettings(tools=("submit",)), quick_settings())
    tasks = ["TASK", "Task acme__calc-1 in acme/calc:\ndivide() floors: 7/2 gives 3", "fix the bug in x.py please"]
    batch = []
    for task in tasks:
        prompt = policy.render(
            [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}], tool_schemas(env)
        )
        p_ids = tok(prompt, add_special_tokens=False)["input_ids"]  # prompt and answer tokenised apart, as served
        ids = torch.tensor([p_ids + tok(SUBMIT_CALL, add_special_tokens=False)["input_ids"]])
        labels = ids.clone()
        labels[:, : len(p_ids)] = -100
        batch.append((ids, labels))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for step in range(90):
        ids, labels = batch[step % len(batch)]
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(out)
    return out


def test_a_local_checkpoint_with_its_own_template_acts_through_tool_calls(tool_checkpoint, tmp_path):
    tiny = calc_instance(tmp_path)
    policy = ChatPolicy(tool_checkpoint, settings=PolicySettings(), name="hf-local", max_new_tokens=32)
    env = make_environment(AgentSettings(tools=("submit",)), quick_settings(), repos_dir=tiny.repos_dir)
    rendered = policy.render([{"role": "user", "content": "x"}], tool_schemas(env))
    assert "<tools>" in rendered and '"name": "submit"' in rendered  # its own template, with tools=
    traj = run_episode(env, tiny.instance, policy)
    call = traj.messages[2]["tool_calls"][0]
    assert call["function"]["name"] == "submit" and json.loads(call["function"]["arguments"]) == {}
    assert traj.result.outcome == "submitted" and traj.result.reward == 0.0  # it changed nothing: graded, not fixed
    assert traj.turns == 1 and traj.prompt_tokens > 0 and traj.completion_tokens > 0


def test_trls_grpo_trainer_drives_the_environment_through_environment_factory(tool_checkpoint, tmp_path):
    # checked: fails when TRL is handed an AgentEnvironment itself (step, close, result, ... offered as tools)
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_template

    from evals.agent import trl_environment_factory

    tiny = calc_instance(tmp_path)
    tok = AutoTokenizer.from_pretrained(tool_checkpoint)
    tok.response_template = qwen3_template  # its calls are Qwen/Hermes <tool_call> blocks
    rows = [{"prompt": [{"role": "user", "content": "TASK"}], "instance_id": tiny.instance.instance_id}]
    factory = trl_environment_factory(
        AgentSettings(),
        quick_settings(),
        instances={tiny.instance.instance_id: tiny.instance},
        repos_dir=tiny.repos_dir,
    )
    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=16,
        max_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
    )
    trainer = GRPOTrainer(
        model=str(tool_checkpoint),
        processing_class=tok,
        args=args,
        train_dataset=Dataset.from_list(rows),
        environment_factory=factory,
    )
    assert sorted(m.__name__ for m in trainer._env_tools[None]) == sorted(AgentSettings().tools)
    trainer.train()  # TRL resets an environment per rollout and reads get_reward when it ends
    envs = trainer._environment_pool[None]
    assert len(envs) == 2 and all(e._env.done for e in envs)
    assert "rewards/CodingTools/mean" in trainer.state.log_history[-1]
    env = envs[0]  # the tools TRL holds are the environment's own, bound to the instance TRL resets
    assert "divide() floors" in env.reset(instance_id=tiny.instance.instance_id)
    edit = next(m for m in trainer._env_tools[None] if m.__name__ == "edit" and m.__self__ is env)
    assert edit(path="calc/ops.py", search="a // b", replace="a / b").startswith("edited calc/ops.py")
    env.submit()
    assert env.get_reward() == 1.0


def test_the_scaffold_lets_through_only_edits_copied_from_what_was_shown_that_change_something():
    # checked: the `.py` and `pkg/a.py` cases fail when usable_turn does not check the edit's path; the run_tests case when it lets a repeated call through
    from models.agent import usable_turn

    def edit(search, replace, path="a.py"):
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {
                        "name": "edit",
                        "arguments": json.dumps({"path": path, "search": search, "replace": replace}),
                    },
                }
            ],
        }

    shown = "Fix f.\n\na.py\n```python\ndef f(a, b):\n    return a // b\n```\n"
    assert usable_turn(edit("    return a // b\n", "    return a / b\n"), shown)
    for path in (".py", "pkg/a.py", "b.py", ""):  # a file the agent was never shown (the tool would refuse it)
        assert not usable_turn(edit("    return a // b\n", "    return a / b\n", path), shown)
    assert not usable_turn(edit("    return a // b\n", "    return a // b\n"), shown)  # changes nothing
    assert not usable_turn(edit("    return a % b\n", "    return a / b\n"), shown)  # not what was shown
    assert not usable_turn({"role": "assistant", "content": "hm"}, shown)  # no tool call
    assert usable_turn(parse_turn("<call>run_tests {}</call>", 1), shown)
    run, submit = parse_turn("<call>run_tests {}</call>", 2), parse_turn("<call>submit {}</call>", 2)
    assert not usable_turn(run, shown, previous=parse_turn("<call>run_tests {}</call>", 1))  # nothing new to see
    assert usable_turn(run, shown, previous=edit("    return a // b\n", "    return a / b\n"))
    assert usable_turn(submit, shown, previous=parse_turn("<call>submit {}</call>", 1))  # the second submit counts


def test_with_a_trial_the_first_usable_turn_whose_edits_keep_the_visible_tests_is_taken():
    from models.agent import choose_turn

    shown = "Fix f.\n\na.py\n```python\ndef f(a, b):\n    return a // b\n```\n"
    wrong, right = (
        parse_turn(f"a.py\n<<<<<<< SEARCH\n    return a // b\n=======\n    return {r}\n>>>>>>> REPLACE\n", 1)
        for r in ("a * b", "a / b")
    )
    view, junk = parse_turn('<call>view {"path": "a.py"}</call>', 1), {"role": "assistant", "content": "hm"}
    asked = []

    def trial(edits):
        asked.append(edits[0]["replace"])
        return "/" in edits[0]["replace"]

    assert choose_turn([junk, wrong, wrong, right], shown, trial=trial) is right
    assert asked == ["    return a * b\n", "    return a / b\n"]  # unusable turns and the same edits twice: not run
    assert choose_turn([wrong, right], shown) is wrong  # no trial: the likeliest usable turn, as before
    assert choose_turn([wrong, view, right], shown, trial=trial) is view  # a turn that edits nothing needs no trial
    assert choose_turn([wrong, wrong], shown, trial=trial) is wrong  # none passes: the likeliest usable
    assert choose_turn([wrong, right], shown, trial=lambda edits: None) is wrong  # the check could not run
    assert choose_turn([junk, junk], shown, trial=trial) is junk  # none usable: the first, for the env to refuse


def test_an_edit_turn_naming_a_half_remembered_path_is_pointed_at_the_file_shown():
    from models.agent import policy_factory, repoint_turn, usable_turn
    from postgame.config import Config

    shown = "Fix f.\n\ncalc2/ops.py (lines 1-2)\n```python\ndef f(a, b):\n    return a // b\n```\n"
    block = "{}\n<<<<<<< SEARCH\n    return a // b\n=======\n    return a / b\n>>>>>>> REPLACE\n"
    stray, right = parse_turn(block.format("calc.py"), 1), parse_turn(block.format("calc2/ops.py"), 1)
    assert not usable_turn(stray, shown)  # the file does not exist: the tool would refuse it
    moved = repoint_turn(stray, shown)
    assert moved["tool_calls"] == right["tool_calls"] and usable_turn(moved, shown)
    assert repoint_turn(right, shown) is right and repoint_turn(parse_turn("<call>run_tests {}</call>", 1), shown)
    elsewhere = parse_turn(block.format("calc.py").replace("a // b\n=", "a % b\n="), 1)
    assert repoint_turn(elsewhere, shown) is elsewhere  # no shown file holds its search text
    listed = "calc/util.py\n" + shown  # a file the agent saw named: its edit stays there, the same lines or not
    named = parse_turn(block.format("calc/util.py"), 1)
    assert repoint_turn(named, listed) is named and usable_turn(named, listed)
    assert policy_factory(Config(), "p", "n", greedy=True).keywords["repoint"] is True  # scaffold.repoint_paths


def test_an_agent_that_verifies_takes_the_beam_whose_edit_passes_the_visible_tests(tmp_path):
    # checked: fails when run_episode does not hand the policy the environment's trial
    from evals.agent.episode import ScriptedPolicy

    class Beams(ScriptedPolicy):  # two candidate turns a call: a breaking edit first, the gold edit second
        def act(self, messages, tools, trial=None):
            from evals.agent.episode import Turn
            from models.agent import choose_turn

            context = "\n".join(m.get("content") or "" for m in messages if m["role"] in ("user", "tool"))
            if self._next:
                return super().act(messages, tools, trial)
            self._next += 1
            bad, gold = (
                parse_turn(f"calc/ops.py\n<<<<<<< SEARCH\n{s}\n=======\n{r}\n>>>>>>> REPLACE\n", 1)
                for s, r in (("    return a - b", "    return a + b"), ("    return a // b", "    return a / b"))
            )
            shown = context + "calc/ops.py\n    return a - b\n    return a // b\n"
            return Turn(choose_turn([bad, gold], shown, None, trial))

    tiny = calc_instance(tmp_path)
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    traj = run_episode(env, tiny.instance, Beams([{}, {"tool": "submit", "args": {}}]))
    assert traj.result.outcome == "submitted" and traj.result.reward == 1.0


# --- torch threads in the processes that play episodes ----------------------------------------------------------------


def test_episode_threads_share_the_cores_out_among_local_workers(monkeypatch, tmp_path):
    # checked: fails when episode_threads ignores the worker count (returns 0 or every core for a process pool)
    import os

    from models.agent import episode_threads
    from tests.support import make_config

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    cfg = make_config(tmp_path)
    at = lambda **runner: episode_threads(cfg.model_copy(update={"runner": cfg.runner.model_copy(update=runner)}))  # noqa: E731
    assert at(kind="process", workers=2) == 4 and at(kind="process", workers=0) == 1  # 0 = one worker per core
    assert at(kind="thread", workers=3) == 2 and at(kind="process", workers=16) == 1
    assert at(kind="dask", workers=4) == 2 and at(kind="dask", address="tcp://127.0.0.1:8786") == 0
    assert at(kind="serial") == 0  # one process: torch's own default
    assert at(kind="process", workers=2, torch_threads=3) == 3


def _threads_after_loading(path: str, threads: int) -> int:
    import torch

    from models.agent import load_agent_policy

    load_agent_policy(path, PolicySettings(), "base", True, None, threads=threads)
    return torch.get_num_threads()


def test_a_worker_that_loads_the_policy_runs_torch_on_its_share_of_the_cores():
    """In a fresh worker process, as the runner's pool makes them: loading the episodes' policy sets torch's threads."""
    # checked: fails when _shared_engine does not call torch.set_num_threads
    import multiprocessing

    from models.policy import SHIPPED_AGENT_BASE

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_threads_after_loading, (str(SHIPPED_AGENT_BASE), 1)) == 1
