"""pool-serve from the outside: a real HTTP client scrapes /metrics during a
replay and parses it as Prometheus text; bad input gets a clear error and a
non-zero exit with nothing half-written; the shared-prefix trace reports its
hit rate against the trace's own ceiling.

Environment: POOL_SERVE (the binary), POOLC, POOLC_MODELS (models/),
POOLC_BENCH (bench/), SERVE_WORK (a scratch directory).
"""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

SERVE = os.environ["POOL_SERVE"]
POOLC = os.environ["POOLC"]
MODELS = os.environ["POOLC_MODELS"]
BENCH = os.environ["POOLC_BENCH"]
WORK = os.environ["SERVE_WORK"]


def compile_model(name, budget="2GiB", seqs=16):
    out = os.path.join(WORK, name + ("" if budget == "2GiB" else "-" + budget) + ".poolpack")
    if not os.path.exists(out):
        subprocess.run([POOLC, os.path.join(MODELS, name + ".yaml"), "--budget", budget,
                        "--max-num-seqs", str(seqs), "--targets", "host", "-o", out],
                       check=True)
    return out


@pytest.fixture(scope="module")
def llama():
    os.makedirs(WORK, exist_ok=True)
    return compile_model("llama-3.1-8b")


@pytest.fixture(scope="module")
def v4():
    os.makedirs(WORK, exist_ok=True)
    return compile_model("deepseek-v4-flash-dspark-bf16")


def serve(*args, check=True):
    p = subprocess.run([SERVE, "replay", *args, "--progress", "none"],
                       capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("pool-serve failed: " + p.stderr)
    return p


def families(text):
    """Parses Prometheus text; every sample of a family with a TYPE line."""
    fams = {}
    for fam in text_string_to_metric_families(text):
        fams[fam.name] = fam
    # Our own strictness on top of the parser: every sample line is
    # `name{labels} integer` after its family's HELP and TYPE.
    declared = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            declared.add(line.split()[2])
            continue
        if line.startswith("#") or not line:
            continue
        m = re.fullmatch(r'([a-z_:]+)(\{[a-z_]+="[a-z0-9_]+"(,[a-z_]+="[a-z0-9_]+")*\})? (-?\d+)',
                         line)
        assert m, "not a sample line: %r" % line
        assert m.group(1) in declared, "sample before its TYPE: %r" % line
    return fams


def value(fams, name, **labels):
    # The parser drops a counter's _total suffix from the family name.
    fam = fams.get(name) or fams.get(name.removesuffix("_total"))
    assert fam is not None, name + " missing"
    for s in fam.samples:
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError("%s%s missing" % (name, labels))


def test_metrics_scraped_during_replay(llama):
    summary = os.path.join(WORK, "scrape-summary.json")
    p = subprocess.Popen(
        [SERVE, "replay", "multi-turn:conversations=200,turns=4,output-max=64",
         "--artifact", llama, "--listen", "127.0.0.1:0", "--linger-ms", "3000",
         "--summary", summary, "--progress", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", line)
        assert m, "no metrics line: %r" % line
        base = "http://127.0.0.1:%s" % m.group(1)
        scrapes = []
        deadline = time.time() + 60
        while time.time() < deadline:
            with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
                assert r.status == 200
                assert r.headers["Content-Type"].startswith("text/plain")
                fams = families(r.read().decode())
            scrapes.append(fams)
            done = value(fams, "poolserve:requests_total", outcome="finished")
            if done == 800:
                break
            time.sleep(0.01)
        assert len(scrapes) >= 2
        # At least one scrape saw the replay in flight.
        assert any(value(f, "poolserve:requests_total", outcome="finished") < 800
                   for f in scrapes), "every scrape came after the replay"
        # Counters never go backwards between scrapes.
        for name, labels in [("poolserve:prefix_cache_queries_total", {}),
                             ("poolserve:prefix_cache_hits_total", {}),
                             ("poolserve:generation_tokens_total", {}),
                             ("poolserve:requests_total", {"outcome": "finished"})]:
            seq = [value(f, name, **labels) for f in scrapes]
            assert seq == sorted(seq), name
        with urllib.request.urlopen(base + "/debug/cache_stats", timeout=5) as r:
            stats = json.loads(r.read().decode())
        last = scrapes[-1]
    finally:
        out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    s = json.load(open(summary))
    assert s["requests"]["finished"] == 800
    assert value(last, "poolserve:prefix_cache_hits_total") == s["hit_tokens"] > 0
    assert value(last, "poolserve:prefix_cache_queries_total") >= s["prompt_tokens"]
    assert value(last, "poolserve:generation_tokens_total") == s["generated_tokens"]
    assert value(last, "poolserve:blocks", state="total") > 0
    assert stats["ranks"] == 1 and stats["cached_tokens"] == s["hit_tokens"]
    assert stats["full_tokens"] == s["cache_stats"]["full_tokens"]


def test_ranks_split_conversations_and_their_counters_sum(v4):
    """--ranks 3: three engines on their own threads; /metrics has every
    sample once per rank, /debug/cache_stats sums them, the summary counts
    them together, and the outputs equal a one-rank replay's (a request's
    answer does not depend on the rank that runs it)."""
    trace = "multi-turn:conversations=30,turns=3,system-tokens=256,output-max=16"
    one = os.path.join(WORK, "ranks1.jsonl")
    serve(trace, "--artifact", v4, "--num-spec", "3", "--outputs", one)
    three, summary = os.path.join(WORK, "ranks3.jsonl"), os.path.join(WORK, "ranks3.json")
    for f in (three, summary):  # a previous run's would be read as this one's
        if os.path.exists(f):
            os.remove(f)
    p = subprocess.Popen(
        [SERVE, "replay", trace, "--artifact", v4, "--num-spec", "3", "--ranks", "3",
         "--listen", "127.0.0.1:0", "--linger-ms", "60000", "--outputs", three,
         "--summary", summary, "--progress", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"127\.0\.0\.1:(\d+)/metrics", p.stderr.readline())
        assert m
        base = "http://127.0.0.1:%s" % m.group(1)
        # The summary is written before the linger: wait for it, then scrape.
        deadline = time.time() + 120
        while not os.path.exists(summary) and time.time() < deadline:
            time.sleep(0.05)
        with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
            fams = families(r.read().decode())
        with urllib.request.urlopen(base + "/debug/cache_stats", timeout=5) as r:
            stats = json.loads(r.read().decode())
    finally:
        p.kill()
        p.communicate()
    s = json.load(open(summary))
    assert s["ranks"] == 3 and s["requests"]["finished"] == 90
    hits = [value(fams, "poolserve:prefix_cache_hits_total", rank=str(r)) for r in range(3)]
    finished = [value(fams, "poolserve:requests_total", rank=str(r), outcome="finished")
                for r in range(3)]
    assert finished == [30, 30, 30]  # 30 conversations of 3 turns, dealt round-robin
    assert sum(hits) == s["hit_tokens"] > 0 and min(hits) > 0
    with pytest.raises(AssertionError):
        value(fams, "poolserve:requests_total", rank="3")
    assert stats["ranks"] == 3 and len(stats["per_rank"]) == 3
    for key in ("full_tokens", "cached_tokens", "checkpoints_kept"):
        assert stats[key] == sum(r[key] for r in stats["per_rank"]), key
    assert stats["cached_tokens"] == s["hit_tokens"]
    assert open(one).read() == open(three).read()


def test_ranks_out_of_range_refused(llama):
    for bad in ("0", "65", "x"):
        p = serve("multi-turn:conversations=2", "--artifact", llama, "--ranks", bad, check=False)
        assert p.returncode != 0 and "--ranks" in p.stderr, p.stderr


def test_busy_port_is_a_clear_error(llama):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    try:
        p = serve("multi-turn:conversations=2,turns=1", "--artifact", llama,
                  "--listen", "127.0.0.1:%d" % port, check=False)
    finally:
        sock.close()
    assert p.returncode == 1
    assert "error: cannot listen on 127.0.0.1:%d" % port in p.stderr


def test_malformed_trace_writes_nothing(llama, tmp_path):
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}\n'
                     '{"timestamp": 1, "input_length": "ten", "output_length": 2, "hash_ids": [1]}\n')
    summary = tmp_path / "summary.json"
    summary.write_text("previous run\n")
    p = serve(str(trace), "--artifact", llama, "--summary", str(summary),
              "--outputs", str(tmp_path / "out.jsonl"), check=False)
    assert p.returncode == 1
    assert "%s:2: error: 'input_length' must be an integer" % trace in p.stderr
    assert summary.read_text() == "previous run\n"
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("args,words", [
    (["--device", "cuda"], "cuda"),
    (["--num-spec", "9"], "speculative tokens per step"),
    (["--max-num-seqs", "100000"], "compiled for at most 16"),
])
def test_refusals(llama, args, words):
    p = serve("multi-turn:conversations=2,turns=1", "--artifact", llama, *args, check=False)
    assert p.returncode != 0 and words in p.stderr, p.stderr


def test_a_directory_is_not_a_trace(llama, tmp_path):
    p = serve(str(tmp_path), "--artifact", llama, check=False)
    assert p.returncode == 1
    assert "%s: error: is a directory, not a trace" % tmp_path in p.stderr


def test_corrupt_artifact(tmp_path, llama):
    bad = tmp_path / "bad.poolpack"
    data = bytearray(open(llama, "rb").read())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    p = serve("multi-turn:conversations=2,turns=1", "--artifact", str(bad), check=False)
    assert p.returncode == 1 and "error:" in p.stderr and "checksum" in p.stderr


def test_refused_requests_are_counted(llama, tmp_path):
    out = tmp_path / "out.jsonl"
    summary = tmp_path / "s.json"
    serve("multi-turn:conversations=4,turns=2,system-tokens=700", "--artifact", llama,
          "--max-model-len", "600", "--outputs", str(out), "--summary", str(summary))
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(lines) == 8 and all(l["status"] == "refused" for l in lines)
    assert "the model holds at most 600" in lines[0]["reason"]
    assert json.load(open(summary))["requests"]["refused"] == 8


def test_prefix_trace_hit_rate_against_its_ceiling(v4, tmp_path):
    trace = tmp_path / "prefix.txt"
    subprocess.run([sys.executable, os.path.join(BENCH, "make_prefix_trace.py"),
                    "--requests", "300", "--docs", "16", "--doc-blocks", "8",
                    "--tail-max", "4", "--concurrency", "8", "-o", str(trace)], check=True)
    runs = {}
    for arm, flags in [("on", []), ("off", ["--no-prefix-cache"])]:
        out, summary = tmp_path / (arm + ".jsonl"), tmp_path / (arm + ".json")
        serve(str(trace), "--artifact", v4, "--num-spec", "3", "--checkpoint-interval", "256",
              "--outputs", str(out), "--summary", str(summary), *flags)
        runs[arm] = (out.read_bytes(), json.load(open(summary)))
    s = runs["on"][1]
    print("\nshared prefix trace (300 requests, V4-Flash DSpark bf16, 3 drafts): "
          "hit %.1f%% against a ceiling of %.1f%% (%.1f%% of it)"
          % (100 * s["hit_rate"], 100 * s["ceiling_hit_rate"], 100 * s["hit_vs_ceiling"]))
    assert s["trace"]["format"] == "prefix" and s["requests"]["finished"] == 300
    assert s["preemptions"] == 0  # (a recompute re-admits, and would count twice)
    assert 0 < s["hit_rate"] <= s["ceiling_hit_rate"] <= 1
    assert runs["on"][0] == runs["off"][0], "outputs differ with the cache on and off"


def test_hash_schemes_serve_alike(v4, tmp_path):
    # The chain names prefixes; which one names them changes no decision:
    # the reference's xxh64 and the default xxh3 give the same outputs and
    # the same hits, and the summary says which ran.
    runs = {}
    for scheme in ["xxh3", "xxh64"]:
        out, summary = tmp_path / (scheme + ".jsonl"), tmp_path / (scheme + ".json")
        serve("multi-turn:conversations=6,turns=3,system-tokens=300", "--artifact", v4,
              "--checkpoint-interval", "256", "--block-hash", scheme,
              "--outputs", str(out), "--summary", str(summary))
        runs[scheme] = (out.read_bytes(), json.load(open(summary)))
    assert runs["xxh3"][1]["block_hash"] == "xxh3"
    assert runs["xxh64"][1]["block_hash"] == "xxh64"
    assert runs["xxh3"][0] == runs["xxh64"][0]
    assert runs["xxh3"][1]["hit_rate"] > 0
    assert runs["xxh3"][1]["hit_rate"] == runs["xxh64"][1]["hit_rate"]
    p = serve("multi-turn:conversations=2,turns=1", "--artifact", v4, "--block-hash", "md5",
              check=False)
    assert p.returncode != 0 and "--block-hash" in p.stderr, p.stderr


# --- the same engine from Python (poolrt.ServeEngine) -----------------------

def test_python_steps_the_ladder_walk():
    import poolrt
    qwen = compile_model("qwen3.5-27b")
    # The reference's placement over fork groups (the default's walk is
    # serve_e2e's placementWalk).
    e = poolrt.ServeEngine(qwen, checkpoint_interval=64, max_num_seqs=1,
                           checkpoint_at=["ladder"], fork_checkpoints="groups")
    prompt = [(7 * i + 3) % 50000 for i in range(1250)]
    e.submit([{"prompt": prompt, "max_output": 4, "name": "r%d" % i} for i in range(3)])
    kinds = []
    while e.step():
        kinds.append(e.last_step["prefill"])
    out = e.outcomes
    assert [o["hit_tokens"] for o in out] == [0, 1216, 1248]
    assert out[0]["output"] == out[1]["output"] == out[2]["output"]
    assert len(out[0]["output"]) == 4 and all(o["finished"] for o in out)
    assert True in kinds and False in kinds
    snap = e.snapshot()
    assert snap["fork_copies"] >= 2 and snap["demands_recorded"] == 1
    assert "qwen3.5-27b on host: 3 requests, 3 finished" in repr(e)


def test_python_follow_ups_hit_the_answer(v4):
    import poolrt
    runs = []
    for caching in (True, False):
        # No drafts: every decode step commits one token, so decode lands on
        # the 768 boundary and keeps a checkpoint there (a speculative step
        # may step over it).
        e = poolrt.ServeEngine(v4, num_spec=0, checkpoint_interval=256,
                               prefix_caching=caching)
        first = [(11 * i) % 40000 for i in range(700)]
        e.submit([{"prompt": first, "max_output": 300},
                  {"prompt": [5, 6, 7], "max_output": 8, "follows": 0}])
        e.run()
        runs.append(e.outcomes)
    on, off = runs
    # The follow-up's prompt is the first prompt and its generated answer:
    # with the cache on it resumes at 768, past the 700-token prompt, on a
    # block and a checkpoint decode published.
    assert on[1]["hit_tokens"] == 768 and off[1]["hit_tokens"] == 0
    assert on[1]["prompt_tokens"] == 700 + 300 + 3
    assert [(o["output"], o["state_checksum"]) for o in on] == \
           [(o["output"], o["state_checksum"]) for o in off]


def test_python_refuses_bad_requests(llama):
    import poolrt
    e = poolrt.ServeEngine(llama)
    with pytest.raises(TypeError, match=r"requests\[0\]\['prompt'\]\[1\] must be an int"):
        e.submit([{"prompt": [1, "x"], "max_output": 2}])
    with pytest.raises(ValueError, match=r"requests\[0\]\['max_output'\] must be >= 1"):
        e.submit([{"prompt": [1], "max_output": 0}])
    with pytest.raises(ValueError, match=r"unknown key 'promt'"):
        e.submit([{"promt": [1], "max_output": 2}])
    with pytest.raises(ValueError, match=r"'follows'\] must name an earlier request"):
        e.submit([{"prompt": [1], "max_output": 2, "follows": 0}])
    with pytest.raises(ValueError, match=r"outside \[0, 2\^31\)"):
        e.submit([{"prompt": [-1], "max_output": 2}])
    with pytest.raises(ValueError, match="speculative"):
        poolrt.ServeEngine(llama, num_spec=2)
    with pytest.raises(ValueError, match=r"t\.jsonl|cannot open"):
        e.submit_trace(os.path.join(WORK, "missing.jsonl"))
    assert e.snapshot()["requests_total"] == 0  # nothing half-submitted


def test_python_engine_through_the_model_kernel():
    """ServeEngine(model_kernel=...): the kernel built against the bundled
    header gives the reference model's outputs; on an artifact of another
    budget it is refused with the fingerprint in the message."""
    import poolrt
    kdir = os.environ["POOLMODEL_KERNEL_DIR"]
    lib = os.path.join(kdir, "libpoolmodel-qwen3.5-27b.so")
    art = compile_model("qwen3.5-27b", os.environ.get("POOLMODEL_BUDGET", "4GiB"),
                        int(os.environ.get("POOLMODEL_SEQS", "16")))
    trace = "multi-turn:conversations=12,turns=3,system-tokens=256,output-max=16"
    outs = []
    for kernel in ("", lib):
        e = poolrt.ServeEngine(art, checkpoint_interval=64, model_kernel=kernel)
        e.submit_trace(trace)
        e.run()
        outs.append([(o["output_checksum"], o["state_checksum"]) for o in e.outcomes])
    assert outs[0] == outs[1] and len(outs[0]) == 36
    other = compile_model("qwen3.5-27b", "3GiB", 16)
    with pytest.raises(ValueError, match="was compiled against layout 0x[0-9a-f]{16}"):
        poolrt.ServeEngine(other, model_kernel=lib)
    with pytest.raises(ValueError, match="cannot load"):
        poolrt.ServeEngine(art, model_kernel=os.path.join(WORK, "no-such-kernel.so"))
