#!/usr/bin/env python3
"""The reference engine's BlockPool, re-implemented from spec/semantics.md §5,
and a driver that replays a prefix-sharing trace against it.

This is the baseline poolrt::BlockPool is measured against, so it keeps the
reference's data structures and costs: `Block` objects in a list, a min-heap
of vacant ids that may hold stale entries (skipped on pop, rebuilt when it
outgrows the pool), an insertion-ordered dict as the cached LRU queue,
`_free`/`_used` sets as the truth, a dict as the content index. Quirks Q2 and
Q8 are *not* applied (this is the reference as it behaves); the trace driver
never double-frees and never re-publishes a hash, so hand-out order on the
trace is the same as poolrt's, which the driver's checksum line lets a
caller confirm.

Driver (fixed by shared/bench/make_prefix_trace.py):
  admit:  for each hash h: b = lookup(h); if b >= 0: claim(b)
          else: b = pop(); allocate(b); publish(b, h)
          (if pop finds no free block the request is refused and the blocks
          it took are freed, in order)
  finish: free each block of the request, in order.
Operations counted: lookup, claim, pop (also a failed one), allocate,
publish, free.

usage: reference_block_pool.py TRACE [--num-blocks N] [--repeat R]
prints: ops, hits, refused, checksum, then the best ns/op over R replays.
"""

import argparse
import heapq
import time
from collections import OrderedDict

_NO_TOKENS = ()


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "token_ids")

    def __init__(self, block_id):
        self.block_id = block_id
        self.ref_count = 0
        self.hash = -1
        self.token_ids = _NO_TOKENS

    def update(self, h, token_ids):
        self.hash = h
        self.token_ids = token_ids

    def reset(self):
        self.ref_count = 1
        self.hash = -1
        self.token_ids = _NO_TOKENS


class BlockRetirement:
    __slots__ = ("retired", "moved_to")

    def __init__(self, retired, moved_to):
        self.retired = retired
        self.moved_to = moved_to


class BlockPool:
    def __init__(self, num_blocks, on_evict=None, max_blocks=None):
        self.max_blocks = num_blocks if max_blocks is None else max_blocks
        if not 0 <= num_blocks <= self.max_blocks:
            raise ValueError(f"{num_blocks} blocks outside 0..{self.max_blocks}")
        self.num_blocks = num_blocks
        self._on_evict = on_evict
        self.blocks = [Block(i) for i in range(self.max_blocks)]
        self._index = {}
        self._vacant = list(range(num_blocks))  # min-heap, may hold stale ids
        self._cached = OrderedDict()  # LRU queue, oldest first
        self._free = set(range(num_blocks))  # the truth
        self._used = set()
        self._raw_unit_owner = {}

    # counts
    @property
    def num_free(self):
        return len(self._free)

    @property
    def num_used(self):
        return len(self._used)

    @property
    def num_indexed(self):
        return len(self._index)

    def has_free(self, n):
        return len(self._free) >= n

    # index
    def lookup(self, h):
        return self._index.get(h, -1)

    def publish(self, block_id, h, token_ids=_NO_TOKENS):
        self.blocks[block_id].update(h, token_ids)
        self._index[h] = block_id

    def clear_index(self):
        self._index.clear()
        for block in self.blocks:
            if block.ref_count == 0:
                block.hash = -1
                block.token_ids = _NO_TOKENS
        self._cached.clear()
        self._vacant = sorted(self._free)
        heapq.heapify(self._vacant)

    def _unindex(self, block_id):
        block = self.blocks[block_id]
        if block.hash != -1 and self._index.get(block.hash) == block_id:
            del self._index[block.hash]
            if self._on_evict is not None:
                self._on_evict(block.hash)
        block.hash = -1
        block.token_ids = _NO_TOKENS

    # allocation
    def _take_free(self):
        while self._vacant:
            block_id = heapq.heappop(self._vacant)
            if block_id in self._free and self.blocks[block_id].hash == -1:
                self._free.discard(block_id)
                return block_id
        while self._cached:
            block_id, _ = self._cached.popitem(last=False)
            if block_id in self._free and self.blocks[block_id].hash != -1:
                self._free.discard(block_id)
                return block_id
        return -1

    def pop(self):
        block_id = self._take_free()
        if block_id < 0:
            raise AssertionError("No free blocks available")
        return block_id

    def _take_named(self, block_id):
        self._free.discard(block_id)
        self._cached.pop(block_id, None)

    def allocate(self, block_id):
        block = self.blocks[block_id]
        assert block.ref_count == 0
        self._unindex(block_id)
        block.reset()
        self._take_named(block_id)
        self._used.add(block_id)
        return block

    def claim(self, block_id):
        block = self.blocks[block_id]
        if block_id in self._used:
            block.ref_count += 1
        else:
            assert block.ref_count == 0
            block.ref_count = 1
            self._take_named(block_id)
            self._used.add(block_id)
        return block

    def free(self, block_id):
        if block_id in self._raw_unit_owner:
            raise AssertionError(
                f"block {block_id} is a reserved raw unit; use release_units"
            )
        block = self.blocks[block_id]
        block.ref_count -= 1
        if block.ref_count:
            return
        self._used.remove(block_id)
        self._free.add(block_id)
        if block.hash != -1:
            self._cached[block_id] = None
            return
        heapq.heappush(self._vacant, block_id)
        if len(self._vacant) > 2 * self.num_blocks + 2:
            self._vacant = [b for b in self._free if self.blocks[b].hash == -1]
            heapq.heapify(self._vacant)

    # raw units
    def reserve_units(self, count, owner):
        if count < 0:
            raise ValueError(f"unit count must be non-negative, got {count}")
        if owner is None:
            raise ValueError("a raw-unit reservation needs an owner")
        if not self.has_free(count):
            return None
        unit_ids = []
        for piece_index in range(count):
            block_id = self.pop()
            self.allocate(block_id)
            self._raw_unit_owner[block_id] = (owner, piece_index)
            unit_ids.append(block_id)
        return unit_ids

    def release_units(self, unit_ids, owner):
        ids = list(unit_ids)
        if len(ids) != len(set(ids)):
            raise ValueError("a raw-unit release contains duplicate ids")
        for piece_index, block_id in enumerate(ids):
            actual = self._raw_unit_owner.get(block_id)
            expected = (owner, piece_index)
            if actual != expected:
                raise AssertionError(
                    f"raw unit {block_id} belongs to {actual!r}, not {expected!r}"
                )
        for block_id in ids:
            del self._raw_unit_owner[block_id]
            self.free(block_id)

    # resizing
    def extend(self, count):
        taken = min(count, self.max_blocks - self.num_blocks)
        for block_id in range(self.num_blocks, self.num_blocks + taken):
            self._free.add(block_id)
            heapq.heappush(self._vacant, block_id)
        self.num_blocks += taken
        return taken

    def retire_top(self):
        top = self.num_blocks - 1
        if top < 0 or top in self._raw_unit_owner:
            return None
        if top in self._free:
            self._take_named(top)
            self._unindex(top)
            destination = -1
        else:
            destination = self._take_free()
            if destination < 0:
                return None
            self._adopt(destination, top)
        self.num_blocks -= 1
        return BlockRetirement(top, destination)

    def _adopt(self, destination, source):
        self._unindex(destination)
        src, dst = self.blocks[source], self.blocks[destination]
        dst.ref_count, dst.hash, dst.token_ids = src.ref_count, src.hash, src.token_ids
        if src.hash != -1 and self._index.get(src.hash) == source:
            self._index[src.hash] = destination
        self._used.discard(source)
        self._used.add(destination)
        src.ref_count, src.hash, src.token_ids = 0, -1, _NO_TOKENS


# ----------------------------------------------------------------------------
# Trace driver.
# ----------------------------------------------------------------------------


def load_trace(path):
    """[(True, req, [hashes]) | (False, req, None)], parsed before timing."""
    events = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "admit":
                events.append((True, int(parts[1]), [int(h) for h in parts[2:]]))
            else:
                events.append((False, int(parts[1]), None))
    return events


def replay(pool, events):
    """The timed replay. Returns the number of pool operations."""
    lookup, claim, pop = pool.lookup, pool.claim, pool.pop
    allocate, publish, free = pool.allocate, pool.publish, pool.free
    live = {}
    ops = 0
    for admit, req, hashes in events:
        if admit:
            taken = []
            for h in hashes:
                b = lookup(h)
                if b >= 0:
                    claim(b)
                    ops += 2
                else:
                    try:
                        b = pop()
                    except AssertionError:
                        ops += 1  # the failed pop (the lookup counts below)
                        break
                    allocate(b)
                    publish(b, h)
                    ops += 4
                taken.append(b)
            else:
                live[req] = taken
                continue
            ops += 1 + len(taken)  # the lookup before the failed pop, frees
            for b in taken:
                free(b)
        else:
            taken = live.pop(req, ())  # a refused request holds nothing
            for b in taken:
                free(b)
            ops += len(taken)
    return ops


def replay_checked(pool, events):
    """The same replay, untimed, also returning (hits, refused, checksum of
    every id taken, in order) so two implementations can be compared."""
    live = {}
    ops = hits = refused = cs = 0
    mask = (1 << 64) - 1
    for admit, req, hashes in events:
        if admit:
            taken = []
            ok = True
            for h in hashes:
                b = pool.lookup(h)
                if b >= 0:
                    pool.claim(b)
                    ops += 2
                    hits += 1
                else:
                    try:
                        b = pool.pop()
                    except AssertionError:
                        ops += 2
                        ok = False
                        break
                    pool.allocate(b)
                    pool.publish(b, h)
                    ops += 4
                taken.append(b)
                cs = (cs * 1099511628211 + b + 1) & mask
            if ok:
                live[req] = taken
            else:
                refused += 1
                for b in taken:
                    pool.free(b)
                ops += len(taken)
        else:
            for b in live.pop(req, ()):
                pool.free(b)
                ops += 1
    return ops, hits, refused, cs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--num-blocks", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    events = load_trace(a.trace)
    ops, hits, refused, cs = replay_checked(BlockPool(a.num_blocks), events)
    print(f"python: ops={ops} hits={hits} refused={refused} checksum={cs}")
    best = None
    for _ in range(a.repeat):
        pool = BlockPool(a.num_blocks)
        t0 = time.perf_counter_ns()
        n = replay(pool, events)
        dt = time.perf_counter_ns() - t0
        assert n == ops
        best = dt if best is None else min(best, dt)
    print(f"python: ns_per_op={best / ops:.2f} (best of {a.repeat}, {ops} ops)")


if __name__ == "__main__":
    main()
