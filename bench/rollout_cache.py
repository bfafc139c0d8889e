"""Cost of one RolloutCache turn (append sampled tokens + a tool message) at turn 1 and at turn 50,
against re-rendering the whole conversation with the chat template each turn (the naive way), both
measured in this run. The cache's cost must stay flat as the conversation grows.

Usage: python bench/rollout_cache.py [--tokenizer DIR] [--turns 50] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from transformers import AutoTokenizer

from uni_agent_gym.tools import make_tools
from uni_agent_gym.tokens.boundary import probe, render
from uni_agent_gym.tokens.rollout_cache import RolloutCache

TOOLS = [tool.schema() for tool in make_tools().values()]


def conversation_turn(turn: int) -> tuple[dict, dict]:
    call = {"type": "function", "function": {"name": "execute_bash", "arguments": {"command": f"grep -n parse src/{turn}.py"}}}
    return (
        {"role": "assistant", "content": f"Looking at file {turn}.", "tool_calls": [call]},
        {"role": "tool", "content": f"{turn}: def parse(text):\n" * 20, "name": "execute_bash"},
    )


def measure(tokenizer, turns: int, repeat: int) -> dict[int, tuple[float, float]]:
    """{turn: (median ms of a cache turn, median ms of re-rendering the conversation)} at turns 1 and `turns`."""
    boundary = probe(tokenizer)
    results = {}
    for target in (1, turns):
        cache_times, render_times = [], []
        for _ in range(repeat):
            conversation = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Fix the parser"}]
            cache = RolloutCache(tokenizer, max_model_len=10**7, max_prompt_length=10**6, max_response_length=10**7, boundary=boundary)
            cache.prepare(conversation, TOOLS)
            sampled = tokenizer.encode("Looking.<tool_call>{}</tool_call><|im_end|>", add_special_tokens=False)
            for turn in range(1, target + 1):
                assistant, reply = conversation_turn(turn)
                started = time.perf_counter()
                cache.append_model_tokens(sampled, [-0.1] * len(sampled))
                cache.append_messages([reply])
                cache_seconds = time.perf_counter() - started
                conversation += [assistant, reply]
                if turn == target:
                    started = time.perf_counter()
                    render(tokenizer, conversation, tools=TOOLS, generation_prompt=True)
                    render_times.append(time.perf_counter() - started)
                    cache_times.append(cache_seconds)
        results[target] = (statistics.median(cache_times) * 1000, statistics.median(render_times) * 1000)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", default=str(Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "qwen2.5-instruct"))
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if not Path(args.tokenizer).is_dir():  # `make bench` goes on with the next bench
        print(f"skipped: no tokenizer directory {args.tokenizer} (../shared/tokenizers beside the checkout, or --tokenizer DIR)")
        return
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    results = measure(tokenizer, args.turns, args.repeat)
    print(f"tokenizer: {args.tokenizer}")
    for turn, (cache_ms, render_ms) in results.items():
        print(f"turn {turn:3d}: cache append {cache_ms:7.3f} ms   baseline (re-render the conversation) {render_ms:8.3f} ms   ratio {render_ms / cache_ms:6.1f}x")
    first, last = results[1][0], results[args.turns][0]
    print(f"cache cost at turn {args.turns} / turn 1: {last / first:.2f} (flat is ~1)")


if __name__ == "__main__":
    main()
