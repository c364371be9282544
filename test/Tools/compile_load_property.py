#!/usr/bin/env python3
"""Compile <=> load: the compiler never writes an artifact the runtime refuses.

  compile_load_property.py POOLC WORK_DIR N SEED

Generates N random model declarations that the YAML reader accepts (a mix
of explicit-bytes models, state arenas with fork / copy / no transfers,
several STATE classes, a missing or a second PAGE class (mostly a sliding
or chunked window class: a hybrid model, refused beside state), and DeepSeek-V4
style row spaces), compiles each for the host with a random budget, and
then:

* compiled (exit 0): the runtime must take the artifact: read_artifact,
  CacheManager.from_artifact, an arena on the host device; every 10th also
  launches each generated kernel once, and every 25th serves a short trace
  through ServeEngine (without the reference model);
* refused (exit 1): the first line must name the file, line and column,
  and no artifact may be left behind;
* anything else (a crash, a signal) fails.

Both outcomes must occur (each at least 5% of the cases), so the property
is not satisfied vacuously. Run by ctest (compile-load-property) with the
built module on PYTHONPATH.
"""
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import poolrt

DTYPES = ["f32", "bf16", "f16", "fp8_e4m3", "i64", "i32", "u8"]
BUDGETS = ["8MiB", "64MiB", "256MiB", "1GiB", "4GiB"]


def flow(d):
    """A YAML flow mapping of simple values."""
    items = []
    for k, v in d.items():
        if isinstance(v, list):
            v = "[" + ", ".join(str(x) for x in v) + "]"
        elif isinstance(v, dict):
            v = flow(v)
        elif isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, str) and any(c in v for c in " *+/()"):
            v = '"' + v + '"'
        items.append(f"{k}: {v}")
    return "{" + ", ".join(items) + "}"


def transfer(rng):
    kind = rng.choice(["absent", "absent", "none", "fork", "fork", "copy"])
    if kind == "absent":
        return None
    if kind == "fork":
        return {"kind": "fork", "tokens": rng.randint(1, 4)}
    if kind == "copy":
        return {"kind": "copy", "layout_id": f"layout-{rng.randint(0, 9)}"}
    return {"kind": "none"}


def fields_for(rng, cls, n, use_params):
    out = []
    for i in range(n):
        shape = [rng.choice([1, 2, 3, 8, 64, 128, 256]) for _ in range(rng.randint(1, 3))]
        if use_params and rng.random() < 0.3:
            shape[0] = "heads * 2"
        f = {"name": f"{cls}_f{i}", "class": cls, "layers": rng.randint(1, 8),
             "shape": shape,
             "dtype": "state_dtype" if use_params and rng.random() < 0.3 else rng.choice(DTYPES)}
        if rng.random() < 0.2 and f["dtype"] in ("f32", "bf16", "f16"):
            f["fill"] = rng.choice(["-inf", "1.5", "0"])
        if rng.random() < 0.2:
            f["in_checkpoint"] = False
        if rng.random() < 0.2:
            f["align"] = rng.choice([16, 256, 4096])
        out.append(f)
    return out


def explicit_model(rng, name):
    use_params = rng.random() < 0.5
    lines = [f"name: {name}"]
    if use_params:
        lines.append("params: {heads: %d, kv_dtype: %s, state_dtype: %s}"
                     % (rng.randint(1, 8), rng.choice(["bf16", "fp8_e4m3"]), rng.choice(["f32", "bf16"])))
    bs = rng.choice([1, 4, 16, 64, 128, 256])
    lines.append(f"block_size: {bs}")
    classes, fields = [], []
    pages = rng.choices([0, 1, 2], weights=[6, 88, 6])[0]
    for p in range(pages):
        if use_params and rng.random() < 0.5:
            b = "2 * block_size * heads * 64 * sizeof(kv_dtype)"
        else:
            b = rng.choice([4096, 16384, 65536, 528384, 1 << 20])
        c = {"name": f"kv{p}", "pool": "page", "bytes": b}
        # Window classes: usually the second PAGE class (a hybrid model),
        # now and then the only one or both (refused: no full class).
        if (p == 1 and rng.random() < 0.7) or (p == 0 and rng.random() < 0.05):
            a = {"kind": rng.choice(["sliding", "chunked"]),
                 "tokens": rng.choice([1, 7, 64, 128, 1024])}
            if rng.random() < 0.3:
                a["forward_tokens"] = rng.choice([1, 16, 512])
            if rng.random() < 0.3:
                a["cache_percent"] = rng.choice([0, 10, 50, 100])
            c["attention"] = a
            if rng.random() < 0.5:
                c["bytes"] = classes[0]["bytes"] if classes else b  # one block id space
        classes.append(c)
    for s in range(rng.choices([0, 1, 2, 3], weights=[20, 55, 18, 7])[0]):
        cls = f"st{s}"
        c = {"name": cls, "pool": "state", "entries_per_req": rng.choice([1, 1, 1, 2, 3])}
        if rng.random() < 0.7:
            c["bytes"] = "derived"
            fields += fields_for(rng, cls, rng.randint(1, 3), use_params)
        else:
            c["bytes"] = rng.choice([4096, 1 << 16, 1 << 20])
        if rng.random() < 0.2:
            c["extra_entries"] = rng.randint(0, 2)
        t = transfer(rng)
        if t:
            c["transfer"] = t
        classes.append(c)
    if not classes:
        classes.append({"name": "kv", "pool": "page", "bytes": 4096})
    if fields:
        lines.append("state_fields:")
        lines += ["  - " + flow(f) for f in fields]
    lines.append("entry_classes:")
    lines += ["  - " + flow(c) for c in classes]
    return "\n".join(lines) + "\n"


def row_space_model(rng, name):
    e = rng.choice([0, 1, 3])
    fp8 = rng.random() < 0.5
    n_csa, n_hca, n_dense = rng.randint(1, 6), rng.randint(0, 6), rng.randint(0, 3)
    layers = [0] * n_dense + [4] * n_csa + [128] * n_hca
    rng.shuffle(layers)
    lines = [f"name: {name}", f"params: {{e: {e}}}", "block_size: 256",
             "sliding_window: 128", "speculation_depth: e", "planes:"]
    if fp8:
        lines += ["  - {name: nope, row_bytes: 512, dtype: fp8_e4m3}",
                  "  - {name: rope, row_bytes: 128, dtype: bf16}"]
    else:
        lines += ["  - {name: main, row_bytes: 1024, dtype: bf16}"]
    lines.append("layers: [" + ", ".join(map(str, layers)) + "]")
    lines.append("state_fields:")
    lines.append("  - {name: csa_kv, class: state, layers: layers_csa, shape: [8 + e, 1024], dtype: f32}")
    if rng.random() < 0.5:
        lines.append("  - {name: csa_score, class: state, layers: layers_csa, shape: [8 + e, 256], "
                     "dtype: f32, fill: -inf}")
    if n_hca and rng.random() < 0.7:
        lines.append("  - {name: hca_kv, class: state, layers: layers_hca, shape: [128 + e, 512], "
                     "dtype: f32, in_checkpoint: false}")
    lines.append("entry_classes:")
    lines.append("  - {name: kv, pool: page, bytes: derived}")
    if rng.random() < 0.5:
        lines.append("  - {name: kv, pool: page, bytes: layers_csa * 64 * 132}")
    c = {"name": "state", "pool": "state", "bytes": "derived",
         "entries_per_req": rng.choices([1, 2], weights=[9, 1])[0]}
    t = rng.choice([None, {"kind": "copy", "layout_id": "dsv4-test"}, {"kind": "none"},
                    {"kind": "fork", "tokens": 1}])
    if t:
        c["transfer"] = t
    lines.append("  - " + flow(c))
    if rng.random() < 0.15:  # a second STATE class beside the slot
        lines.append("  - " + flow({"name": "extra", "pool": "state", "bytes": 4096,
                                     "entries_per_req": 1,
                                     "transfer": {"kind": "fork", "tokens": 1}}))
    return "\n".join(lines) + "\n"


POSITION = re.compile(r"^\S*case_\d+\.yaml:\d+:\d+: error: ")


def compile_case(poolc, work, i, text, budget, seqs):
    src = os.path.join(work, f"case_{i}.yaml")
    out = os.path.join(work, f"case_{i}.poolpack")
    with open(src, "w") as f:
        f.write(text)
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([poolc, src, "--budget", budget, "--max-num-seqs", str(seqs),
                        "--targets", "host", "-o", out], capture_output=True, text=True)
    return i, src, out, r


def load(i, out):
    """Everything a serving engine does with an artifact before a request."""
    info = poolrt.read_artifact(out)
    m = poolrt.CacheManager.from_artifact(out)
    r = poolrt.Request(list(range(m.block_size)))  # one block: the pool has one
    adm = m.admission(r)
    assert adm, (out, adm)
    m.allocate(r, adm)
    m.hash_blocks(r, len(r))
    m.deallocate(r)
    with poolrt.Device("host") as dev:
        arena = dev.arena(out)
        assert arena.bytes == info.allocation_bytes
        if i % 10 == 0:
            for k in info.kernels:
                ids = []
                for slot in k["id_tuple"]:
                    ids.append(len(ids) % max(1, slot["id_max"]))
                if len(set(ids)) < len(ids) or any(t["id_max"] < 1 for t in k["id_tuple"]):
                    continue  # one id space too small for a distinct tuple
                if k["staging_stride"]:
                    with arena.staging(k["name"]) as buf:
                        arena.launch(k["name"], ids, staging=buf)
                else:
                    arena.launch(k["name"], ids)
        arena.close()
    if i % 25 == 0:
        # The serving loop without the reference model (a demonstration
        # model with needs of its own: a field for each compressor); the
        # checkpoint kernels still run.
        eng = poolrt.ServeEngine(out, reference_model=False)
        eng.submit_trace("multi-turn:conversations=2,turns=2,system-tokens=16,user-min=4,"
                         "user-max=8,output-min=1,output-max=3")
        eng.run()
        snap = eng.snapshot()
        assert snap["requests_finished"] + snap["requests_refused"] == 4, snap


def main():
    poolc, work, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(work, exist_ok=True)
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        text = row_space_model(rng, f"rs{i}") if rng.random() < 0.3 else explicit_model(rng, f"m{i}")
        cases.append((i, text, rng.choice(BUDGETS), rng.randint(1, 8)))
    compiled = refused = 0
    failures = []
    reasons = {}
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = [pool.submit(compile_case, poolc, work, *c) for c in cases]
        for fut in futures:
            i, src, out, r = fut.result()
            if r.returncode == 0:
                compiled += 1
                try:
                    load(i, out)
                except Exception as e:  # the runtime refused what the compiler wrote
                    failures.append(f"{src}: compiled, but the runtime refused it: "
                                    f"{type(e).__name__}: {e}")
            elif r.returncode == 1:
                refused += 1
                first = r.stderr.splitlines()[0] if r.stderr else ""
                why = re.sub(r"[0-9]+", "N", first.split(" error: ", 1)[-1])[:70]
                reasons[why] = reasons.get(why, 0) + 1
                if not POSITION.match(first):
                    failures.append(f"{src}: refused without a position: {first!r}")
                if os.path.exists(out):
                    failures.append(f"{src}: refused, but {out} was written")
            else:
                failures.append(f"{src}: poolc exited {r.returncode}: {r.stderr[-300:]}")
            if os.path.exists(out):
                os.remove(out)
    print(f"compile-load property: {n} declarations, {compiled} compiled and loaded, "
          f"{refused} refused at a position, {len(failures)} disagreements")
    for why, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  refused {count:4d}x: {why}")
    for f in failures[:20]:
        print("  " + f)
    if compiled < n // 20 or refused < n // 20:
        print("  too few of one outcome: the generator no longer covers both sides")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
