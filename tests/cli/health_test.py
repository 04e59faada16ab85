#!/usr/bin/env python3
"""`onyx health` against a real onyxd: every exit code, and onyxd's
ONYX_GRPC_ADDRESS / ONYX_METRICS_ADDRESS defaults.

usage: health_test.py --onyx BIN --onyxd BIN --repo DIR

Exit codes expected (cli/health_command.cc): 0 SERVING, 1 NOT_SERVING or an
unknown model, 2 bad flags, 3 no answer (nothing listening, or a listener
that never speaks HTTP/2 within --timeout). onyxd's readiness is read from
its own log ("ready:"), not from the command under test; NOT_SERVING comes
from the SIGTERM linger and from a model not loaded under --load-mode
explicit. Prints "PASS name" / "FAIL name: reason" and "N passed, M failed".
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

READY_TIMEOUT_S = 60


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(onyx, *args, env=None):
    """(exit code, stdout, stderr, seconds) of `onyx health ARGS`."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ONYX_")}
    full_env.update(env or {})
    start = time.monotonic()
    r = subprocess.run([onyx, "health", *args], capture_output=True, text=True, timeout=30, env=full_env)
    return r.returncode, r.stdout.strip(), r.stderr.strip(), time.monotonic() - start


def expect(result, code, stdout=None, stderr_has=()):
    got, out, err, _ = result
    check(got == code, "exit %d, expected %d (stdout %r, stderr %r)" % (got, code, out, err))
    if stdout is not None:
        check(out == stdout, "stdout %r, expected %r" % (out, stdout))
    for text in stderr_has:
        check(text in err, "stderr %r lacks %r" % (err, text))


class Onyxd:
    """onyxd with stderr in a file; `env` adds variables, ONYX_* cleared first."""

    def __init__(self, binary, repo, tmp, name, args=(), env=None):
        self.log = os.path.join(tmp, name + ".log")
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ONYX_")}
        full_env.update(env or {})
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([binary, "--model-repository", repo, "--log-level", "info", *args],
                                         stdout=log, stderr=subprocess.STDOUT, env=full_env)

    def text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def wait_for(self, needle, timeout=READY_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return
            if self.proc.poll() is not None:
                raise Failure("onyxd exited %d before logging %r:\n%s" % (self.proc.returncode, needle, self.text()))
            time.sleep(0.05)
        raise Failure("onyxd did not log %r within %ds:\n%s" % (needle, timeout, self.text()))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.send_signal(signal.SIGTERM)  # the second one ends any linger
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def cases(args, tmp):
    onyx = args.onyx

    def bad_flags():
        for flags, says in [(["--timeout", "abc"], "--timeout expects seconds above 0 and at most 3600, received 'abc'"),
                            (["--timeout=0"], "received '0'"),
                            (["--timeout", "7200"], "received '7200'"),
                            (["--address", "nohost"], "--address expects HOST:PORT with a port from 1 to 65535, received 'nohost'"),
                            (["--address", "127.0.0.1:0"], "received '127.0.0.1:0'"),
                            (["--model"], "missing value for flag '--model'"),
                            (["--port", "1"], "unknown flag '--port'"),
                            (["mlp"], "unexpected argument 'mlp'")]:
            expect(health(onyx, *flags), 2, stderr_has=[says])
        expect(health(onyx, env={"ONYX_GRPC_ADDRESS": "8001"}), 2,
               stderr_has=["ONYX_GRPC_ADDRESS expects HOST:PORT", "received '8001'"])
        code, out, _, _ = health(onyx, "--help")
        check(code == 0 and "Exit codes" in out, "--help: exit %d, %r" % (code, out[:80]))

    def nothing_listening():
        result = health(onyx, "--address", "127.0.0.1:%d" % free_port(), "--timeout", "5")
        expect(result, 3, stdout="", stderr_has=["no answer from 127.0.0.1:"])
        check(result[3] < 4, "took %.1fs: a refused connection should fail at once" % result[3])

    def silent_listener_times_out():
        # Accepts TCP (the kernel's backlog) but never answers HTTP/2.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(8)
            result = health(onyx, "--address", "127.0.0.1:%d" % s.getsockname()[1], "--timeout", "1")
        expect(result, 3, stdout="", stderr_has=["within 1s (--timeout)"])
        check(0.9 <= result[3] < 5, "took %.1fs, expected about the 1 s timeout" % result[3])

    yield "bad_flags_exit_2", bad_flags
    yield "nothing_listening_exit_3", nothing_listening
    yield "silent_listener_times_out_exit_3", silent_listener_times_out

    # onyxd addressed only through the environment; a long linger keeps the
    # port open while it reports NOT_SERVING.
    grpc_port, metrics_port = free_port(), free_port()
    env = {"ONYX_GRPC_ADDRESS": "127.0.0.1:%d" % grpc_port, "ONYX_METRICS_ADDRESS": "127.0.0.1:%d" % metrics_port}
    server = Onyxd(args.onyxd, args.repo, tmp, "env", ["--shutdown-linger-seconds", "30"], env)
    here = ["--address", "127.0.0.1:%d" % grpc_port]
    try:
        def serving():
            server.wait_for("ready:")
            check("listening on 127.0.0.1:%d" % grpc_port in server.text(),
                  "onyxd did not take ONYX_GRPC_ADDRESS:\n" + server.text())
            # The listen form of the address, from the environment, as a HEALTHCHECK sees it.
            expect(health(onyx, env={"ONYX_GRPC_ADDRESS": "0.0.0.0:%d" % grpc_port}), 0, stdout="SERVING")
            expect(health(onyx, *here, "--model", "mlp"), 0, stdout="SERVING")
            expect(health(onyx, *here, "--model=cnn", "--timeout=0.5"), 0, stdout="SERVING")

        def metrics_from_environment():
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
                check(r.status == 200 and b"onyx_build_info" in r.read(), "no onyx_build_info at ONYX_METRICS_ADDRESS")

        def unknown_model():
            expect(health(onyx, *here, "--model", "nosuch"), 1, stdout="SERVICE_UNKNOWN",
                   stderr_has=["model 'nosuch'", "no such model"])

        def not_serving_after_sigterm():
            server.proc.send_signal(signal.SIGTERM)
            server.wait_for("not ready", timeout=10)
            expect(health(onyx, *here), 1, stdout="NOT_SERVING", stderr_has=["is NOT_SERVING"])
            expect(health(onyx, *here, "--model", "mlp"), 1, stdout="NOT_SERVING")
            server.proc.send_signal(signal.SIGTERM)  # ends the linger
            code = server.proc.wait(timeout=30)
            check(code == 0, "onyxd exited %d after SIGTERM" % code)
            expect(health(onyx, *here, "--timeout", "2"), 3)

        yield "serving_exit_0", serving
        yield "metrics_address_from_environment", metrics_from_environment
        yield "unknown_model_exit_1", unknown_model
        yield "not_serving_after_sigterm_exit_1", not_serving_after_sigterm
    finally:
        server.stop()

    explicit_port = free_port()
    explicit = Onyxd(args.onyxd, args.repo, tmp, "explicit",
                     ["--grpc-address", "127.0.0.1:%d" % explicit_port, "--metrics-address", "", "--load-mode", "explicit"])
    try:
        def model_not_loaded():
            explicit.wait_for("ready:")
            there = ["--address", "127.0.0.1:%d" % explicit_port]
            expect(health(onyx, *there), 0, stdout="SERVING")
            expect(health(onyx, *there, "--model", "mlp"), 1, stdout="NOT_SERVING")

        yield "model_not_loaded_exit_1", model_not_loaded
    finally:
        explicit.stop()

    def bad_environment_refused():
        bad = Onyxd(args.onyxd, args.repo, tmp, "bad_env", env={"ONYX_GRPC_ADDRESS": "8001"})
        code = bad.proc.wait(timeout=30)
        check(code == 2, "onyxd exited %d with ONYX_GRPC_ADDRESS=8001, expected 2" % code)
        check("ONYX_GRPC_ADDRESS: expected HOST:PORT" in bad.text() and "'8001'" in bad.text(),
              "message does not name the variable and value: %r" % bad.text())

    yield "onyxd_refuses_bad_environment", bad_environment_refused


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx", required=True)
    ap.add_argument("--onyxd", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in cases(args, tmp):
            try:
                case()
                print("PASS " + name)
                passed += 1
            except Failure as e:
                print("FAIL %s: %s" % (name, e))
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
