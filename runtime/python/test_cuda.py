"""poolrt's views and kernels on a CUDA GPU, through torch.

Not part of ctest (no machine CI runs on has a GPU): bench/gpu/run.sh
device-python builds the module on the H200 machine against its python3
(which holds torch) and runs this file there; bench/RESULTS.md records what
it printed. POOLRT_TEST_ARTIFACT is V4-Flash fp8 at 1 GiB and
POOLRT_TEST_FORK_ARTIFACT Qwen3.5 at 2 GiB, both compiled for sm_90.

The same protocol as test_poolrt.py's host tests, with device memory: torch
wraps the arena's planes, fields and staging buffers through DLPack (zero
copy, device type CUDA), writes state with CUDA ops, and the generated
kernels, launched from Python, move it.
"""
import gc
import os

import pytest

import poolrt

torch = pytest.importorskip("torch")
ARTIFACT = os.environ.get("POOLRT_TEST_ARTIFACT")
FORK_ARTIFACT = os.environ.get("POOLRT_TEST_FORK_ARTIFACT")
HAS_CUDA = any(name == "cuda" and ok for name, ok, _ in poolrt.probe_backends())
pytestmark = pytest.mark.skipif(not (HAS_CUDA and ARTIFACT and FORK_ARTIFACT),
                                reason="needs the cuda backend and both artifacts")


def kernel_of(path, kind):
    return next(k for k in poolrt.read_artifact(path).kernels if k["kind"] == kind)


def test_torch_wraps_device_planes_without_a_copy():
    with poolrt.Device("cuda") as dev:
        print(dev.description)
        arena = dev.arena(ARTIFACT)
        plane = arena.plane("nope")
        assert plane.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
        t = torch.from_dlpack(plane)
        assert t.is_cuda and t.dtype == torch.uint8 and list(t.shape) == plane.shape
        assert t.data_ptr() == arena.base + plane.byte_offset
        # torch -> the runtime
        t[7, 16:24] = torch.arange(1, 9, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        row = 7 * plane.shape[1]
        assert arena.read(plane.byte_offset + row + 16, 8) == bytes(range(1, 9))
        # the runtime -> torch
        arena.write(plane.byte_offset + row + 100, b"\xaa\xbb")
        assert t[7, 100:102].tolist() == [0xAA, 0xBB]
        # Typed views: fp8 and bf16 as torch names them; a state field.
        nope = torch.from_dlpack(arena.plane("nope", typed=True))
        rope = torch.from_dlpack(arena.plane("rope", typed=True))
        assert nope.dtype == torch.float8_e4m3fn and nope.shape == t.shape
        assert nope.data_ptr() == t.data_ptr()
        assert rope.dtype == torch.bfloat16 and rope.shape[1] == 64
        kv = torch.from_dlpack(arena.field("csa_main_kv"))
        assert kv.dtype == torch.float32 and list(kv.shape) == arena.field("csa_main_kv").shape
        # Device memory has no numpy array interface.
        with pytest.raises(AttributeError, match="device memory"):
            plane.__array_interface__
        assert arena.exports == 4
        with pytest.raises(poolrt.StateError, match="4 live DLPack exports"):
            arena.close()
        del t, nope, rope, kv
        gc.collect()
        assert arena.exports == 0
        arena.close()


def test_copy_checkpoint_keep_then_resume_on_the_gpu():
    """V4's copy checkpoint on CUDA: the state torch writes at the rung is
    kept by image_store and put back by image_restore, byte for byte."""
    with poolrt.Device("cuda") as dev:
        arena = dev.arena(ARTIFACT)
        m = poolrt.CacheManager.from_artifact(ARTIFACT, interval=256)
        kv = torch.from_dlpack(arena.field("csa_main_kv"))

        def step(r, forward):
            m.complete_previous_state_batch()
            start = r.num_cached_tokens
            chunk = m.finalize_prefill_chunk(r, start, len(r) - start)
            ops = m.take_state_maintenance_ops()
            for op in ops["stores"]:
                arena.launch("image_store", op["kernel_ids"])
            for op in ops["restores"]:
                arena.launch("image_restore", op["kernel_ids"])
            if forward:
                forward(start + chunk)
                torch.cuda.synchronize()
                m.hash_blocks(r, chunk)
                r.num_cached_tokens = start + chunk
            return ops

        r1 = poolrt.Request(list(range(600)))
        m.allocate(r1, m.admission(r1))
        e1 = m.slot_kernel_id(r1) - arena.slot_origin
        ends, stored = [], 0
        while r1.num_cached_tokens < len(r1):
            stored += len(step(r1, lambda end: kv[:, e1].fill_(float(end)))["stores"])
            ends.append(r1.num_cached_tokens)
        cut = ends[0]
        assert stored == 1 and cut % 256 == 0 and 0 < cut < 600
        m.deallocate(r1)
        m.complete_previous_state_batch()

        r2 = poolrt.Request(list(range(600)) + [7, 7, 7])
        adm = m.admission(r2)
        assert adm.hit_tokens == cut
        m.allocate(r2, adm)
        e2 = m.slot_kernel_id(r2) - arena.slot_origin
        kv[:, e2].fill_(-7.0)
        torch.cuda.synchronize()
        assert len(step(r2, None)["restores"]) == 1
        assert bool(torch.all(kv[:, e2] == float(cut))), torch.unique(kv[:, e2])
        del kv


def test_staging_gather_and_scatter_on_the_gpu():
    gather = kernel_of(ARTIFACT, "image_gather")
    with poolrt.Device("cuda") as dev:
        arena = dev.arena(ARTIFACT)
        gen = torch.Generator(device="cuda").manual_seed(3)
        for sg in gather["segments"]:  # random bytes in slot 5's image
            data = torch.randint(0, 256, (sg["bytes"],), dtype=torch.uint8,
                                 device="cuda", generator=gen)
            arena.write(sg["src_off"] + 5 * sg["src_stride"], data.cpu().numpy().tobytes())
        buf = arena.staging("image_gather", items=1)
        arena.launch("image_gather", [5], staging=buf)
        rows = torch.from_dlpack(buf.view())
        assert rows.is_cuda and list(rows.shape) == [1, gather["staging_stride"]]
        for sg in gather["segments"]:
            want = arena.read(sg["src_off"] + 5 * sg["src_stride"], sg["bytes"])
            got = rows[0, sg["dst_off"]:sg["dst_off"] + sg["bytes"]].cpu().numpy().tobytes()
            assert got == want, sg["what"]
        rows[0].bitwise_xor_(0x5A)  # change the staged image on the GPU
        torch.cuda.synchronize()
        arena.launch("image_scatter", [9], staging=buf)
        for sg in kernel_of(ARTIFACT, "image_scatter")["segments"]:
            got = arena.read(sg["dst_off"] + 9 * sg["dst_stride"], sg["bytes"])
            want = rows[0, sg["src_off"]:sg["src_off"] + sg["bytes"]].cpu().numpy().tobytes()
            assert got == want, sg["what"]
        with pytest.raises(poolrt.StateError, match="staging buffer has 1 live"):
            buf.close()
        del rows
        gc.collect()
        buf.close()


def test_fork_resume_on_the_gpu():
    with poolrt.Device("cuda") as dev:
        arena = dev.arena(FORK_ARTIFACT)
        m = poolrt.CacheManager.from_artifact(FORK_ARTIFACT, interval=1024)
        region = torch.from_dlpack(arena.class_region("state"))  # [groups, group_bytes]
        prompt = [1000 + i for i in range(8 * 256 + 3)]
        r1 = poolrt.Request(prompt)
        m.allocate(r1, m.admission(r1))
        g1 = r1.group
        state = torch.randint(0, 256, (region.shape[1],), dtype=torch.uint8, device="cuda",
                              generator=torch.Generator(device="cuda").manual_seed(1))
        region[g1].copy_(state)
        torch.cuda.synchronize()
        chunk = m.finalize_prefill_chunk(r1, 0, len(r1))
        m.hash_blocks(r1, chunk)
        assert r1.fork_source == g1
        r1.num_cached_tokens = chunk
        m.complete_previous_state_batch()
        m.hash_blocks(r1, len(r1) - chunk)
        r1.num_cached_tokens = len(r1)
        m.deallocate(r1)
        m.complete_previous_state_batch()
        m.complete_previous_state_batch()
        r2 = poolrt.Request(prompt)
        adm = m.admission(r2)
        assert adm.hit_tokens == chunk
        m.allocate(r2, adm)
        assert r2.fork_source == g1
        region[r2.group].fill_(0x5A)
        torch.cuda.synchronize()
        arena.launch("group_copy", [r2.fork_source, r2.group])
        assert bool(torch.equal(region[r2.group], state)), "resumed byte for byte"
        assert bool(torch.equal(region[g1], state)), "the checkpoint is untouched"
        del region, state
