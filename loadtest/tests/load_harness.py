"""Shared by onyx-load's end-to-end tests: starting the fake server, running
onyx-load with --json, and reporting PASS/FAIL lines like tests/e2e does.

A case is a function returning None (pass) or a string (why it failed); it
may raise Skip(reason). run_cases() prints one line per case and returns the
exit status: 1 if any failed, 77 if every case skipped, else 0.
"""

import json
import os
import re
import select
import signal
import subprocess
import tempfile
import time


class Skip(Exception):
    pass


class FakeServer:
    """onyx_load_fake_server on a free loopback port (stopped by stop())."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, "--address", "127.0.0.1:0"] + [str(a) for a in args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        match = re.match(r"listening on (\S+)", line)
        if not match:
            self.stop()
            raise RuntimeError("fake server did not start: %r %s" % (line, self.proc.stderr.read()))
        self.address = match.group(1)
        self.port = int(self.address.rsplit(":", 1)[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Run:
    def __init__(self, rc, report, stdout, stderr, seconds):
        self.rc, self.report, self.stdout, self.stderr, self.seconds = rc, report, stdout, stderr, seconds

    def level(self, i=0):
        return self.report["levels"][i]

    def describe(self):
        return "exit %d; stderr: %s; stdout tail: %s" % (self.rc, self.stderr.strip()[-400:],
                                                          self.stdout.strip()[-600:])


def run_load(onyx_load, args, timeout=300, json_report=True):
    """Runs onyx-load --quiet with args; the parsed --json report (or None)."""
    with tempfile.TemporaryDirectory(prefix="onyx_load_test_") as tmp:
        path = os.path.join(tmp, "run.json")
        cmd = [onyx_load, "--quiet"] + [str(a) for a in args] + (["--json", path] if json_report else [])
        start = time.monotonic()
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        report = None
        if json_report and os.path.exists(path):
            with open(path) as f:
                report = json.load(f)
        return Run(res.returncode, report, res.stdout, res.stderr, time.monotonic() - start)


def ms(ns):
    return "%.1fms" % (ns / 1e6)


def within(value, want, share):
    return abs(value - want) <= share * abs(want)


def run_cases(cases, only=None):
    passed = failed = skipped = 0
    for name, fn in cases:
        if only and name not in only:
            continue
        start = time.monotonic()
        try:
            problem = fn()
        except Skip as e:
            print("SKIP %s: %s" % (name, e), flush=True)
            skipped += 1
            continue
        except Exception as e:  # noqa: BLE001 - a broken case is a failed case
            problem = "%s: %s" % (type(e).__name__, e)
        took = time.monotonic() - start
        if problem:
            print("FAIL %s (%.1fs): %s" % (name, took, problem), flush=True)
            failed += 1
        else:
            print("PASS %s (%.1fs)" % (name, took), flush=True)
            passed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if failed:
        return 1
    return 77 if skipped and not passed else 0
