#!/usr/bin/env python3
"""A GSM8K-style two-pass workload (the tier seed's accuracy run) as a Mooncake JSONL trace.

GSM8K is asked few-shot: every prompt is the same 8-shot exemplar block
followed by one question, and the answer is a short chain of reasoning. The
seed's run passes over the questions twice: pass 1 fills the tier, pass 2
asks the same prompts again and must answer exactly as a cold run does. The
dataset itself is not needed for the memory system (no network here): what
matters is its shape, which this reproduces deterministically:

  * an exemplar block of PREFIX tokens (default 1024), shared by every prompt;
  * questions of 150 to 1,400 tokens (a question plus the exemplars' padding
    to it; long ones carry a whole worked problem), each its own;
  * answers of 96 to 256 tokens.

  make_gsm8k_trace.py OUT.jsonl [QUESTIONS] [PASSES] [PREFIX] [SEED]

Pass p repeats pass 1's prompts in the same order, each after the last of
the pass before it. With PASSES=1 it is pass 1 alone (for a run that
restarts between the passes).
"""
import random
import sys

from make_seed_trace import write_passes  # beside this script

TOKENS_PER_ID = 512  # a Mooncake hash id stands for 512 tokens


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    prefix = int(sys.argv[4]) if len(sys.argv) > 4 else 1024
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    if n < 1 or passes < 1 or prefix % TOKENS_PER_ID or prefix < TOKENS_PER_ID:
        sys.exit("make_gsm8k_trace.py: QUESTIONS and PASSES >= 1, PREFIX a positive multiple of 512")
    rng = random.Random(seed)
    shared = list(range(prefix // TOKENS_PER_ID))  # the exemplars' ids
    next_id = 10_000
    reqs = []
    for _ in range(n):
        q = rng.randint(150, 1400)
        ids = shared + list(range(next_id, next_id + -(-q // TOKENS_PER_ID)))
        next_id += len(ids) - len(shared)
        reqs.append({"input_length": prefix + q, "output_length": rng.randint(96, 256),
                     "hash_ids": ids})
    write_passes(out, reqs, passes)


if __name__ == "__main__":
    main()
