#!/usr/bin/env python3
"""Writes a Mooncake-format JSONL trace shaped like multi-turn chat traffic.

Each line is one request: {"timestamp": ms, "input_length": tokens,
"output_length": tokens, "hash_ids": [ids]}. Every hash id stands for 512
tokens (pool-serve synthesises them from the id), so equal id prefixes are
equal token prefixes.

The shape is that of a production conversation service:
  * conversations arrive as a Poisson process; each has a geometric number of
    turns and an exponential think time between them, so many conversations
    are open at once and their turns interleave;
  * each conversation starts from one of a few system prompts (Zipf-like
    choice), shared across conversations;
  * turn t+1's prompt is turn t's prompt, its response and a new user message,
    so it extends the earlier turn's prompt exactly (its ids are a prefix);
  * prompts stay within [--min-prompt, --max-prompt] tokens: a conversation
    that would pass the maximum ends there.

The ids of a prompt's last, partly filled 512-token block stay its ids when
the prompt is extended (the synthesised tokens of an id are fixed, the
prompt only read a prefix of them), so a later turn shares every token of the
earlier prompt. The response is synthetic, as in any Mooncake replay: a hit on
it needs the earlier turn's prompt end, not its generated tokens.

Deterministic for a seed; standard library only (either python3 runs it).
"""
import argparse
import heapq
import json
import random

TOKENS_PER_ID = 512


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=4.0,
                    help="new conversations per second")
    ap.add_argument("--mean-turns", type=float, default=4.0)
    ap.add_argument("--think-s", type=float, default=30.0,
                    help="mean seconds between a response and the next turn")
    ap.add_argument("--system-prompts", type=int, default=8)
    ap.add_argument("--system-min", type=int, default=300)
    ap.add_argument("--system-max", type=int, default=2500)
    ap.add_argument("--user-min", type=int, default=40)
    ap.add_argument("--user-max", type=int, default=1200)
    ap.add_argument("--output-min", type=int, default=30)
    ap.add_argument("--output-max", type=int, default=600)
    ap.add_argument("--min-prompt", type=int, default=500)
    ap.add_argument("--max-prompt", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if a.requests < 1 or a.rate <= 0 or a.mean_turns < 1 or a.think_s < 0:
        ap.error("need --requests >= 1, --rate > 0, --mean-turns >= 1, --think-s >= 0")
    if not (1 <= a.min_prompt <= a.max_prompt):
        ap.error("need 1 <= --min-prompt <= --max-prompt")
    rng = random.Random(a.seed)
    next_id = [1]

    def fresh_ids(n):
        out = list(range(next_id[0], next_id[0] + n))
        next_id[0] += n
        return out

    def log_uniform(lo, hi):
        return int(round(lo * (hi / lo) ** rng.random()))

    # A system prompt is whole ids: conversations append after its last id,
    # so two conversations of one system prompt share exactly its tokens.
    system_ids = [fresh_ids(max(1, round(log_uniform(a.system_min, a.system_max)
                                         / TOKENS_PER_ID)))
                  for _ in range(a.system_prompts)]
    systems = [len(ids) * TOKENS_PER_ID for ids in system_ids]
    weights = [1.0 / (i + 1) for i in range(a.system_prompts)]

    # Events: (time_ms, seq, conversation state); a conversation's next turn
    # is scheduled when its previous one is written (think time after it).
    events = []
    seq = 0
    t = 0.0
    lines = []
    stop_p = 1.0 / a.mean_turns
    while len(lines) < a.requests:
        # The next conversation's arrival, unless a pending turn comes first.
        t_new = t + rng.expovariate(a.rate) * 1000.0
        if events and events[0][0] <= t_new:
            now, _, conv = heapq.heappop(events)
        else:
            t = now = t_new
            s = rng.choices(range(a.system_prompts), weights)[0]
            conv = {"ids": list(system_ids[s]), "len": systems[s]}
        user = log_uniform(a.user_min, a.user_max)
        length = conv["len"] + user
        if length < a.min_prompt:
            length = a.min_prompt
        if length > a.max_prompt:
            continue  # the conversation ends here
        need = (length + TOKENS_PER_ID - 1) // TOKENS_PER_ID
        ids = conv["ids"] + fresh_ids(need - len(conv["ids"]))
        out = log_uniform(a.output_min, a.output_max)
        lines.append({"timestamp": int(now), "input_length": length,
                      "output_length": out, "hash_ids": ids})
        # The next turn extends this prompt and its response.
        if rng.random() >= stop_p:
            total = length + out
            grown = (total + TOKENS_PER_ID - 1) // TOKENS_PER_ID
            nxt = {"ids": ids + fresh_ids(grown - len(ids)), "len": total}
            seq += 1
            gap = rng.expovariate(1.0 / a.think_s) * 1000.0 if a.think_s > 0 else 0.0
            heapq.heappush(events, (now + gap, seq, nxt))
    lines.sort(key=lambda r: r["timestamp"])
    with open(a.out, "w") as f:
        for r in lines:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
