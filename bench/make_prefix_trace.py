#!/usr/bin/env python3
# The shared workload generator (../shared/bench/make_prefix_trace.py),
# kept here byte-for-byte in its logic so a clean clone (CI) can make the
# same trace: pool-serve replays it and reports its hit rate against the
# trace's ceiling.
"""Writes a deterministic shared-prefix admission trace for block-pool benchmarks.

Each line is one event:
  admit <req> <h1> <h2> ... <hn>   a request arrives with the chained hashes of its n full blocks
  finish <req>                     the request ends; its blocks are freed in order

A driver replays it against a block pool with this logic, identical for every
implementation so the numbers are comparable:
  admit:  for each hash h: b = lookup(h); if b >= 0: claim(b) else: b = pop(); allocate(b); publish(b, h)
          (if pop finds no free block, the request is refused and the blocks it took are freed)
  finish: free each block of the request, in order.
Pool operations counted: lookup, claim, pop, allocate, publish, free.

Workload: requests draw one of `docs` shared documents (a Zipf-like choice), take a
prefix of it, and add a private tail; at most `concurrency` requests live at once
(oldest finishes first).
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--docs", type=int, default=64)
    ap.add_argument("--doc-blocks", type=int, default=128)
    ap.add_argument("--tail-max", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    mask = (1 << 64) - 1
    docs = [[rng.getrandbits(64) for _ in range(a.doc_blocks)] for _ in range(a.docs)]
    weights = [1.0 / (i + 1) for i in range(a.docs)]
    live = []
    with open(a.out, "w") as f:
        for r in range(a.requests):
            d = rng.choices(range(a.docs), weights)[0]
            keep = rng.randint(0, a.doc_blocks)
            hashes = docs[d][:keep]
            prev = hashes[-1] if hashes else d
            for _ in range(rng.randint(1, a.tail_max)):
                prev = (prev * 6364136223846793005 + rng.getrandbits(64)) & mask
                hashes.append(prev)
            f.write("admit %d %s\n" % (r, " ".join(map(str, hashes))))
            live.append(r)
            if len(live) >= a.concurrency:
                f.write("finish %d\n" % live.pop(0))
        for r in live:
            f.write("finish %d\n" % r)


if __name__ == "__main__":
    main()
