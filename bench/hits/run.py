#!/usr/bin/env python3
"""Stateful hits against what the PAGE cache alone gives, side by side.

For each stateful model it compiles the model and (fork models) its stateless
twin (bench/hits/stateless_twin.py) at one budget and concurrency for the
host, replays each trace through pool-serve under two policies, and prints a
markdown table:

  today   --checkpoint-at ladder --fork-checkpoints groups: the reference's
          ladder (every 8,192 tokens) and demand rungs, a free state group
          per fork checkpoint;
  sparse  the default: checkpoints at prompt ends, branch points and
          response ends, fork images in PAGE units under the blocks' LRU.

kept = hit / twin hit for a fork model, cached / wanted (`cache_stats`) for
a copy model (DeepSeek-V4), which has no twin. The traces: a conversation
trace from bench/make_conversation_trace.py (Mooncake JSONL), pool-serve's
multi-turn generator (the next turn extends the model's own answer), and
the shared-prefix trace of bench/make_prefix_trace.py.

  python3 bench/hits/run.py [--budget 16GiB] [--seqs 16] [--out DIR]

Runs without the reference model (pool-serve --no-model): hit rates are the
cache's, the kernels still move every byte. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "bin")

FORK = ["qwen3.5-27b", "jamba-v0.1", "kimi-k3"]
COPY = ["deepseek-v4-flash-fp8"]
POLICIES = {
    "today": ["--checkpoint-at", "ladder", "--fork-checkpoints", "groups"],
    "sparse": [],
}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return p.stdout


def compile_model(yaml, out, a):
    if not os.path.exists(out):
        run([os.path.join(BIN, "poolc"), yaml, "--budget", a.budget, "--max-num-seqs",
             str(a.seqs), "--targets", "host", "-o", out])
    return out


def replay(pack, trace, extra, a, tag):
    summary = os.path.join(a.out, tag + ".summary.json")
    run([os.path.join(BIN, "pool-serve"), "replay", trace, "--artifact", pack,
         "--progress", "none", "--no-model", "--summary", summary] + extra)
    with open(summary) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", default="16GiB")
    ap.add_argument("--seqs", type=int, default=16)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-hits"))
    ap.add_argument("--models", default=",".join(FORK + COPY))
    ap.add_argument("--traces", default="conversation,multi-turn,shared-prefix")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    traces = {}
    for t in a.traces.split(","):
        if t == "conversation":
            path = os.path.join(a.out, "conversation.jsonl")
            run([sys.executable, os.path.join(ROOT, "bench", "make_conversation_trace.py"),
                 "-o", path])
            traces[t] = path
        elif t == "multi-turn":
            traces[t] = ("multi-turn:conversations=200,turns=4,user-min=200,"
                         "user-max=1500,output-min=64,output-max=512")
        elif t == "shared-prefix":
            path = os.path.join(a.out, "shared-prefix.trace")
            run([sys.executable, os.path.join(ROOT, "bench", "make_prefix_trace.py"),
                 "--requests", "1500", "--doc-blocks", "256", "-o", path])
            traces[t] = path
        else:
            sys.exit("unknown trace " + t)
    print("| trace | model | twin hit | today hit | today kept | sparse hit | sparse kept |"
          " sparse read back (prompt end / branch / response end) |")
    print("|---|---|---|---|---|---|---|---|")
    for model in a.models.split(","):
        yaml = os.path.join(ROOT, "models", model + ".yaml")
        pack = compile_model(yaml, os.path.join(a.out, model + ".poolpack"), a)
        twin_pack = None
        if model in FORK:
            twin_yaml = os.path.join(a.out, model + "-twin.yaml")
            run([sys.executable, os.path.join(ROOT, "bench", "hits", "stateless_twin.py"),
                 yaml, "-o", twin_yaml])
            twin_pack = compile_model(twin_yaml, os.path.join(a.out, model + "-twin.poolpack"), a)
        for tname, trace in traces.items():
            row = {}
            twin = None
            if twin_pack:
                twin = replay(twin_pack, trace, [], a, "%s-twin-%s" % (model, tname))
            for pol, extra in POLICIES.items():
                row[pol] = replay(pack, trace, extra, a, "%s-%s-%s" % (model, pol, tname))

            def hit(s):
                return s["cache_stats"]["hit"]

            def kept(s):
                if twin is not None:
                    return hit(s) / hit(twin) if hit(twin) > 0 else float("nan")
                c = s["cache_stats"]
                return c["cached_tokens"] / c["wanted_tokens"] if c["wanted_tokens"] else float("nan")

            f = row["sparse"]["funnel"]
            print("| %s | %s | %s | %.2f%% | %.1f%% | %.2f%% | **%.1f%%** | %d / %d / %d |" % (
                tname, model, "%.2f%%" % (100 * hit(twin)) if twin else "- (cached/wanted)",
                100 * hit(row["today"]), 100 * kept(row["today"]),
                100 * hit(row["sparse"]), 100 * kept(row["sparse"]),
                f.get("read_back_prompt_end", 0), f.get("read_back_branch", 0),
                f.get("read_back_response_end", 0)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
