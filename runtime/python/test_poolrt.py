"""The Python module drives the same pools and cache manager as C++.

Run by ctest (runtime/python/CMakeLists.txt) as a pytest module, with
PYTHONPATH naming the built module and POOLRT_TEST_ARTIFACT a .poolpack
compiled for the test (V4-Flash fp8 at 1 GiB, 4 sequences).
"""
import os

import pytest

import poolrt

ARTIFACT = os.environ.get("POOLRT_TEST_ARTIFACT")
# A fork-transfer model (Qwen3.5's GDN state, fork(1)) for the fork e2e.
FORK_ARTIFACT = os.environ.get("POOLRT_TEST_FORK_ARTIFACT")
WINDOW_ARTIFACT = os.environ.get("POOLRT_TEST_WINDOW_ARTIFACT")

GEOMETRY = {"envelope_rows": 1, "slot_rows": 4, "plane_rows": 40,
            "slot_positions": 10, "max_blocks": 32}


def fork_manager(**kw):
    args = dict(block_size=4, num_blocks=64, num_groups=8,
                transfer=poolrt.StateTransfer.fork(8), interval=16)
    args.update(kw)
    return poolrt.CacheManager(**args)


def boundary_manager():
    return poolrt.CacheManager(block_size=4, num_blocks=32, num_groups=2,
                               interval=0, boundary=GEOMETRY)


def prefill_and_free(m, r):
    """Forward an allocated 16-token request in the chunks its checkpoint
    demand cuts, publish each, then free it and drain two batches."""
    cut = r.checkpoint_demand_pos
    for end in ([cut, 16] if r.num_cached_tokens < cut < 16 else [16]):
        m.hash_blocks(r, end - r.num_cached_tokens)
        r.num_cached_tokens = end
        m.complete_previous_state_batch()
    m.deallocate(r)
    m.complete_previous_state_batch()
    m.complete_previous_state_batch()


def allocated(m, tokens):
    r = poolrt.Request(tokens)
    m.allocate(r, m.can_allocate(r))
    return r


def test_prompt_end_checkpoint_and_its_counters():
    """specs/checkpoint-placement.md: a 22-token prompt (block 4) keeps its
    prompt end, 20, with the ladder off; the next turn resumes there and the
    funnel counts both. The reference's placement keeps nothing."""
    prompt = list(range(1, 23))
    for at, hit in ((["prompt-end", "branch", "response-end"], 20), (["ladder"], 0)):
        m = fork_manager(transfer=poolrt.StateTransfer.fork(1), interval=0,
                         checkpoint_at=at)
        r = allocated(m, prompt)
        chunk = m.finalize_prefill_chunk(r, 0, len(r))
        assert chunk == (20 if hit else 22)
        m.hash_blocks(r, chunk)
        r.num_cached_tokens = chunk
        m.complete_previous_state_batch()
        if chunk < len(r):
            m.hash_blocks(r, len(r) - chunk)
            r.num_cached_tokens = len(r)
        m.deallocate(r)
        m.complete_previous_state_batch()
        m.complete_previous_state_batch()
        r2 = poolrt.Request(prompt + [99, 98])
        a = m.admission(r2)
        assert a.hit_tokens == hit
        m.allocate(r2, a)
        f = m.funnel()
        assert f["taken_prompt_end"] == (1 if hit else 0)
        assert f["read_back_prompt_end"] == (1 if hit else 0)
        assert f["taken_ladder"] == f["dropped_prompt_end"] == 0
        m.deallocate(r2)
    with pytest.raises(poolrt.InvalidArgument, match="checkpoint_at: 'middle'"):
        fork_manager(checkpoint_at=["middle"])


def test_backends():
    assert [b[0] for b in poolrt.probe_backends()] == ["host", "cuda", "hip"]


def test_hash_chain_vector():
    # The reference's chain (vector hash_chain).
    h0 = poolrt.hash_block(None, [0, 1, 2, 3], scheme="xxh64")
    assert h0 == 15419903723500502158
    assert poolrt.hash_block(h0, [4, 5, 6, 7], scheme="xxh64") == 13855164289028113800


def test_hash_chain_default_is_seeded_xxh3():
    # XXH3-64 of the ids as int64 LE, seeded with the parent (0 first); the
    # values are the xxhash library's own for the same bytes and seeds.
    h0 = poolrt.hash_block(None, [0, 1, 2, 3])
    assert h0 == 3351146345649969386
    assert poolrt.hash_block(h0, [4, 5, 6, 7]) == 16070428996067408666
    with pytest.raises(poolrt.InvalidArgument, match="hash scheme 'md5'"):
        poolrt.hash_block(None, [1], scheme="md5")


@pytest.mark.parametrize("scheme", ["xxh3", "xxh64"])
def test_manager_publishes_its_scheme(scheme):
    # The manager's prefix hashes are hash_block's under its scheme, and a
    # prompt's second admission hits under either.
    m = poolrt.CacheManager(block_size=4, num_blocks=16, hash_scheme=scheme)
    assert m.hash_scheme == scheme
    prompt = list(range(100, 113))
    r = poolrt.Request(prompt, id=1)
    h0 = poolrt.hash_block(None, prompt[0:4], scheme=scheme)
    h1 = poolrt.hash_block(h0, prompt[4:8], scheme=scheme)
    assert m.prefix_hashes(r, 2) == [h0, h1]
    m.allocate(r, m.can_allocate(r))
    m.hash_blocks(r, len(prompt))
    m.deallocate(r)
    again = poolrt.Request(prompt, id=2)
    assert m.can_allocate(again) == 3
    other = "xxh64" if scheme == "xxh3" else "xxh3"
    assert poolrt.hash_block(None, prompt[0:4], scheme=other) != h0
    with pytest.raises(poolrt.InvalidArgument, match="hash scheme"):
        poolrt.CacheManager(block_size=4, num_blocks=16, hash_scheme="sha1")


def test_demand_then_hit():
    # Demand, then a hit one request later (vector bm_demand_short_prompt).
    m = fork_manager()
    hits, demands = [], []
    for _ in range(3):
        r = poolrt.Request(list(range(16)))
        hit = m.can_allocate(r)
        hits.append(hit)
        demands.append(r.checkpoint_demand_pos)
        m.allocate(r, hit)
        prefill_and_free(m, r)
    assert hits == [0, 0, 2]
    assert demands == [0, 8, 0]
    assert m.funnel()["checkpoints_kept"] == 1
    st = m.stats()
    assert (st["full_tokens"], st["cached_tokens"], st["wanted_tokens"],
            st["compressed_tokens"]) == (48, 8, 16, 24)


def test_double_free_of_a_block_raises():
    # Quirk Q2: misuse raises instead of corrupting the pool.
    p = poolrt.BlockPool(4)
    b = p.pop()
    p.allocate(b)
    p.free(b)
    with pytest.raises(RuntimeError, match="not held"):
        p.free(b)
    assert p.invariants_hold()


def test_fork_zero_raises():
    with pytest.raises(ValueError):
        poolrt.StateTransfer.fork(0)


def test_move_boundary():
    # A stateful request's slot, then more slots.
    m = boundary_manager()
    r = allocated(m, list(range(40)))
    mv = m.move_boundary(5, [r])
    assert mv["reached_target"] and mv["num_groups"] == 5
    assert mv["num_blocks"] == 20 and mv["block_copy_ids"] == []
    with pytest.raises(ValueError, match=r"outside \[0, 10\]"):
        m.move_boundary(11, [r])


@pytest.mark.skipif(not ARTIFACT, reason="POOLRT_TEST_ARTIFACT not set")
def test_from_artifact():
    m = poolrt.CacheManager.from_artifact(ARTIFACT, interval=1024)
    r = poolrt.Request(list(range(3 * 256 + 5)))
    assert m.can_allocate(r) == 0
    m.allocate(r, 0)
    assert len(r.block_table) == 4 and r.group >= 0
    mv = m.move_boundary(6, [r])
    assert mv["reached_target"] and mv["num_groups"] == 6
    with pytest.raises(ValueError, match="nonexistent"):
        poolrt.CacheManager.from_artifact("/nonexistent.poolpack")
    with pytest.raises(ValueError, match="checkpoint interval must be >= 0"):
        poolrt.CacheManager.from_artifact(ARTIFACT, interval=-1)


@pytest.mark.skipif(not WINDOW_ARTIFACT, reason="POOLRT_TEST_WINDOW_ARTIFACT not set")
def test_window_class_from_artifact():
    # gpt-oss at 64 MiB: one block id space of 113 blocks (64 MiB // 589,824)
    # shared by the full class and the 128-token window class, whose reserve
    # is ceil(127/16) + 1 + 128/16 = 17 blocks per request.
    m = poolrt.CacheManager.from_artifact(WINDOW_ARTIFACT, interval=0)
    r = poolrt.Request(list(range(300)))
    assert m.can_allocate(r) == 0
    m.allocate(r, 0)
    assert len(r.block_table) == 19 and r.window_tables == [[]]
    # The reserve cuts the first chunk at 17 blocks = 272 tokens.
    assert m.finalize_prefill_chunk(r, 0, 300) == 272
    assert len(r.window_tables[0]) == 17
    m.hash_blocks(r, 272)
    r.num_cached_tokens = 272
    # At 272 the window [145, 272] no longer reads blocks 0..8 (145 // 16 = 9).
    assert m.finalize_prefill_chunk(r, 272, 28) == 28
    t = r.window_tables[0]
    assert len(t) == 19 and t[:9] == [-1] * 9 and all(b >= 0 for b in t[9:])
    assert not set(t[9:]) & set(r.block_table)  # one id space, distinct blocks
    m.deallocate(r)
    assert r.window_tables == []


#===--- Misuse is refused, and leaves the pools unchanged -----------------===#


def test_negative_interval_refused():
    with pytest.raises(ValueError, match="checkpoint interval must be >= 0"):
        fork_manager(interval=-1)
    assert fork_manager(interval=0).interval == 0  # 0: the ladder is off


def test_deallocate_twice_refused():
    m = fork_manager()
    r = allocated(m, list(range(16)))
    m.deallocate(r)
    free = m.funnel()
    with pytest.raises(RuntimeError, match="not allocated"):
        m.deallocate(r)
    assert m.funnel() == free and not r.allocated


def test_deallocate_never_allocated_refused():
    m = fork_manager()
    with pytest.raises(RuntimeError, match="not allocated"):
        m.deallocate(poolrt.Request(list(range(16))))


def test_hash_blocks_unallocated_refused():
    m = fork_manager()
    r = poolrt.Request(list(range(16)))
    with pytest.raises(RuntimeError, match="hash_blocks: .* not allocated"):
        m.hash_blocks(r, 16)


@pytest.mark.parametrize("n", [-5, 17])
def test_num_cached_tokens_out_of_range_refused(n):
    r = poolrt.Request(list(range(16)))
    r.num_cached_tokens = 16
    with pytest.raises(ValueError, match=r"outside \[0, 16\]"):
        r.num_cached_tokens = n
    assert r.num_cached_tokens == 16


def test_move_boundary_duplicate_refused():
    m = boundary_manager()
    r = allocated(m, list(range(40)))
    with pytest.raises(ValueError, match="in the live list twice"):
        m.move_boundary(5, [r, r])
    assert m.move_boundary(2, [r])["num_blocks"] == 32  # nothing moved


def test_move_boundary_freed_request_refused():
    m = boundary_manager()
    r = allocated(m, list(range(40)))
    m.deallocate(r)
    with pytest.raises(RuntimeError, match="move_boundary: .* not allocated"):
        m.move_boundary(5, [r])
    assert m.move_boundary(2, [])["num_blocks"] == 32  # nothing moved


def test_ref_count_of_an_unknown_block_refused():
    p = poolrt.BlockPool(4)
    assert p.ref_count(3) == 0
    for b in (-1, 4):
        with pytest.raises(KeyError, match="no such block"):
            p.ref_count(b)


def test_state_group_pool_misuse_refused():
    p = poolrt.StateGroupPool(2)
    g = p.pop()
    with pytest.raises(RuntimeError, match="group is not free"):
        p.claim(g)  # held: only a free group can be claimed (a resume)
    p.release(g)
    with pytest.raises(RuntimeError, match="already free"):
        p.release(g)
    for bad in (-1, 2):
        with pytest.raises(ValueError, match="no such group"):
            p.claim(bad)
        with pytest.raises(ValueError, match="no such group"):
            p.index(7, bad)
    assert p.num_free == 2


#===--- Wrong argument types name the argument ----------------------------===#


def test_request_prompt_type_named():
    with pytest.raises(TypeError, match="prompt must be a list of int"):
        poolrt.Request("abc")
    with pytest.raises(TypeError, match=r"prompt\[1\] must be an int .*str"):
        poolrt.Request([1, "x"])


@pytest.mark.parametrize("call", [
    lambda m: m.can_allocate(3),
    lambda m: m.allocate([1, 2], 0),
    lambda m: m.hash_blocks(None, 4),
    lambda m: m.deallocate("r"),
])
def test_request_argument_type_named(call):
    with pytest.raises(TypeError, match="request must be a poolrt.Request, got"):
        call(fork_manager())


def test_move_boundary_live_type_named():
    m = boundary_manager()
    r = allocated(m, list(range(40)))
    with pytest.raises(TypeError,
                       match=r"live\[1\] must be a poolrt.Request, got int"):
        m.move_boundary(5, [r, 3])


def test_boundary_field_type_named():
    bad = dict(GEOMETRY, slot_rows="4")
    with pytest.raises(TypeError, match=r"boundary\['slot_rows'\] must be an int"):
        poolrt.CacheManager(block_size=4, num_blocks=32, num_groups=2,
                            interval=0, boundary=bad)


# --- typed exceptions, unique ids, an admission that explains itself --------

def test_exceptions_are_typed_and_keep_their_builtin_bases():
    assert issubclass(poolrt.InvalidArgument, poolrt.Error)
    assert issubclass(poolrt.InvalidArgument, ValueError)
    assert issubclass(poolrt.CorruptArtifact, poolrt.InvalidArgument)
    assert issubclass(poolrt.InvalidId, KeyError)
    assert issubclass(poolrt.OutOfBlocks, poolrt.StateError)
    assert issubclass(poolrt.StateError, RuntimeError)
    p = poolrt.BlockPool(1)
    p.allocate(p.pop())
    with pytest.raises(poolrt.OutOfBlocks, match="No free blocks available"):
        p.pop()
    with pytest.raises(poolrt.InvalidId):
        p.ref_count(5)
    with pytest.raises(poolrt.InvalidArgument):
        poolrt.StateTransfer.fork(0)
    g = poolrt.StateGroupPool(1)
    g.pop()
    with pytest.raises(poolrt.OutOfStateGroups, match="no free group"):
        g.pop()


def test_a_corrupt_artifact_is_its_own_error(tmp_path):
    bad = tmp_path / "bad.poolpack"
    bad.write_bytes(b"POOLPACK" + b"\0" * 64)
    with pytest.raises(poolrt.CorruptArtifact):
        poolrt.read_artifact(str(bad))
    with pytest.raises(poolrt.CorruptArtifact):
        poolrt.CacheManager.from_artifact(str(bad))
    with pytest.raises(poolrt.CorruptArtifact, match="no-such"):
        poolrt.read_artifact(str(tmp_path / "no-such.poolpack"))


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_read_artifact_prints_in_one_line_and_keeps_its_keys():
    a = poolrt.read_artifact(ARTIFACT)
    text = repr(a)
    assert len(text) < 200 and "deepseek-v4-flash-fp8" in text and "\n" not in text
    assert a["model"] == a.model == "deepseek-v4-flash-fp8"
    assert "manifest" in a["sections"] and a.layout_fingerprint.startswith("0x")
    with pytest.raises(AttributeError):
        a.nonexistent


def test_every_request_gets_its_own_id():
    ids = {poolrt.Request([1, 2, 3]).id for _ in range(100)}
    assert len(ids) == 100 and 0 not in ids
    assert poolrt.Request([1], id=42).id == 42
    r = poolrt.Request([5, 6, 7], id=9)
    assert repr(r) == "<poolrt.Request id=9, 3 tokens, 0 cached>"
    r.append_tokens([8, 9])
    assert len(r) == 5 and r.tokens == [5, 6, 7, 8, 9]


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_two_live_requests_cannot_share_an_id_on_a_copy_checkpoint_model():
    # The PAGE-unit store keeps checkpoint intents by request id: two live
    # requests of one id would share them, and freeing one would forget the
    # other's. Allocating the second is refused; with their own ids both run.
    m = poolrt.CacheManager.from_artifact(ARTIFACT, interval=256)
    a = poolrt.Request(list(range(600)), id=7)
    b = poolrt.Request(list(range(1000, 1600)), id=7)
    m.allocate(a, m.can_allocate(a))
    with pytest.raises(poolrt.InvalidId, match="request id 7 is already live"):
        m.allocate(b, m.can_allocate(b))
    assert not b.allocated and b.block_table == []
    m.deallocate(a)
    m.allocate(b, m.can_allocate(b))  # the id is free again
    m.deallocate(b)
    c, d = poolrt.Request(list(range(600))), poolrt.Request(list(range(600)))
    for r in (c, d):
        m.allocate(r, m.can_allocate(r))
    assert c.id != d.id


def test_admission_explains_itself():
    m = fork_manager()
    hits = []
    for _ in range(3):
        r = poolrt.Request(list(range(16)))
        adm = m.admission(r)
        assert adm and adm.admissible
        assert adm.hit_tokens == 4 * adm.hit_blocks  # block_size 4
        assert adm.needed_blocks == 4 and adm.indexed_blocks >= adm.hit_blocks
        assert adm.reason == ("checkpoint missing" if adm.indexed_blocks > adm.hit_blocks else "")
        hits.append((adm.hit_blocks, adm.hit_tokens, adm.reason))
        m.allocate(r, adm)
        assert r.num_cached_tokens == adm.hit_tokens
        prefill_and_free(m, r)
    # The same walk as test_demand_then_hit, now in tokens and with reasons:
    # the second request's indexed prefix stops at the missing checkpoint.
    assert [h[0] for h in hits] == [0, 0, 2]
    assert hits[1][2] == "checkpoint missing" and hits[2][1] == 8


def test_a_refused_admission_says_why():
    m = poolrt.CacheManager(block_size=4, num_blocks=2)
    r = poolrt.Request(list(range(100)))
    adm = m.admission(r)
    assert not adm and adm.reason == "blocks" and adm.hit_tokens == 0
    assert adm.needed_blocks == 25 and m.can_allocate(r) == -1
    assert repr(adm) == "<poolrt.Admission refused, reason 'blocks'>"
    with pytest.raises(poolrt.StateError, match=r"admission was refused \(blocks\)"):
        m.allocate(r, adm)
    with pytest.raises(TypeError, match="num_cached_blocks must be an int or a poolrt.Admission"):
        m.allocate(r, "x")
    g = fork_manager(num_groups=1)
    first = allocated(g, list(range(8)))
    assert first.group >= 0
    adm = g.admission(poolrt.Request(list(range(100, 108))))
    assert not adm and adm.reason == "state groups"


# --- devices, the arena, DLPack ---------------------------------------------

@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_dlpack_views_wrap_the_arena_without_a_copy():
    import numpy as np  # Debian's python3-numpy (tools/install-deps.sh)
    import gc
    with poolrt.Device("host") as dev:
        assert repr(dev) == "<poolrt.Device host>"
        arena = dev.arena(ARTIFACT)
        info = poolrt.read_artifact(ARTIFACT)
        assert arena.bytes == info.allocation_bytes
        plane = arena.plane("nope")
        assert plane.__dlpack_device__() == (1, 0) and plane.dtype == (1, 8, 1)
        x = np.from_dlpack(plane)  # read-only in numpy < 2.1
        w = np.asarray(plane)      # the array interface: writable, same memory
        assert x.shape == tuple(plane.shape) and x.dtype == np.uint8
        assert np.shares_memory(x, w) and w.flags.writeable
        assert x.__array_interface__["data"][0] == arena.base + plane.byte_offset
        row = 7 * plane.shape[1]
        # numpy -> the runtime: written through the array, read by the device.
        w[7, 16:24] = np.arange(1, 9, dtype=np.uint8)
        assert arena.read(plane.byte_offset + row + 16, 8) == bytes(range(1, 9))
        # the runtime -> numpy: written by the device, seen by the DLPack view.
        arena.write(plane.byte_offset + row + 100, b"\xaa\xbb")
        assert list(x[7, 100:102]) == [0xAA, 0xBB]
        # A state field in its own dtype and shape, strides in elements.
        f = arena.field("csa_main_kv")
        y = np.from_dlpack(f)
        assert y.dtype == np.float32 and list(y.shape) == f.shape
        assert [s // 4 for s in y.strides] == f.strides
        # Closing under live arrays is refused; once they go, it closes.
        assert arena.exports == 3
        with pytest.raises(poolrt.StateError, match="3 live DLPack exports"):
            arena.close()
        del x, w, y, plane, f
        gc.collect()
        assert arena.exports == 0
        arena.close()
        assert repr(arena) == "<poolrt.Arena closed>"
        with pytest.raises(poolrt.StateError, match="arena is closed"):
            arena.plane("nope")
        with pytest.raises(poolrt.InvalidId, match="no plane named 'x'"):
            dev.arena(ARTIFACT).plane("x")
        a2 = dev.arena(ARTIFACT)
        with pytest.raises(poolrt.InvalidArgument, match="outside the"):
            a2.read(a2.bytes - 4, 8)
    assert repr(dev) == "<poolrt.Device closed>"
    with pytest.raises(poolrt.StateError, match="device is closed"):
        dev.arena(ARTIFACT)
    # An arena outlives the device's close: its memory stays valid.
    assert a2.read(0, 4) == b"\0\0\0\0"
    with pytest.raises(poolrt.StateError, match="cuda backend absent"):
        poolrt.Device("cuda")


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_v4_copy_checkpoint_keep_then_resume_through_dlpack():
    """The per-step protocol from Python on DeepSeek-V4's row space: a
    request's state (written through a numpy view of a checkpointed field)
    is kept at the rung the chunk planner cuts at (a multiple of the
    256-token interval) by the generated image_store kernel, the request
    ends, and a second request on the same prefix resumes it: image_restore
    puts back, byte for byte, the state as it was at the rung."""
    import numpy as np
    with poolrt.Device("host") as dev:
        arena = dev.arena(ARTIFACT)
        m = poolrt.CacheManager.from_artifact(ARTIFACT, interval=256)
        kv = np.asarray(arena.field("csa_main_kv"))  # [layers, slots, 8, 1024]

        def run_step(r, forward):
            m.complete_previous_state_batch()
            start = r.num_cached_tokens
            chunk = m.finalize_prefill_chunk(r, start, len(r) - start)
            ops = m.take_state_maintenance_ops()
            for op in ops["stores"]:
                arena.launch("image_store", op["kernel_ids"])
            for op in ops["restores"]:
                arena.launch("image_restore", op["kernel_ids"])
            if forward:
                forward(start, start + chunk)
                m.hash_blocks(r, chunk)
                r.num_cached_tokens = start + chunk
            return ops

        r1 = poolrt.Request(list(range(600)))
        adm = m.admission(r1)
        assert adm and adm.hit_tokens == 0
        m.allocate(r1, adm)
        e1 = m.slot_kernel_id(r1) - arena.slot_origin

        def forward1(start, end):  # the model's new state after token `end`
            kv[:, e1] = float(end)

        ends, stored = [], 0
        while r1.num_cached_tokens < len(r1):
            stored += len(run_step(r1, forward1)["stores"])
            ends.append(r1.num_cached_tokens)
        cut = ends[0]
        assert len(ends) == 2 and ends[1] == 600 and cut % 256 == 0 and 0 < cut < 600
        assert stored == 1  # the rung's state, kept before chunk 2 changed it
        assert m.funnel()["checkpoints_kept"] == 1
        m.deallocate(r1)
        m.complete_previous_state_batch()  # the store's batch is done: the image is ready

        r2 = poolrt.Request(list(range(600)) + [7, 7, 7])
        adm = m.admission(r2)
        assert adm.hit_tokens == cut and adm.hit_blocks == cut // 256
        m.allocate(r2, adm)
        e2 = m.slot_kernel_id(r2) - arena.slot_origin
        kv[:, e2] = -7.0  # whatever the slot held, the restore must overwrite it
        restored = run_step(r2, None)["restores"]
        assert len(restored) == 1 and restored[0]["image_bytes"] > 0
        view = np.from_dlpack(arena.field("csa_main_kv"))  # zero copy, same bytes
        assert np.all(view[:, e2] == float(cut)), np.unique(view[:, e2])
        assert arena.read(view[:, e2].__array_interface__["data"][0] - arena.base, 4) == \
            np.float32(cut).tobytes()
        del view, kv


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_typed_planes_carry_the_dlpack_codes_engines_read():
    # V4-Flash fp8: 'nope' is fp8_e4m3 at 512 B a row, 'rope' bf16 at 128 B.
    with poolrt.Device("host") as dev:
        arena = dev.arena(ARTIFACT)
        raw, nope, rope = (arena.plane("nope"), arena.plane("nope", typed=True),
                           arena.plane("rope", typed=True))
        assert raw.dtype == (1, 8, 1)                # bytes
        assert nope.dtype == (10, 8, 1)              # kDLFloat8_e4m3fn
        assert nope.shape == raw.shape and nope.strides == [512, 1]
        assert rope.dtype == (4, 16, 1)              # kDLBfloat
        assert rope.shape[1] == 64 and rope.strides == [64, 1]
        assert rope.byte_offset == arena.plane("rope").byte_offset
        assert "float8_e4m3fn[" in repr(nope)
        del raw, nope, rope
        arena.close()


def test_counters_merge_across_two_managers_by_summation():
    # Two ranks, each its own manager: the merged counters are the sums and
    # the merged hit rate is derived from them (not an average of rates).
    ranks = [fork_manager(), fork_manager()]
    for m, n in zip(ranks, (3, 1)):  # rank 0 sees the prompt three times, rank 1 once
        for _ in range(n):
            r = poolrt.Request(list(range(16)))
            m.allocate(r, m.admission(r))
            prefill_and_free(m, r)
    merged = poolrt.merged_counters(ranks)
    a, b = ranks[0].stats(), ranks[1].stats()
    assert merged["ranks"] == 2
    for key in ("requests", "full_tokens", "cached_tokens", "wanted_tokens", "compressed_tokens"):
        assert merged["stats"][key] == a[key] + b[key], key
    assert merged["stats"]["full_tokens"] == 64 and merged["stats"]["cached_tokens"] == 8
    assert merged["stats"]["hit"] == pytest.approx(8 / 64)
    assert merged["funnel"]["checkpoints_kept"] == (ranks[0].funnel()["checkpoints_kept"] +
                                                    ranks[1].funnel()["checkpoints_kept"])
    with pytest.raises(TypeError, match=r"managers\[1\] must be a poolrt.CacheManager"):
        poolrt.merged_counters([ranks[0], 5])


# --- staging kernels: image and block gather / scatter ----------------------

def kernel_named(info, kind):
    return next(k for k in info.kernels if k["kind"] == kind)


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_image_gather_and_scatter_through_a_staging_buffer():
    """image_gather copies a slot's checkpoint image into a staging buffer
    (the tier's side), image_scatter writes one back into another slot: the
    staging rows hold exactly the bytes the manifest's segments name, seen
    through a DLPack view, and a row changed through numpy lands in the
    slot."""
    import numpy as np
    import gc
    info = poolrt.read_artifact(ARTIFACT)
    gather, scatter = kernel_named(info, "image_gather"), kernel_named(info, "image_scatter")
    stride = gather["staging_stride"]
    assert stride > 0 and scatter["staging_stride"] == stride
    assert sum(sg["bytes"] for sg in gather["segments"]) <= stride
    rng = np.random.default_rng(7)
    with poolrt.Device("host") as dev:
        arena = dev.arena(ARTIFACT)
        slots = [3, 11]
        want = {}
        for s in slots:  # random bytes in every segment a gather reads
            for sg in gather["segments"]:
                assert sg["src_id"] == 0 and sg["dst_id"] == -1
                data = rng.integers(0, 256, sg["bytes"], dtype=np.uint8).tobytes()
                arena.write(sg["src_off"] + s * sg["src_stride"], data)
                want[(s, sg["dst_off"])] = data
        buf = arena.staging("image_gather", items=2)
        assert (buf.items, buf.staging_stride, buf.bytes) == (2, stride, 2 * stride)
        assert repr(buf) == f"<poolrt.Staging for '{gather['name']}', 2 x {stride} bytes>"
        arena.launch("image_gather", slots, staging=buf)
        rows = np.asarray(buf.view())  # [items, staging_stride], writable, zero copy
        assert rows.shape == (2, stride)
        for i, s in enumerate(slots):
            for sg in gather["segments"]:
                off = sg["dst_off"]
                assert rows[i, off:off + sg["bytes"]].tobytes() == want[(s, off)]
        assert buf.read(stride, 16) == bytes(rows[1, :16])
        # Change item 0 through numpy, scatter it into slot 20.
        rows[0, :8] = np.arange(8, dtype=np.uint8)
        arena.launch("image_scatter", [20], staging=buf)
        first = scatter["segments"][0]
        assert first["src_id"] == -1 and first["dst_id"] == 0
        for sg in scatter["segments"]:
            got = arena.read(sg["dst_off"] + 20 * sg["dst_stride"], sg["bytes"])
            assert got == rows[0, sg["src_off"]:sg["src_off"] + sg["bytes"]].tobytes()
        assert arena.read(first["dst_off"] + 20 * first["dst_stride"], 8) == bytes(range(8))

        # Misuse: each refused before anything runs.
        with pytest.raises(poolrt.InvalidArgument, match="moves through staging: pass staging="):
            arena.launch("image_gather", [1])
        with pytest.raises(poolrt.InvalidArgument, match="3 items need .* holds 2 items"):
            arena.launch("image_gather", [1, 2, 4], staging=buf)
        blocks = arena.staging("block_gather")
        with pytest.raises(poolrt.InvalidArgument, match="sized for 'pool_block_gather'"):
            arena.launch("image_gather", [1], staging=blocks)
        with pytest.raises(poolrt.InvalidArgument, match="has no staging side"):
            arena.launch("slot_copy", [1, 2], staging=buf)
        with pytest.raises(poolrt.InvalidArgument, match="has no staging side"):
            arena.staging("slot_copy")
        with pytest.raises(poolrt.InvalidArgument, match="items must be in"):
            arena.staging("image_gather", items=0)
        with pytest.raises(poolrt.InvalidArgument, match="outside the"):
            buf.read(2 * stride - 4, 8)
        with pytest.raises(poolrt.InvalidId, match="outside|range"):
            arena.launch("image_gather", [10**6], staging=buf)
        # The buffer cannot go while numpy holds it; then it can.
        with pytest.raises(poolrt.StateError, match="staging buffer has 1 live DLPack"):
            buf.close()
        del rows
        gc.collect()
        buf.close()
        assert repr(buf) == "<poolrt.Staging closed>"
        with pytest.raises(poolrt.StateError, match="staging buffer is closed"):
            arena.launch("image_gather", [1], staging=buf)
        with pytest.raises(poolrt.StateError, match="staging buffer is closed"):
            buf.view()
        blocks.close()
        arena.close()


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_kernel_descriptions_name_their_ids_and_segments():
    info = poolrt.read_artifact(ARTIFACT)
    store = kernel_named(info, "image_store")
    assert store["ids_per_item"] == len(store["id_tuple"])
    assert store["id_tuple"][0]["entity"] == "slot" and store["id_tuple"][0]["read"]
    assert all(t["entity"] == "block" and t["written"] for t in store["id_tuple"][1:])
    copy = kernel_named(info, "block_copy")
    assert copy["staging_stride"] == 0
    assert [(sg["src_id"], sg["dst_id"]) for sg in copy["segments"]] == \
        [(0, 1)] * len(copy["segments"])
    # A block's segments together are its item_bytes.
    assert sum(sg["bytes"] for sg in copy["segments"]) == copy["item_bytes"]


# --- the C++ end-to-end tests, from Python ----------------------------------

@pytest.mark.skipif(not FORK_ARTIFACT, reason="needs POOLRT_TEST_FORK_ARTIFACT")
def test_fork_checkpoint_keep_then_resume():
    """test/E2E/fork_e2e.cpp from Python: on a fork(1) model the ladder's
    checkpoint forks the request into a fresh group and indexes the old one;
    a second request on the prompt hits up to that checkpoint, forks from it,
    and its first forward (the generated group_copy kernel) resumes the
    state: the new group holds the checkpointed bytes exactly."""
    import numpy as np
    info = poolrt.read_artifact(FORK_ARTIFACT)
    copy = kernel_named(info, "group_copy")
    (seg,) = copy["segments"]
    with poolrt.Device("host") as dev:
        arena = dev.arena(FORK_ARTIFACT)
        m = poolrt.CacheManager.from_artifact(FORK_ARTIFACT, interval=4 * 256,
                                              checkpoint_at=["ladder"],
                                              fork_checkpoints="groups")
        bs = m.block_size
        assert '"kind":"fork","fork_tokens":1' in repr(m), repr(m)
        region = np.asarray(arena.class_region("state"))  # [groups, group_bytes]
        assert region.shape == (m.num_groups, seg["bytes"])
        assert arena.class_region("state").byte_offset == seg["src_off"]

        prompt = [1000 + i for i in range(8 * 256 + 3)]  # past two rungs
        r1 = poolrt.Request(prompt)
        a1 = m.admission(r1)
        assert a1 and a1.hit_tokens == 0
        m.allocate(r1, a1)
        g1 = r1.group
        state = np.random.default_rng(1).integers(0, 256, seg["bytes"], dtype=np.uint8)
        region[g1] = state
        rung = m.checkpoint_limit(r1)
        chunk = m.finalize_prefill_chunk(r1, 0, len(r1))
        assert chunk == rung and rung % 1024 == 0 and 0 < rung < len(r1)
        m.hash_blocks(r1, chunk)
        assert r1.group != g1 and r1.fork_source == g1, "the checkpoint forks"
        r1.num_cached_tokens = chunk
        m.complete_previous_state_batch()
        m.hash_blocks(r1, len(r1) - chunk)
        r1.num_cached_tokens = len(r1)
        m.deallocate(r1)
        m.complete_previous_state_batch()
        m.complete_previous_state_batch()
        assert m.funnel()["checkpoints_kept"] == 1

        r2 = poolrt.Request(prompt)
        a2 = m.admission(r2)
        assert a2.hit_tokens == rung and a2.hit_blocks == rung // bs
        m.allocate(r2, a2)
        assert r2.fork_source == g1 and r2.group not in (-1, g1)
        region[r2.group] = 0x5A  # whatever it held, the resume overwrites it
        arena.launch("group_copy", [r2.fork_source, r2.group])
        view = np.from_dlpack(arena.class_region("state"))
        assert np.array_equal(view[r2.group], state), "resumed byte for byte"
        assert np.array_equal(view[g1], state), "the checkpoint itself is untouched"
        m.deallocate(r2)
        del view, region


def _stamp(v):
    """Four 64-bit words derived from v (the C++ boundary test's stamp)."""
    out = []
    mask = (1 << 64) - 1
    for _ in range(4):
        v ^= v >> 31
        v = (v * 0x9E3779B97F4A7C15) & mask
        out.append(v)
    return b"".join(w.to_bytes(8, "little") for w in out)


@pytest.mark.skipif(not ARTIFACT, reason="needs POOLRT_TEST_ARTIFACT")
def test_boundary_moves_keep_every_live_byte():
    """test/E2E/boundary_e2e.cpp from Python, shorter: requests on shared
    prefixes are admitted and finished while the boundary between PAGE
    blocks and STATE slots moves up and down. Every block carries a stamp of
    its content (its chained hash) and every slot one of its request, at the
    start, middle and end of each segment the kernels move; after each move
    the block_copy and slot_copy pairs it returned run through the arena,
    and every live request's blocks and slot must still hold their stamps,
    and a later hit must read the right bytes."""
    import random
    info = poolrt.read_artifact(ARTIFACT)
    gather, slot_copy = kernel_named(info, "block_gather"), kernel_named(info, "slot_copy")
    m = poolrt.CacheManager.from_artifact(ARTIFACT, interval=0)
    bs = m.block_size

    def spots(k, i):
        for sg in k["segments"]:
            base = sg["src_off"] + i * sg["src_stride"]
            last = sg["bytes"] - 32
            yield from (base, base + last // 2 // 8 * 8, base + last)

    def write(arena, k, i, v):
        for at in spots(k, i):
            arena.write(at, _stamp(v))

    def holds(arena, k, i, v):
        return all(arena.read(at, 32) == _stamp(v) for at in spots(k, i))

    def block_value(r, i):
        full = len(r) // bs
        return m.prefix_hashes(r, i + 1)[i] if i < full else 0xB10C << 48 | r.id

    rng = random.Random(20261202)
    live, moves, hits, relocated = [], 0, 0, 0
    with poolrt.Device("host") as dev:
        arena = dev.arena(ARTIFACT)
        groups0 = m.num_groups
        for step in range(160):
            op = rng.randrange(100)
            if op < 45:
                fam = rng.randrange(3)
                prompt = [1000 * (fam + 1) + t for t in range((2 + fam) * bs)]
                prompt += [(1 << 40) | (step << 16) | t for t in range(rng.randrange(1, 2 * bs))]
                r = poolrt.Request(prompt)
                r.stateful = rng.randrange(2) == 0
                adm = m.admission(r)
                if not adm:
                    continue
                m.allocate(r, adm)
                hits += adm.hit_blocks
                for i in range(adm.hit_blocks):  # written by an earlier request
                    assert holds(arena, gather, r.block_table[i], block_value(r, i))
                for i in range(adm.hit_blocks, len(r.block_table)):
                    write(arena, gather, r.block_table[i], block_value(r, i))
                if r.stateful:
                    write(arena, slot_copy, m.slot_kernel_id(r), 0x5107 << 48 | r.id)
                m.hash_blocks(r, len(r) - adm.hit_tokens)
                r.num_cached_tokens = len(r)
                live.append(r)
            elif op < 75 and live:
                m.deallocate(live.pop(rng.randrange(len(live))))
            else:
                target = rng.randrange(1, 2 * groups0 + 1)
                mv = m.move_boundary(target, live)
                moves += 1
                pairs = mv["block_copy_ids"]
                for src, dst in zip(pairs[::2], pairs[1::2]):
                    arena.launch("block_copy", [src, dst])
                pairs = mv["slot_copy_ids"]
                for src, dst in zip(pairs[::2], pairs[1::2]):
                    arena.launch("slot_copy", [src, dst])
                relocated += len(mv["block_copy_ids"]) + len(mv["slot_copy_ids"])
                assert mv["num_groups"] == m.num_groups
                for r in live:
                    for i, b in enumerate(r.block_table):
                        assert holds(arena, gather, b, block_value(r, i)), (r, i)
                    if r.stateful:
                        assert holds(arena, slot_copy, m.slot_kernel_id(r),
                                     0x5107 << 48 | r.id), r
            m.complete_previous_state_batch()
        arena.close()
    assert moves > 10 and hits > 0 and relocated > 0, (moves, hits, relocated)


# --- documentation ---------------------------------------------------------

def _described(obj):
    """A docstring with text past pybind11's signature line."""
    lines = [ln for ln in (getattr(obj, "__doc__", None) or "").strip().splitlines()
             if ln.strip()]
    if lines and "->" in lines[0] and lines[0].split("(")[0].strip().isidentifier():
        lines = lines[1:]
    return bool(lines)


def test_every_public_class_and_member_is_documented():
    import inspect
    missing = []
    for name, obj in vars(poolrt).items():
        if name.startswith("_"):
            continue
        if not _described(obj):
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            missing += [f"{name}.{a}" for a, v in vars(obj).items()
                        if not a.startswith("_") and not _described(v)]
    assert missing == []
    doc = poolrt.CacheManager.__doc__
    for step in ("complete_previous_state_batch", "admission", "allocate",
                 "finalize_prefill_chunk", "take_state_maintenance_ops", "hash_blocks",
                 "deallocate", "move_boundary", "Units:"):
        assert step in doc, step
    assert "Raises:" in poolrt.CacheManager.allocate.__doc__
    assert "OutOfBlocks" in poolrt.CacheManager.allocate.__doc__
    assert "help(CacheManager)" in poolrt.__doc__
