"""The Python module drives the same pools and cache manager as C++."""
import sys

import poolrt


def main():
    names = [b[0] for b in poolrt.probe_backends()]
    assert names == ["host", "cuda", "hip"], names

    # Chained hashes: the public hash_chain vector.
    h0 = poolrt.hash_block(None, [0, 1, 2, 3])
    assert h0 == 15419903723500502158, h0
    assert poolrt.hash_block(h0, [4, 5, 6, 7]) == 13855164289028113800

    # Demand, then a hit one request later (vector bm_demand_short_prompt).
    m = poolrt.CacheManager(block_size=4, num_blocks=64, num_groups=8,
                            transfer=poolrt.StateTransfer.fork(8), interval=16)
    hits, demands = [], []
    for _ in range(3):
        r = poolrt.Request(list(range(16)))
        hit = m.can_allocate(r)
        hits.append(hit)
        demands.append(r.checkpoint_demand_pos)
        m.allocate(r, hit)
        start = r.num_cached_tokens
        cut = r.checkpoint_demand_pos
        for end in ([cut, 16] if start < cut < 16 else [16]):
            m.hash_blocks(r, end - r.num_cached_tokens)
            r.num_cached_tokens = end
            m.complete_previous_state_batch()
        m.deallocate(r)
        m.complete_previous_state_batch()
        m.complete_previous_state_batch()
    assert hits == [0, 0, 2], hits
    assert demands == [0, 8, 0], demands
    assert m.funnel()["checkpoints_kept"] == 1, m.funnel()
    st = m.stats()
    assert (st["full_tokens"], st["cached_tokens"], st["wanted_tokens"],
            st["compressed_tokens"]) == (48, 8, 16, 24), st

    # Misuse raises instead of corrupting the pool (quirk Q2).
    p = poolrt.BlockPool(4)
    b = p.pop()
    p.allocate(b)
    p.free(b)
    try:
        p.free(b)
    except RuntimeError:
        pass
    else:
        raise AssertionError("double free accepted")
    assert p.invariants_hold()
    try:
        poolrt.StateTransfer.fork(0)
    except ValueError:
        pass
    else:
        raise AssertionError("fork(0) accepted")
    # Moving the boundary: a stateful request's slot, then more slots.
    geo = {"envelope_rows": 1, "slot_rows": 4, "plane_rows": 40,
           "slot_positions": 10, "max_blocks": 32}
    m = poolrt.CacheManager(block_size=4, num_blocks=32, num_groups=2,
                            interval=0, boundary=geo)
    r = poolrt.Request(list(range(40)))
    m.allocate(r, m.can_allocate(r))
    mv = m.move_boundary(5, [r])
    assert mv["reached_target"] and mv["num_groups"] == 5, mv
    assert mv["num_blocks"] == 20 and mv["block_copy_ids"] == [], mv
    try:
        m.move_boundary(11, [r])
    except ValueError as e:
        assert "outside [0, 10]" in str(e), e
    else:
        raise AssertionError("a target past the plane accepted")
    # Every count from an artifact (V4-Flash fp8 at 1 GiB, 4 sequences).
    if len(sys.argv) > 1:
        m = poolrt.CacheManager.from_artifact(sys.argv[1], interval=1024)
        r = poolrt.Request(list(range(3 * 256 + 5)))
        assert m.can_allocate(r) == 0
        m.allocate(r, 0)
        assert len(r.block_table) == 4 and r.group >= 0, r.block_table
        mv = m.move_boundary(6, [r])
        assert mv["reached_target"] and mv["num_groups"] == 6, mv
        try:
            poolrt.CacheManager.from_artifact("/nonexistent.poolpack")
        except ValueError as e:
            assert "nonexistent" in str(e), e
        else:
            raise AssertionError("a missing artifact accepted")
    print("python module: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
