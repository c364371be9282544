#!/usr/bin/env python3
"""A minimal engine loop over a compiled DeepSeek-V4 artifact, in Python.

    python3 examples/engine_loop.py V4.poolpack

Loads the artifact on the host backend, wraps a checkpointed state field in
numpy without a copy (DLPack), admits a batch of requests that share a
system prompt, steps them through chunked prefill (the model's "forward" is
a stand-in that writes each request's state), keeps the copy checkpoint at
the planner's rung with the generated image_store kernel, and then admits
a follow-up batch on the same prefix, which resumes from the checkpoint
(image_restore) instead of recomputing it. Prints each admission's hit and
checks the resumed state byte for byte.
"""
import sys
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

import poolrt

Forward = Callable[[poolrt.Request, int, int], None]

SYSTEM = list(range(512))  # the shared system prompt: two 256-token blocks


def step(cache: poolrt.CacheManager, arena: poolrt.Arena, batch: List[poolrt.Request],
         forward: Forward) -> Dict[str, List[Dict[str, Any]]]:
    """One scheduling step: drain the previous batch, cut each prefill chunk,
    launch the state maintenance copies, forward, publish the new blocks."""
    cache.complete_previous_state_batch()
    plan: List[Tuple[poolrt.Request, int, int]] = []
    for r in batch:
        if r.num_cached_tokens < len(r):
            start = r.num_cached_tokens
            plan.append((r, start, cache.finalize_prefill_chunk(r, start, len(r) - start)))
    ops = cache.take_state_maintenance_ops()
    for op in ops["stores"]:
        arena.launch("image_store", op["kernel_ids"])
    for op in ops["restores"]:
        arena.launch("image_restore", op["kernel_ids"])
    for r, start, chunk in plan:
        forward(r, start, start + chunk)
        cache.hash_blocks(r, chunk)
        r.num_cached_tokens = start + chunk
    return ops


def run_batch(cache: poolrt.CacheManager, arena: poolrt.Arena, prompts: List[List[int]],
              forward: Forward, label: str) -> Tuple[List[poolrt.Request], int, int]:
    batch: List[poolrt.Request] = []
    for p in prompts:
        r = poolrt.Request(p)
        adm = cache.admission(r)
        if not adm:
            raise SystemExit("%s: refused (%s)" % (label, adm.reason))
        cache.allocate(r, adm)
        print("%s: request %d, %d tokens, hit %d tokens%s" % (
            label, r.id, len(r), adm.hit_tokens,
            " (%s)" % adm.reason if adm.reason else ""))
        batch.append(r)
    stores = restores = 0
    while any(r.num_cached_tokens < len(r) for r in batch):
        ops = step(cache, arena, batch, forward)
        stores += len(ops["stores"])
        restores += len(ops["restores"])
    return batch, stores, restores


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    artifact = sys.argv[1]
    info = poolrt.read_artifact(artifact)
    print(info)
    with poolrt.Device("host") as dev:
        arena = dev.arena(artifact)
        cache = poolrt.CacheManager.from_artifact(artifact, interval=256)
        kv: Any = np.asarray(arena.field("csa_main_kv"))  # [layers, slots, 8, 1024], zero copy

        def slot(r: poolrt.Request) -> int:
            return cache.slot_kernel_id(r) - arena.slot_origin

        def forward(r: poolrt.Request, start: int, end: int) -> None:
            kv[:, slot(r)] = float(end)  # the state after token `end` of request r

        first, stores, _ = run_batch(cache, arena, [SYSTEM + [1000 + i] * 40 for i in range(3)],
                                     forward, "batch 1")
        print("batch 1: %d checkpoint stores, funnel %s" % (stores, cache.funnel()))
        for r in first:
            cache.deallocate(r)
        cache.complete_previous_state_batch()  # the stores' batch is done

        resumed: List[bool] = []

        def check_then_forward(r: poolrt.Request, start: int, end: int) -> None:
            if start > 0:  # resumed at the rung: the kept state is back
                resumed.append(bool(np.all(kv[:, slot(r)] == float(start))))
            forward(r, start, end)

        second, _, restores = run_batch(cache, arena, [SYSTEM + [2000 + i] * 40 for i in range(2)],
                                        check_then_forward, "batch 2")
        print("batch 2: %d checkpoint restores, resumed states intact: %s" % (restores, resumed))
        for r in second:
            cache.deallocate(r)
        stats = cache.stats()
        print("hit rate %.1f%% of %d prompt tokens" % (100 * stats["hit"], stats["full_tokens"]))
        del kv
        if restores != len(second) or not resumed or not all(resumed):
            raise SystemExit("engine_loop: a resumed state differs from the kept one")


if __name__ == "__main__":
    main()
