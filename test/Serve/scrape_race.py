#!/usr/bin/env python3
"""pool-serve's metrics thread against its engine, for ThreadSanitizer.

  scrape_race.py POOL_SERVE ARTIFACT

Replays a multi-turn trace on two ranks (two engines stepping on their own
threads) with --listen while four client threads scrape /metrics and
/debug/cache_stats as fast as they can, until the replay ends.
Fails if pool-serve exits non-zero (TSAN_OPTIONS exitcode), prints a
ThreadSanitizer report, or no scrape landed during the replay.
"""
import re
import subprocess
import sys
import threading
import urllib.request


def main():
    serve, artifact = sys.argv[1:3]
    p = subprocess.Popen(
        [serve, "replay", "multi-turn:conversations=48,turns=3", "--artifact", artifact,
         "--ranks", "2", "--listen", "127.0.0.1:0", "--progress", "none",
         "--linger-ms", "500"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    m = re.search(r"127\.0\.0\.1:(\d+)/metrics", first)
    if not m:
        p.kill()
        sys.exit("no metrics line: %r" % first)
    base = "http://127.0.0.1:%s" % m.group(1)
    scrapes = [0]
    lock = threading.Lock()

    def scrape():
        while p.poll() is None:
            for path in ("/metrics", "/debug/cache_stats"):
                try:
                    with urllib.request.urlopen(base + path, timeout=5) as r:
                        r.read()
                    with lock:
                        scrapes[0] += 1
                except OSError:
                    pass  # the server stopped between poll() and the request

    threads = [threading.Thread(target=scrape) for _ in range(4)]
    for t in threads:
        t.start()
    out, err = p.communicate(timeout=600)
    for t in threads:
        t.join()
    err = first + err
    if "ThreadSanitizer" in err or p.returncode != 0:
        sys.stderr.write(err)
        sys.exit("pool-serve exited %d under ThreadSanitizer" % p.returncode)
    if scrapes[0] < 10:
        sys.exit("only %d scrapes landed" % scrapes[0])
    print("%d scrapes during the replay, no data race reported" % scrapes[0])


if __name__ == "__main__":
    main()
