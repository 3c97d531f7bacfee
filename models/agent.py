"""The policy as an agent: chat messages with tool calls in, one assistant turn out.

    policy = ChatPolicy(path, settings=cfg.policy, name="champion", seed=0)
    turn = policy.act(messages, tools)        # messages in the OpenAI chat shape, tools as JSON schemas

The prompt is the tokenizer's own chat template rendered with `tools=` (transformers' `apply_chat_template`), as for
any Hugging Face checkpoint with tool support; a checkpoint without one (the embedded base) gets `COMPACT_TEMPLATE`,
a short template of its own (tool names and argument names only: its context is 2,048 tokens). Tool calls are read
back from the completion in the Hermes/Qwen form most chat templates use, `<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`; a call whose JSON does not parse is kept with its raw text as `arguments`, so the environment
records an invalid call instead of the policy crashing. Engines: transformers on CPU, vLLM on GPUs (`policy.engine`).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from evals.agent.episode import Trial, Turn
from models.generation import generate_n
from models.tokenizer import load_tokenizer, prompt_batch, prompt_ids
from postgame.config import PolicySettings

# The embedded base's own template. Assistant turns are wrapped in {% generation %} so that TRL / transformers can
# mask everything else out of the loss (`return_assistant_tokens_mask`, SFTConfig(assistant_only_loss=True)). An
# `edit` call is written as the edit block the base learned to answer with (path, SEARCH, REPLACE); any other call
# as `<call>NAME {json}</call>`. `parse_turn` reads both back.
COMPACT_TEMPLATE = (
    "{%- if tools %}tools:{% for t in tools %} {{ t.function.name }}({{ t.function.parameters.properties | join(',') }})"
    "{% endfor %}\n{% endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<assistant>{% generation %}{% if m.content %}{{ m.content }}{% endif %}"
    "{% for c in m.tool_calls or [] %}{% set a = c.function.arguments %}"
    "{% if c.function.name == 'edit' and a is mapping %}{{ a.path }}\n<<<<<<< SEARCH\n{{ a.search }}"
    "{% if a.search and not a.search.endswith('\n') %}\n{% endif %}=======\n{{ a.replace }}"
    "{% if a.replace and not a.replace.endswith('\n') %}\n{% endif %}>>>>>>> REPLACE\n"
    "{% else %}<call>{{ c.function.name }} {{ a | tojson }}</call>{% endif %}{% endfor %}"
    "{{ eos_token }}{% endgeneration %}\n"
    "{%- elif m.role == 'tool' %}<tool>{{ m.content }}\n"
    "{%- else %}<{{ m.role }}>{{ m.content }}\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<assistant>{% endif %}"
)
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_COMPACT_CALL = re.compile(r"<call>\s*([A-Za-z_][A-Za-z0-9_]*)\s*(.*?)\s*(?:</call>|$)", re.S)


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as chat templates expect them: a tool call's `arguments` as a dict (OpenAI sends a JSON string)."""
    out = []
    for m in messages:
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                args = c["function"]["arguments"]
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except json.JSONDecodeError:
                    pass
                calls.append({**c, "function": {**c["function"], "arguments": args}})
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def render_chat(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict] | None, *, generation: bool) -> str:
    """The conversation as the tokenizer's chat template renders it with `tools=` (and the generation prompt)."""
    return tokenizer.apply_chat_template(
        template_messages(messages), tools=tools or None, add_generation_prompt=generation, tokenize=False
    )


def _edit_blocks(text: str) -> list:
    from evals.harness.searchreplace import SearchReplaceError, is_search_replace, parse_edits

    if not is_search_replace(text):
        return []
    try:
        return parse_edits(text)
    except (SearchReplaceError, ValueError):
        return []


def _bare_call(text: str) -> dict[str, Any] | None:
    """A reply that is one JSON object `{"name": ..., "arguments"|"parameters": {...}}` (Llama 3's tool-call form)."""
    stripped = re.sub(r"</tool_call>\s*$", "", text.strip()).strip()
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("name"), str) and ("arguments" in obj or "parameters" in obj):
        return obj
    return None


def _call(raw: str, call_id: str) -> dict[str, Any]:
    name, arguments = "", raw
    try:
        obj = json.loads(raw)
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            name = obj["name"]
            args = obj.get("arguments", obj.get("parameters", {}))
            arguments = args if isinstance(args, str) else json.dumps(args)
    except json.JSONDecodeError:
        m = re.search(r'"name"\s*:\s*"([^"]+)"', raw)
        name = m.group(1) if m else ""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def parse_turn(text: str, turn_index: int) -> dict[str, Any]:
    """The assistant message a completion stands for: its text outside tool-call blocks, and its tool calls
    (Hermes/Qwen `<tool_call>` blocks, or a reply that is one bare JSON call, as Llama 3 writes them)."""
    calls = [_call(m.group(1), f"call_{turn_index}_{k}") for k, m in enumerate(_CALL.finditer(text))]
    content = _CALL.sub("", text).strip() or None
    if not calls and _COMPACT_CALL.search(text):  # the compact template's `<call>NAME {json}</call>`
        for k, m in enumerate(_COMPACT_CALL.finditer(text)):
            args = m.group(2).strip() or "{}"
            calls.append(
                {
                    "id": f"call_{turn_index}_{k}",
                    "type": "function",
                    "function": {"name": m.group(1), "arguments": args},
                }
            )
        content = _COMPACT_CALL.sub("", text).strip() or None
    if not calls and (edits := _edit_blocks(text)):  # the compact template's edit blocks
        calls = [
            {
                "id": f"call_{turn_index}_{k}",
                "type": "function",
                "function": {
                    "name": "edit",
                    "arguments": json.dumps({"path": e.path, "search": e.search, "replace": e.replace}),
                },
            }
            for k, e in enumerate(edits)
        ]
        content = None
    if not calls and (bare := _bare_call(text)) is not None:
        calls, content = [_call(json.dumps(bare), f"call_{turn_index}_0")], None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


class ChatPolicy:
    """A checkpoint folder acting through tool calls (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        *,
        settings: PolicySettings,
        name: str = "",
        seed: int | None = None,
        greedy: bool = True,
        max_new_tokens: int | None = None,
        candidates: int = 1,
        verify: bool = False,
        repoint: bool = False,
        reproduce: bool = False,
        draws: int = 0,
    ):
        self.path, self.settings, self.name = Path(path), settings, name or str(path)
        self.reproduce = reproduce  # with verify: an edit turn that makes the example behave first
        self.draws = draws  # with reproduce: more candidates drawn when none of `candidates` makes it behave
        self.verify = verify  # edit turns checked against the visible tests (`choose_turn`), given the episode's trial
        self.repoint = repoint  # edits pointed at the shown file that holds their search text (`repoint_turn`)
        self.seed = settings.seed if seed is None else seed
        self.greedy = greedy
        self.candidates = candidates  # > 1: the scaffold's edit check over this many beams / draws (models/answer.py)
        self.max_new_tokens = max_new_tokens or settings.max_new_tokens
        self._turns = 0
        self._engine: Any = None

    def _load(self) -> Any:
        if self._engine is None:
            tok = load_tokenizer(self.path)
            if not tok.chat_template:
                tok.chat_template = COMPACT_TEMPLATE
            if self.settings.engine == "vllm":
                from vllm import LLM  # GPU path: pip install 'postgame[gpu]'

                self._engine = (LLM(model=str(self.path), seed=self.seed), tok)
            else:
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_pretrained(self.path)
                model.eval()
                self._engine = (model, tok)
        return self._engine

    def _prompt_limit(self) -> int:
        """The most prompt tokens a turn reads (its last ones): the context window less the turn's new tokens."""
        return max(16, context_window(str(self.path)) - self.max_new_tokens)

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        _, tok = self._load()
        return render_chat(tok, messages, tools, generation=True)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], trial: Trial | None = None) -> Turn:
        self._load()
        prompt = self.render(messages, tools)
        self._turns += 1
        seed = self.seed + 7919 * self._turns
        start = time.perf_counter()
        texts, n_prompt, n_out = self._complete(prompt, seed, self.candidates, self.greedy)
        latency = (time.perf_counter() - start) * 1000
        context = "\n".join(m.get("content") or "" for m in messages if m.get("role") in ("user", "tool"))
        turns = self._turns_of(texts, context)
        previous = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        start = time.perf_counter()
        trial = trial if self.verify else None
        if self.reproduce and trial is not None and trial([], reproduce=True) is False:
            fix = fixing_turn(turns, context, previous, trial)
            if fix is None and self.draws:  # more candidates, drawn, for the reproduction to choose among
                more, _, made = self._complete(prompt, seed + 1, self.draws, greedy=False)
                n_out += made
                fix = fixing_turn(self._turns_of(more, context), context, previous, trial)
            if fix is not None:
                return Turn(fix, n_prompt, n_out, latency + (time.perf_counter() - start) * 1000)
        chosen = choose_turn(turns, context, previous, trial)
        return Turn(chosen, n_prompt, n_out, latency + (time.perf_counter() - start) * 1000)

    def _turns_of(self, texts: list[str], context: str) -> list[dict[str, Any]]:
        turns = [parse_turn(t, self._turns) for t in texts]
        return [repoint_turn(t, context) for t in turns] if self.repoint else turns

    def _complete(self, prompt: str, seed: int, n: int, greedy: bool) -> tuple[list[str], int, int]:
        engine, tok = self._load()
        if self.settings.engine == "vllm":
            from vllm import SamplingParams

            params = SamplingParams(
                max_tokens=self.max_new_tokens,
                seed=seed,
                n=n,
                temperature=0.0 if greedy and n == 1 else self.settings.temperature,
            )
            ids = prompt_ids(tok, prompt, self._prompt_limit(), add_special_tokens=False)
            out = engine.generate([{"prompt_token_ids": ids}], params)[0]
            texts = [tok.decode(o.token_ids, skip_special_tokens=True) for o in out.outputs]
            return texts, len(out.prompt_token_ids), sum(len(o.token_ids) for o in out.outputs)
        return self._generate(engine, tok, prompt, seed, n, greedy)

    def _generate(
        self, model: Any, tok: Any, prompt: str, seed: int, n: int, greedy: bool
    ) -> tuple[list[str], int, int]:
        """Completions: one (greedy or sampled), or `n` — the beams of a beam search when greedy (still
        deterministic), independent draws when sampling. Token counts cover every candidate made."""
        import torch

        ids = prompt_batch(tok, prompt, self._prompt_limit(), add_special_tokens=False)
        torch.manual_seed(seed)
        search: dict[str, Any]
        if greedy:
            search = (
                {"do_sample": False}
                if n == 1
                else {"do_sample": False, "num_beams": n, "num_return_sequences": n, "early_stopping": True}
            )
        else:
            search = {"do_sample": True, "temperature": self.settings.temperature, "num_return_sequences": n}
        with torch.no_grad():
            out = generate_n(model, ids, n, max_new_tokens=self.max_new_tokens, pad_token_id=tok.pad_token_id, **search)
        width = ids["input_ids"].shape[1]
        texts, made = [], 0
        for row in out:
            completion = row[width:]
            completion = completion[completion != tok.pad_token_id]
            made += int(completion.shape[0])
            texts.append(tok.decode(completion, skip_special_tokens=True))
        return texts, int(width), made


@functools.cache
def context_window(path: str) -> int:
    """The checkpoint's context window (`max_position_embeddings`; 2,048 when its config has none), read once per
    process: a policy is made per episode."""
    from transformers import AutoConfig

    return int(getattr(AutoConfig.from_pretrained(path), "max_position_embeddings", 2048))


def _names(context: str, path: str) -> bool:
    """Does `context` name `path` whole (a listing's line, a shown file's header), not as part of a longer path?"""
    return re.search(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-]|\.\w)", context) is not None


def _calls(message: dict[str, Any] | None) -> list[tuple[str, Any]]:
    out = []
    for call in (message or {}).get("tool_calls") or []:
        raw = call["function"]["arguments"]
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            args = raw
        out.append((call["function"]["name"], args))
    return out


def repoint_turn(message: dict[str, Any], context: str) -> dict[str, Any]:
    """`message` with each edit call whose path `context` never names pointed at the one shown file whose code holds
    its search text (`evals.prompts.repoint`, as the single answer's scaffold does with `scaffold.repoint_paths`).
    Only an edit `usable_turn` would refuse for its path is moved: one of a file the agent saw named (listed,
    viewed) stays where it is, even when a shown window holds the same lines."""
    from evals.harness.searchreplace import Edit
    from evals.prompts import repoint, shown_code

    shown = shown_code(context)
    calls = message.get("tool_calls") or []
    if not shown or not calls:
        return message
    out, moved = [], False
    for call in calls:
        name, args = _calls({"tool_calls": [call]})[0]
        if (
            name == "edit"
            and isinstance(args, dict)
            and all(isinstance(args.get(k), str) for k in ("path", "search"))
            and not (args["path"] and _names(context, args["path"]))
        ):
            (edit,) = repoint([Edit(args["path"], args["search"], str(args.get("replace", "")))], shown)
            if edit.path != args["path"]:
                raw = call["function"]["arguments"]
                args = {**args, "path": edit.path}
                call = {
                    **call,
                    "function": {**call["function"], "arguments": json.dumps(args) if isinstance(raw, str) else args},
                }
                moved = True
        out.append(call)
    return {**message, "tool_calls": out} if moved else message


def usable_turn(message: dict[str, Any], context: str, previous: dict[str, Any] | None = None) -> bool:
    """Would the scaffold let this turn through? It calls a tool, and each edit it makes names a file the agent was
    shown, copies its search text from what it was shown and changes something (the single answer's edit check,
    models/answer.py). Without the file check, 12 of 162 edits of the agent base on the in-domain bugs named a file
    that does not exist ('.py', a path it half-remembered) and the episode went on to submit an unchanged tree
    (BENCHMARKS.md, "Session 20"). Nor does it repeat the `previous` turn's calls (a submit aside: a second submit
    after a refused one means something): the same call on an unchanged copy only shows the same thing again, and 8
    of 140 episodes ran the same failing tests until the budget ended them."""
    calls = _calls(message)
    if not calls:
        return False
    if previous is not None and calls == _calls(previous) and all(name != "submit" for name, _ in calls):
        return False
    for name, args in calls:
        if name != "edit":
            continue
        if not isinstance(args, dict):  # arguments that are not a JSON object
            return False
        search, replace, path = args.get("search", ""), args.get("replace", ""), args.get("path", "")
        if not isinstance(search, str) or not search.strip() or search == replace or search not in context:
            return False
        if not isinstance(path, str) or not path or not _names(context, path):
            return False
    return True


def choose_turn(
    turns: list[dict[str, Any]], context: str, previous: dict[str, Any] | None = None, trial: Trial | None = None
) -> dict[str, Any]:
    """The candidate turn (likeliest first) the scaffold takes: the first usable one (`usable_turn`), or the first
    candidate when none is. With `trial` (the environment's `try_edits`: would these edits keep the visible tests
    passing?) an edit turn is taken only when its edits pass, as a single answer's candidates are run against the
    visible tests before one is submitted (models/answer.py): the first usable turn that makes no edit or whose edits
    pass, else the first usable. A trial that could not run (None) does not hold a turn back; the same edits are
    tried once."""
    usable = [t for t in turns if usable_turn(t, context, previous)]
    if not usable:
        return turns[0]
    if trial is None:
        return usable[0]
    tried: dict[str, bool | None] = {}
    for turn in usable:
        edits = [args for name, args in _calls(turn) if name == "edit"]
        if not edits:
            return turn
        key = json.dumps(edits, sort_keys=True)
        if key not in tried:
            tried[key] = trial(edits)
        if tried[key] is not False:
            return turn
    return usable[0]


def fixing_turn(
    turns: list[dict[str, Any]], context: str, previous: dict[str, Any] | None, trial: Trial
) -> dict[str, Any] | None:
    """The first usable edit turn (likeliest first) whose edits make the issue's own example behave as the issue
    says and keep the visible tests passing (`try_edits(..., reproduce=True)`, `evals.agent.repro`), or None. The
    scaffold takes it ahead of any likelier turn while the copy does not yet behave (`scaffold.reproduce`), as a
    coding agent reruns its reproduction after a fix; the same edits are tried once."""
    seen: set[str] = set()
    for turn in turns:
        edits = [args for name, args in _calls(turn) if name == "edit"]
        key = json.dumps(edits, sort_keys=True)
        if not edits or key in seen or not usable_turn(turn, context, previous):
            continue
        seen.add(key)
        if trial(edits, reproduce=True) is True:
            return turn
    return None


def load_agent_policy(
    path: str,
    settings: PolicySettings,
    name: str,
    greedy: bool,
    instance: Any,
    *,
    seed: int | None = None,
    candidates: int = 1,
    threads: int = 0,
    verify: bool = False,
    repoint: bool = False,
    reproduce: bool = False,
    draws: int = 0,
) -> ChatPolicy:
    """A fresh ChatPolicy for one episode (a batch's policy factory: `functools.partial(load_agent_policy, ...)`);
    the loaded model is shared by the episodes of one worker process, which runs torch on `threads` threads (0 =
    torch's default). A sampling policy draws from `seed` and the instance id, so the episodes of one batch differ
    and a rerun repeats them."""
    import zlib

    episode_seed = None if seed is None else seed + zlib.crc32(str(getattr(instance, "instance_id", "")).encode())
    policy = ChatPolicy(
        path,
        settings=settings,
        name=name,
        greedy=greedy,
        seed=episode_seed,
        candidates=candidates,
        verify=verify,
        repoint=repoint,
        reproduce=reproduce,
        draws=draws,
    )
    policy._engine = _shared_engine(path, settings, threads)
    return policy


_ENGINES: dict[tuple[str, str], Any] = {}
_ENGINES_LOCK = threading.Lock()


def _shared_engine(path: str, settings: PolicySettings, threads: int = 0) -> Any:
    """One loaded model per process and checkpoint. Loaded under a lock: episodes on a thread runner start together,
    and transformers' lazy imports are not thread-safe (two threads importing AutoTokenizer at once: ImportError)."""
    key = (str(path), settings.engine)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            if threads and settings.engine == "transformers":
                import torch

                torch.set_num_threads(threads)  # this worker's share of the cores (episode_threads)
            _ENGINES[key] = ChatPolicy(path, settings=settings)._load()
        return _ENGINES[key]


def episode_threads(cfg: Any) -> int:
    """torch threads for each process that plays episodes (`runner.torch_threads`; 0 = torch's default). Unset,
    local workers share the cores out: a small model's decoding is many small ops, and two workers of two threads
    each on two cores wait on each other's threads at every op (BENCHMARKS.md, "Agent environment")."""
    import os

    from postgame.runners import worker_count

    if cfg.runner.torch_threads:
        return cfg.runner.torch_threads
    if cfg.runner.kind == "serial" or (cfg.runner.kind == "dask" and cfg.runner.address):
        return 0
    return max(1, (os.cpu_count() or 1) // worker_count(cfg.runner))


def policy_factory(cfg: Any, path: str | Path, name: str, *, greedy: bool, seed: int | None = None):
    """The episodes' policy factory for a checkpoint, as evaluation, traffic and the CLI use it: the scaffold's edit
    check over `scaffold.candidates` beams / draws when `scaffold.check_edits`, and each edit turn's candidates run
    against the visible tests when `scaffold.visible_tests` (as a single answer gets them), torch on the worker's
    share of the cores (`episode_threads`)."""
    candidates = cfg.scaffold.candidates if cfg.scaffold.check_edits else 1
    return functools.partial(
        load_agent_policy,
        str(path),
        cfg.policy,
        name,
        greedy,
        seed=seed,
        candidates=candidates,
        threads=episode_threads(cfg),
        verify=cfg.scaffold.check_edits and cfg.scaffold.visible_tests,
        repoint=cfg.scaffold.repoint_paths,
        reproduce=cfg.scaffold.check_edits and cfg.scaffold.visible_tests and cfg.scaffold.reproduce,
        draws=cfg.scaffold.reproduce_draws,
    )
