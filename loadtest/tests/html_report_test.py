#!/usr/bin/python3
"""onyx-load's HTML report, opened by headless Chromium (Debian's chromium).

usage: html_report_test.py --onyxd BIN --proto-dir DIR --repo DIR --onyx-load BIN [--chromium BIN] [--keep DIR]

Runs a three-level rate sweep against onyxd with --metrics-url and --html,
then checks that
- the file is self-contained: no <script>, no src/href/url() reference, and
  a Content-Security-Policy that forbids every fetch;
- Chromium's DOM of the page holds every chart, each with data points (a
  <polyline data-points=N>, bars or waterfall segments);
- a screenshot taken by Chromium shows the charts: pixels in the colours of
  the p50 (blue), p99 (red) and ok/s (green) series;
- the page fetched nothing: Chromium's network log (--log-net-log) holds
  no request the page initiated (Chromium's own background requests carry
  no initiator and are not counted); a control page with one <img> from
  the network proves the check sees a page's fetch. Every request goes to a
  proxy that is a closed door of this test, so nothing leaves the machine.
Exit 77 (skipped) when Chromium is not installed.
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import python_client_test as e2e  # noqa: E402
import load_harness as h  # noqa: E402

CHARTS = ["latency_over_time", "throughput_over_time", "errors_inflight_over_time", "percentile_curve",
          "histogram", "sweep_curve", "server_load", "server_memory", "waterfall"]
COLOURS = {"p50 blue": (0x1f, 0x77, 0xb4), "p99 red": (0xd6, 0x27, 0x28), "ok/s green": (0x2c, 0xa0, 0x2c)}


class Proxy:
    """A listening socket that closes every connection: where Chromium's
    requests go instead of the network."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stopped = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.stopped:
                return
            self.connections += 1
            conn.close()

    def stop(self):
        self.stopped = True
        self.sock.close()


def chromium(binary, proxy, tmp, url, *extra):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
           "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
           "--user-data-dir=" + os.path.join(tmp, "profile"), "--hide-scrollbars",
           "--proxy-server=http://127.0.0.1:%d" % proxy.port, "--proxy-bypass-list=<-loopback>"] + list(extra) + [url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def colour_counts(path):
    """Pixels within 24 levels per channel of each series colour."""
    import numpy as np
    from PIL import Image
    pixels = np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)
    return {name: int((np.abs(pixels - np.array(c, dtype=np.int16)).max(axis=2) <= 24).sum())
            for name, c in COLOURS.items()}


def page_fetches(netlog):
    """URLs the page asked for, from Chromium's --log-net-log: requests with an
    initiator (the page's origin, "null" for a file:// page). Chromium's own
    background requests (update checks, network time) have "not an origin"."""
    import json
    with open(netlog) as f:
        log = json.load(f)
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params and \
                params.get("initiator") != "not an origin":
            urls.append(params.get("url"))
    return urls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--onyxd", "--proto-dir", "--repo", "--onyx-load"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--keep", help="copy the report and screenshot here")
    args = ap.parse_args()
    if not os.path.exists(args.chromium):
        print("SKIP html_report: chromium is not installed (scripts/install-deps.sh installs it)")
        return 77
    with tempfile.TemporaryDirectory(prefix="onyx_load_html_") as tmp:
        mods = e2e.stubs_in(args.proto_dir, tmp)
        if mods is None:
            return 1
        proc, address, metrics, failure = e2e.launch_onyxd(args.onyxd, args.repo, mods, tmp)
        report = os.path.join(tmp, "report.html")
        try:
            if failure is not None:
                return 1
            run = h.run_load(args.onyx_load, ["--target", address, "--model", "mlp", "--rate", "100:300:+100",
                                              "--duration", "2s", "--warmup", "0.5s", "--metrics-url",
                                              "http://%s/metrics" % metrics, "--html", report,
                                              "--max-late-share", "100%"], json_report=False)
        finally:
            if proc is not None:
                e2e.stop(proc)
        if run.rc != 0 or not os.path.exists(report):
            print("FAIL run: " + run.describe())
            return 1
        return check_report(args, tmp, report)


def check_report(args, tmp, report):
    def static():
        with open(report) as f:
            page = f.read()
        if re.search(r"<script|\bsrc\s*=|\bhref\s*=|url\(|@import", page, re.I):
            return "the page has a script or an external reference"
        if "Content-Security-Policy" not in page or "default-src 'none'" not in page:
            return "no Content-Security-Policy forbidding fetches"
        return None

    proxy = Proxy()
    shot = os.path.join(tmp, "shot.png")
    state = {}

    def dom():
        res = chromium(args.chromium, proxy, tmp, "file://" + report, "--dump-dom")
        page = res.stdout
        problems = []
        for chart in CHARTS:
            m = re.search(r'<svg[^>]*id="%s".*?</svg>' % chart, page, re.S)
            if not m:
                problems.append("%s: not in the DOM" % chart)
                continue
            points = sum(int(n) for n in re.findall(r'data-points="(\d+)"', m.group(0)))
            if points == 0:
                problems.append("%s: no data points" % chart)
            state[chart] = points
        print("  data points per chart: %s" % state)
        return "; ".join(problems) or None

    def screenshot():
        res = chromium(args.chromium, proxy, tmp, "file://" + report, "--screenshot=" + shot, "--window-size=1200,5600")
        if not os.path.exists(shot):
            return "no screenshot: %s" % res.stderr[-400:]
        counts = colour_counts(shot)
        print("  screenshot pixels: %s" % counts)
        missing = [name for name, n in counts.items() if n < 150]
        return "the screenshot lacks the %s series" % ", ".join(missing) if missing else None

    def no_fetch():
        log = os.path.join(tmp, "report.netlog.json")
        chromium(args.chromium, proxy, tmp, "file://" + report, "--dump-dom", "--log-net-log=" + log)
        fetched = page_fetches(log)
        if fetched:
            return "the report fetched %s" % fetched
        control = os.path.join(tmp, "control.html")
        with open(control, "w") as f:
            f.write('<html><body><img src="http://onyx-load-control.invalid/x.png"></body></html>')
        log = os.path.join(tmp, "control.netlog.json")
        chromium(args.chromium, proxy, tmp, "file://" + control, "--dump-dom", "--log-net-log=" + log)
        if "http://onyx-load-control.invalid/x.png" not in page_fetches(log):
            return "the control page's fetch is not in its network log: the check would miss a fetch"
        return None

    try:
        status = h.run_cases([("self_contained", static), ("charts_hold_data", dom), ("screenshot_shows_charts",
                                                                                       screenshot),
                              ("fetched_nothing", no_fetch)])
    finally:
        proxy.stop()
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for f in (report, shot):
                if os.path.exists(f):
                    shutil.copy(f, args.keep)
    return status


if __name__ == "__main__":
    sys.exit(main())
