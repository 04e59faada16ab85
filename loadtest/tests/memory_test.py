#!/usr/bin/python3
"""onyx-load's memory stays flat over 60 s at its maximum rate.

usage: memory_test.py --onyx-load BIN --fake-server BIN [--seconds 60]

Runs a closed loop of 64 calls (as fast as the client and the fake server,
which answers at once, can go) for --seconds and reads onyx-load's resident
memory from its --json windows (one per second, /proc/self/statm). Passes
when the largest RSS of the last 10 s exceeds the median of seconds 5-10 by
less than 8 MiB: onyx-load keeps fixed-size histograms, never per-request
data, so hundreds of thousands of requests must not grow it. (A leak of 100
bytes per request at the ~10,000 requests/s this machine reaches would add
about 50 MB and fail it.)
"""

import argparse
import statistics
import sys

import load_harness as h


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx-load", required=True)
    ap.add_argument("--fake-server", required=True)
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()

    def case():
        server = h.FakeServer(args.fake_server, "--latency", "0s")
        try:
            run = h.run_load(args.onyx_load, ["--target", server.address, "--model", "fake", "--concurrency", "64",
                                              "--duration", "%ds" % args.seconds, "--warmup", "1s"],
                             timeout=args.seconds + 120)
        finally:
            server.stop()
        if run.report is None or run.rc != 0:
            return run.describe()
        windows = [w for w in run.report["windows"] if w["rss_bytes"] > 0]
        if len(windows) < args.seconds - 2:
            return "only %d windows" % len(windows)
        base = statistics.median(w["rss_bytes"] for w in windows[5:10])
        last = max(w["rss_bytes"] for w in windows[-10:])
        total = run.level()["all"]["ok"]
        print("  %d requests (%.0f/s); RSS %.1f MiB at 5-10 s, %.1f MiB at most in the last 10 s" % (
            total, total / args.seconds, base / 2**20, last / 2**20))
        if total < 1000 * args.seconds:
            return "only %d requests: not a maximum-rate run" % total
        if last - base >= 8 * 2**20:
            return "RSS grew by %.1f MiB" % ((last - base) / 2**20)
        return None

    return h.run_cases([("memory_flat_at_max_rate", case)])


if __name__ == "__main__":
    sys.exit(main())
