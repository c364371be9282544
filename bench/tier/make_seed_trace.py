#!/usr/bin/env python3
"""The tier seed's workload (../shared/seeds/004_*) as a Mooncake JSONL trace.

Four 4096-token prefixes; every prompt is one of them plus a 3000-token tail
of its own; 64 output tokens. Prompts cycle through the prefixes, so an HBM
pool far smaller than the four prefixes evicts each before it comes back:
only a tier keeps the hits.

  make_seed_trace.py OUT.jsonl [REQUESTS] [PASSES] [PREFIX_TOKENS] [TAIL_TOKENS]

PASSES > 1 repeats the whole request list (pass 2 replays pass 1's prompts,
as the seed's GSM8K-style two-pass run does). The tests use smaller
prefixes and tails (multiples of 512 for the prefix) to run quickly.
"""
import json
import sys

TOKENS_PER_ID = 512  # a Mooncake hash id stands for 512 tokens


def write_passes(out, reqs, passes):
    """Writes `reqs` `passes` times, 10 ms apart, as Mooncake JSONL lines."""
    with open(out, "w") as f:
        t = 0
        for _ in range(passes):
            for r in reqs:
                f.write(json.dumps(dict(timestamp=t, **r)) + "\n")
                t += 10


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    prefix = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
    tail = int(sys.argv[5]) if len(sys.argv) > 5 else 3000
    if prefix % TOKENS_PER_ID or prefix < TOKENS_PER_ID or tail < 1:
        sys.exit("make_seed_trace.py: the prefix must be a positive multiple of 512, the tail positive")
    prefix_ids = prefix // TOKENS_PER_ID            # 8 ids
    tail_ids = -(-tail // TOKENS_PER_ID)            # 6 ids, the last partial
    reqs = []
    next_id = 1000
    for i in range(n):
        p = i % 4
        ids = [p * 100 + k for k in range(prefix_ids)]
        ids += list(range(next_id, next_id + tail_ids))
        next_id += tail_ids
        reqs.append({"input_length": prefix + tail, "output_length": 64, "hash_ids": ids})
    write_passes(out, reqs, passes)


if __name__ == "__main__":
    main()
