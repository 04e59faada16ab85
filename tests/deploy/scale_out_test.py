#!/usr/bin/python3
"""deploy_scale_out: three onyxd replicas behind deploy/nginx, scraped by
deploy/prometheus, losing one replica to SIGTERM and one to SIGKILL under load.

usage: scale_out_test.py --build DIR [--source-root DIR] [--replicas container|process]
                         [--rate R]

DIR holds built onyxd, onyx, onyx-load and demo_models. Replicas are
containers of the image (runtime-prebuilt target, build_image.sh) on host
networking, addressed through ONYX_GRPC_ADDRESS / ONYX_METRICS_ADDRESS;
`--replicas process` runs the same binaries as processes where podman is
missing. Everything listens on 127.0.0.1 ports chosen free; nginx runs a copy
of deploy/nginx with only the ports changed, Prometheus a copy of
deploy/prometheus with 1 s scrape and rule intervals.

A loop stands in for Kubernetes' endpoints controller: every 0.25 s it asks
each replica `onyx health`, and marks one that is not SERVING `down` in
nginx's upstream (reload). onyx-load drives mlp through nginx in four runs:
  before   3 replicas: no failures, every replica serves;
  sigterm  replica 0 stopped (`podman stop`): no failed request (it reports
           NOT_SERVING at once, nginx drops it within its 3 s linger, then it
           drains) and it exits 0;
  sigkill  replica 1 killed (`podman kill -s KILL`): failures only UNAVAILABLE,
           at most the calls in flight on it (its share of the rate times
           the run's P99) plus nginx's max_fails per worker plus 5, all
           within 3 s, and none in the last 5 s of the run;
  after    1 replica: no failures.
Then every query deploy/grafana/panel_queries.py prints, every recording-rule
expression and every recorded series must return data from Prometheus's HTTP
API (a few requests with the `timeout` parameter 0 give the error and
rejection panels something to show). Prints a report: requests per replica,
errors by code and P99 per run. Prints PASS/FAIL per check; exits 1 on any
failure.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import python_client_test as e2e  # noqa: E402  (stubs, free ports)

LINGER_S = 3
RUN_S = {"before": 6, "sigterm": 14, "sigkill": 14, "after": 6}
EVENT_AT_S = 4  # seconds into a run (after onyx-load starts) when a replica goes

failures = []


def check(name, ok, why=""):
    print("PASS %s" % name if ok else "FAIL %s: %s" % (name, why), flush=True)
    if not ok:
        failures.append(name)
    return ok


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Replica:
    """One onyxd, as a container of `image` or as a process of `onyxd`."""

    def __init__(self, index, mode, build, image, tmp):
        self.index, self.mode, self.build, self.image = index, mode, build, image
        self.grpc_port, self.metrics_port = e2e.free_ports(2)
        self.address = "127.0.0.1:%d" % self.grpc_port
        self.metrics = "127.0.0.1:%d" % self.metrics_port
        self.name = "onyx-scale-out-%d-%d" % (os.getpid(), index)
        self.log = os.path.join(tmp, self.name + ".log")
        self.proc = None
        self.gone = False  # marked down in nginx

    def start(self):
        env = {"ONYX_GRPC_ADDRESS": self.address, "ONYX_METRICS_ADDRESS": self.metrics}
        flags = ["--shutdown-linger-seconds", str(LINGER_S), "--drain-timeout-seconds", "10"]
        if self.mode == "container":
            cmd = [os.path.join(HERE, "podman.sh"), "run", "-d", "--name", self.name, "--network", "host"]
            for k, v in env.items():
                cmd += ["-e", "%s=%s" % (k, v)]
            r = run(cmd + [self.image] + flags, timeout=120)
            if r.returncode != 0:
                raise RuntimeError("podman run %s: %s" % (self.name, r.stderr.strip()))
        else:
            full_env = dict(os.environ, **env)
            with open(self.log, "w") as log:
                self.proc = subprocess.Popen([os.path.join(self.build, "onyxd")] + flags, env=full_env,
                                             stdout=log, stderr=subprocess.STDOUT)

    def serving(self):
        r = run([os.path.join(self.build, "onyx"), "health", "--address", self.address, "--timeout", "1"],
                timeout=10)
        return r.returncode == 0

    def terminate(self):
        """SIGTERM; returns a Popen (container: `podman stop`) or None."""
        if self.mode == "container":
            return subprocess.Popen([os.path.join(HERE, "podman.sh"), "stop", "-t", "30", self.name],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.proc.send_signal(signal.SIGTERM)
        return None

    def kill(self):
        if self.mode == "container":
            run([os.path.join(HERE, "podman.sh"), "kill", "-s", "KILL", self.name], timeout=60)
        else:
            self.proc.kill()

    def exit_code(self, timeout=60):
        if self.mode == "process":
            return self.proc.wait(timeout=timeout)
        r = run([os.path.join(HERE, "podman.sh"), "wait", self.name], timeout=timeout)
        return int(r.stdout.strip() or -1)

    def logs(self):
        if self.mode == "container":
            r = run([os.path.join(HERE, "podman.sh"), "logs", self.name], timeout=30)
            return r.stdout + r.stderr
        with open(self.log, errors="replace") as f:
            return f.read()

    def remove(self):
        if self.mode == "container":
            run([os.path.join(HERE, "podman.sh"), "rm", "-f", "-t", "0", self.name], timeout=60)
        elif self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Nginx:
    """deploy/nginx/nginx.conf and onyx.conf, copied with the replicas' and the
    listener's ports; a replica marked gone gets `down`."""

    def __init__(self, root, tmp, replicas):
        self.prefix = os.path.join(tmp, "nginx")
        for d in ("logs", "temp"):
            os.makedirs(os.path.join(self.prefix, d))
        os.chmod(tmp, 0o755)
        for d in ("", "temp"):
            os.chmod(os.path.join(self.prefix, d), 0o777)  # workers run as nobody under root
        shutil.copy(os.path.join(root, "deploy/nginx/nginx.conf"), self.prefix)
        self.template = open(os.path.join(root, "deploy/nginx/onyx.conf")).read()
        self.replicas = replicas
        self.port = e2e.free_ports(1)[0]
        self.conf = os.path.join(self.prefix, "nginx.conf")
        self.bin = shutil.which("nginx") or "/usr/sbin/nginx"
        self.lock = threading.Lock()

    def render(self):
        # The replicas on the ports onyx.conf documents, replica i on 80i1.
        text, n = re.subn(r"listen 8000 http2;", "listen 127.0.0.1:%d http2;" % self.port, self.template)
        if n != 1:
            raise RuntimeError("expected 'listen 8000 http2;' once in deploy/nginx/onyx.conf, found it %d times" % n)
        for r in self.replicas:
            line = re.compile(r"server 127\.0\.0\.1:80%d1 ([^;]*);" % r.index)
            text, n = line.subn(lambda m: "server %s %s%s;" % (r.address, m.group(1), " down" if r.gone else ""), text)
            if n != 1:
                raise RuntimeError("expected one 'server 127.0.0.1:80%d1' in deploy/nginx/onyx.conf, found %d"
                                   % (r.index, n))
        with open(os.path.join(self.prefix, "onyx.conf"), "w") as f:
            f.write(text)

    def signal(self, *extra):
        return run([self.bin, "-p", self.prefix + "/", "-e", os.path.join(self.prefix, "logs/error.log"),
                    "-c", self.conf] + list(extra), timeout=30)

    def start(self):
        self.render()
        r = self.signal()
        if r.returncode != 0:
            raise RuntimeError("nginx did not start: %s" % (r.stderr.strip() or self.error_log()))

    def reload(self):
        with self.lock:
            self.render()
            r = self.signal("-s", "reload")
            if r.returncode != 0:
                raise RuntimeError("nginx -s reload: %s" % r.stderr.strip())

    def stop(self):
        self.signal("-s", "stop")

    def workers(self):
        """Worker processes: each keeps its own max_fails count (no shared zone)."""
        with open(os.path.join(self.prefix, "logs/nginx.pid")) as f:
            master = f.read().strip()
        return max(1, len(run(["pgrep", "-P", master], timeout=10).stdout.split()))

    def error_log(self):
        try:
            return open(os.path.join(self.prefix, "logs/error.log")).read()[-2000:]
        except OSError:
            return ""


class Prometheus:
    def __init__(self, root, tmp, replicas):
        self.dir = os.path.join(tmp, "prometheus")
        os.makedirs(self.dir)
        for f in ("recording_rules.yml", "alerting_rules.yml"):
            shutil.copy(os.path.join(root, "deploy/prometheus", f), self.dir)
        config = yaml.safe_load(open(os.path.join(root, "deploy/prometheus/prometheus.yml")))
        config["global"]["scrape_interval"] = "1s"
        config["global"]["evaluation_interval"] = "1s"
        jobs = config["scrape_configs"]
        if len(jobs) != 1 or len(jobs[0]["static_configs"][0]["targets"]) != 3:
            raise RuntimeError("expected one scrape job of 3 targets in deploy/prometheus/prometheus.yml")
        jobs[0]["static_configs"][0]["targets"] = [r.metrics for r in replicas]
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            yaml.safe_dump(config, f)
        self.port = e2e.free_ports(1)[0]
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + os.path.join(self.dir, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/-/ready", timeout=2)
                return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError("prometheus not ready on %s within 60 s" % self.url)

    def query(self, expr):
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError("query %r: %s" % (expr, body))
        return body["data"]["result"]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


class Endpoints(threading.Thread):
    """Marks a replica down in nginx once its grpc.health.v1 Check("") stops
    answering SERVING, as a readiness probe and the endpoints controller would.
    (In-process stubs: four `onyx health` processes a second would take a
    good share of two cores.)"""

    def __init__(self, nginx, replicas, mods):
        super().__init__(daemon=True)
        import grpc
        self.grpc, self.health_pb2 = grpc, mods["health_pb2"]
        self.nginx, self.replicas = nginx, replicas
        self.stubs = {r.index: mods["health_pb2_grpc"].HealthStub(grpc.insecure_channel(r.address)) for r in replicas}
        self.removed = {}  # replica index -> monotonic time of the reload
        self.stopping = threading.Event()
        self.error = None

    def serving(self, r):
        try:
            reply = self.stubs[r.index].Check(self.health_pb2.HealthCheckRequest(service=""), timeout=0.5)
            return reply.status == self.health_pb2.HealthCheckResponse.SERVING
        except self.grpc.RpcError:
            return False

    def run(self):
        while not self.stopping.wait(0.25):
            for r in self.replicas:
                if not r.gone and not self.serving(r):
                    r.gone = True
                    try:
                        self.nginx.reload()
                    except RuntimeError as e:
                        self.error = str(e)
                    self.removed[r.index] = time.monotonic()


def load(build, nginx, seconds, json_path, event=None):
    """onyx-load on mlp through nginx; `event` runs EVENT_AT_S seconds in.
    Returns (report's first level, windows, the event's time from the start)."""
    cmd = [os.path.join(build, "onyx-load"), "--target", "127.0.0.1:%d" % nginx.port, "--model", "mlp",
           "--rate", str(ARGS.rate), "--duration", "%ds" % seconds, "--warmup", "0s", "--timeout", "10s",
           "--quiet", "--json", json_path]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    event_at = None
    if event is not None:
        time.sleep(EVENT_AT_S)
        event_at = time.monotonic() - start
        event()
    out, _ = proc.communicate(timeout=seconds + 60)
    if not os.path.exists(json_path):
        raise RuntimeError("onyx-load exited %d without a report:\n%s" % (proc.returncode, out))
    report = json.load(open(json_path))
    return report["levels"][0]["all"], report["windows"], event_at


def p99_ms(level):
    pct = level["response"]["percentiles_ns"]
    key = next((k for k in pct if k in ("p99", "p99.0", "99")), None)
    return pct[key] / 1e6 if key else float("nan")


def errors_by_code(level):
    return {g["code"]: g["count"] for g in level["errors"]}


def provoke_rejections(replicas, mods):
    """Three requests per replica with the `timeout` parameter 0: DEADLINE_EXCEEDED
    and reason deadline_on_arrival, so the error and rejection panels have series."""
    import grpc
    import numpy as np
    pb = mods["grpc_service_pb2"]
    for r in replicas:
        with grpc.insecure_channel(r.address) as channel:
            stub = mods["grpc_service_pb2_grpc"].GRPCInferenceServiceStub(channel)
            for _ in range(3):
                req = pb.ModelInferRequest(model_name="mlp", raw_input_contents=[np.zeros((1, 16), np.float32).tobytes()])
                req.inputs.add(name="input", datatype="FP32", shape=[1, 16])
                req.parameters["timeout"].int64_param = 0
                try:
                    stub.ModelInfer(req, timeout=10)
                except grpc.RpcError as e:
                    if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                        raise RuntimeError("timeout 0 on %s: %s %s" % (r.address, e.code(), e.details()))


def check_queries(root, prom):
    panels = run([sys.executable, os.path.join(root, "deploy/grafana/panel_queries.py"), "--rate-interval", "1m"],
                 timeout=30).stdout.split("\n")
    rules = yaml.safe_load(open(os.path.join(root, "deploy/prometheus/recording_rules.yml")))
    exprs = [("panel", e) for e in panels if e.strip()]
    for group in rules["groups"]:
        for rule in group["rules"]:
            exprs.append(("rule", " ".join(rule["expr"].split())))
            exprs.append(("recorded", rule["record"]))
    empty = []
    for kind, expr in exprs:
        try:
            if not prom.query(expr):
                empty.append("%s: %s" % (kind, expr))
        except (OSError, RuntimeError) as e:
            empty.append("%s: %s (%s)" % (kind, expr, e))
    check("prometheus_queries_return_data (%d panel queries, %d rules, %d recorded series)"
          % (sum(k == "panel" for k, _ in exprs), sum(k == "rule" for k, _ in exprs),
             sum(k == "recorded" for k, _ in exprs)), not empty, "no data for:\n  " + "\n  ".join(empty))


def scenario(root, build, tmp, replicas, nginx, prom):
    for r in replicas:
        r.start()
    deadline = time.monotonic() + 120
    while not all(r.serving() for r in replicas):
        if time.monotonic() > deadline:
            raise RuntimeError("replicas not SERVING within 120 s:\n" + "\n".join(r.logs()[-1500:] for r in replicas))
        time.sleep(0.5)
    nginx.start()
    prom.start()
    os.makedirs(os.path.join(tmp, "stubs"))
    mods = e2e.generate_stubs(os.path.join(root, "proto"), os.path.join(tmp, "stubs"))
    provoke_rejections(replicas, mods)
    endpoints = Endpoints(nginx, replicas, mods)
    endpoints.start()
    runs = {}

    level, _, _ = load(build, nginx, RUN_S["before"], os.path.join(tmp, "before.json"))
    runs["before"] = level
    check("before: no failures", level["failed"] + level["dropped"] == 0, "errors %r" % errors_by_code(level))

    stopper = {}

    def stop_replica_0():
        stopper["t"] = time.monotonic()
        stopper["p"] = replicas[0].terminate()

    level, _, _ = load(build, nginx, RUN_S["sigterm"], os.path.join(tmp, "sigterm.json"), event=stop_replica_0)
    runs["sigterm"] = level
    check("sigterm: no failed request", level["failed"] + level["dropped"] == 0,
          "%d failed, %d dropped: %r" % (level["failed"], level["dropped"], errors_by_code(level)))
    left = endpoints.removed.get(0, float("inf")) - stopper.get("t", 0)
    check("sigterm: replica 0 left nginx within its %d s linger (%.1f s)" % (LINGER_S, left), left < LINGER_S,
          "marked down %.1f s after SIGTERM" % left)
    if stopper.get("p") is not None:
        stopper["p"].wait(timeout=60)
        check("sigterm: podman stop exit 0", stopper["p"].returncode == 0, stopper["p"].stderr.read())
    code = replicas[0].exit_code()
    check("sigterm: replica 0 drained and exited 0", code == 0, "exit %d; log end:\n%s" % (code, replicas[0].logs()[-800:]))

    level, windows, event_at = load(build, nginx, RUN_S["sigkill"], os.path.join(tmp, "sigkill.json"),
                                    event=replicas[1].kill)
    runs["sigkill"] = level
    errors = errors_by_code(level)
    # Calls in flight on the replica when it died (its third of the rate over
    # the run's P99, Little's law), then the calls nginx sends before it leaves
    # the upstream: max_fails (3) connection errors per worker, the upstream
    # state not being shared between workers; 5 for the reload's race.
    in_flight = int(ARGS.rate / 3 * p99_ms(level) / 1000) + 1
    bound = in_flight + 3 * nginx.workers() + 5
    failed = level["failed"] + level["dropped"]
    check("sigkill: failures only UNAVAILABLE", set(errors) <= {"UNAVAILABLE"}, "errors %r" % errors)
    check("sigkill: at most %d failures (%d in flight, nginx max_fails per worker, 5)" % (bound, in_flight),
          failed <= bound, "%d failed: %r" % (failed, errors))
    bad = [w["t_s"] for w in windows if w["failed"] + w["dropped"] > 0]
    check("sigkill: failures within 3 s", not bad or bad[-1] - bad[0] <= 3, "failing windows at %r s" % bad)
    last = max(w["t_s"] for w in windows) if windows else 0
    check("sigkill: none in the last 5 s", not bad or bad[-1] < last - 5,
          "failing windows at %r s, run ends at %s s" % (bad, last))
    check("sigkill: replica 1 left nginx", 1 in endpoints.removed, "never marked down")
    code = replicas[1].exit_code()
    check("sigkill: replica 1 died of SIGKILL", code == 137 or code == -signal.SIGKILL, "exit %d" % code)

    level, _, _ = load(build, nginx, RUN_S["after"], os.path.join(tmp, "after.json"))
    runs["after"] = level
    check("after: no failures", level["failed"] + level["dropped"] == 0, "errors %r" % errors_by_code(level))
    endpoints.stopping.set()
    endpoints.join()
    check("endpoints: nginx reloads", endpoints.error is None, endpoints.error or "")

    # Per replica, the last value each one reported (two are gone by now).
    per_replica = {}
    for s in prom.query('sum by (instance) (max_over_time(onyx_requests_total{model="mlp", code="OK"}[10m]))'):
        per_replica[s["metric"]["instance"]] = int(float(s["value"][1]))
    counts = [per_replica.get(r.metrics, 0) for r in replicas]
    check("prometheus: every replica scraped and served", all(c > 0 for c in counts),
          "OK requests per replica %r" % per_replica)
    check_queries(root, prom)

    print("\nreport (rate %d/s through nginx)" % ARGS.rate)
    for r, c in zip(replicas, counts):
        print("  replica %d %-16s %6d requests OK (onyx_requests_total, last scrape)" % (r.index, r.address, c))
    print("  %-8s %8s %8s %8s  %s" % ("run", "requests", "failed", "p99 ms", "errors by code"))
    for name, lv in runs.items():
        print("  %-8s %8d %8d %8.2f  %s" % (name, lv["ok"] + lv["failed"], lv["failed"] + lv["dropped"],
                                           p99_ms(lv), errors_by_code(lv) or "-"))


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--source-root", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--replicas", choices=("container", "process"), default="container")
    ap.add_argument("--rate", type=int, default=200)
    ARGS = ap.parse_args()
    build, root = os.path.abspath(ARGS.build), os.path.abspath(ARGS.source_root)
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="onyx-scale-out-")
    image = "localhost/onyx:scale-out-test-%d" % os.getpid()
    replicas, nginx, prom = [], None, None
    try:
        if ARGS.replicas == "container":
            r = run(["bash", os.path.join(HERE, "build_image.sh"), build, root, image], timeout=1200)
            print(r.stdout.strip())
            if r.returncode != 0:
                check("build_image", False, r.stderr.strip()[-2000:])
                return 1
        replicas = [Replica(i, ARGS.replicas, build, image, tmp) for i in range(3)]
        nginx = Nginx(root, tmp, replicas)
        prom = Prometheus(root, tmp, replicas)
        scenario(root, build, tmp, replicas, nginx, prom)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        check("scenario", False, str(e))
    finally:
        if nginx:
            nginx.stop()
        if prom:
            prom.stop()
        for r in replicas:
            r.remove()
        if ARGS.replicas == "container":
            run([os.path.join(HERE, "podman.sh"), "rmi", "-f", image], timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)
    print("scale-out test: %.0f s, %d failed" % (time.monotonic() - started, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
