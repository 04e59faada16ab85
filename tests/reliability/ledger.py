"""A ledger of every RPC a reliability scenario sends, and the process and
metric samples its invariants are checked against, and a Canceller that
cancels client futures at scheduled times.

    ledger = Ledger()
    rid = ledger.sent("model", want=expected_array)
    ...                                   # in the RPC's done callback:
    ledger.finished(rid, "OK", got=array)  # or ledger.finished(rid, "UNAVAILABLE")
    problems = ledger.violations(allowed={"OK"})

Invariants (`violations`): each RPC got exactly one final status; every OK
output equals the reference it was sent with (rtol/atol); a status outside
`allowed` is a violation, except CANCELLED on an RPC the scenario itself
cancelled. The ledger is thread-safe: gRPC callbacks finish RPCs from its own
threads.
"""
import collections
import heapq
import os
import re
import threading
import time
import urllib.request

import numpy as np


class Ledger:
    def __init__(self, rtol=1e-4, atol=1e-5):
        self._lock = threading.Lock()
        self._next = 0
        self._model = {}
        self._want = {}
        self._cancelled = set()
        self._outcomes = collections.defaultdict(list)
        self._wrong = {}
        self._detail = {}
        self.rtol = rtol
        self.atol = atol

    def sent(self, model, want=None):
        """Records a sent RPC; returns its id."""
        with self._lock:
            rid = self._next
            self._next += 1
            self._model[rid] = model
            if want is not None:
                self._want[rid] = want
            return rid

    def cancel_requested(self, rid):
        with self._lock:
            self._cancelled.add(rid)

    def finished(self, rid, code, got=None, detail=None):
        """Records the final status name of `rid` (and its output when OK, or
        the status message when not: the first one per model and status is
        reported with the violations)."""
        wrong = None
        want = self._want.get(rid)
        if code == "OK" and want is not None:
            if got is None or np.shape(got) != np.shape(want):
                wrong = "shape %s, want %s" % (None if got is None else list(np.shape(got)), list(np.shape(want)))
            elif not np.allclose(got, want, rtol=self.rtol, atol=self.atol):
                wrong = "max |diff| %.3g" % float(np.max(np.abs(np.asarray(got, np.float64) - want)))
        with self._lock:
            self._outcomes[rid].append(code)
            if detail is not None:
                self._detail.setdefault((self._model[rid], code), detail)
            if wrong is not None:
                self._wrong[rid] = wrong

    def refused_as_expected(self, rid):
        """Records `rid` as a success without an output: a scenario's expected
        refusal (its reference, if any, no longer applies)."""
        with self._lock:
            self._want.pop(rid, None)
        self.finished(rid, "OK")

    def sent_count(self):
        with self._lock:
            return self._next

    def pending(self):
        with self._lock:
            return sum(1 for rid in range(self._next) if not self._outcomes.get(rid))

    def counts(self):
        """{(model, status): count} over finished RPCs (the first status of each)."""
        with self._lock:
            c = collections.Counter()
            for rid, outcomes in self._outcomes.items():
                if outcomes:
                    c[(self._model[rid], outcomes[0])] += 1
            return dict(c)

    def violations(self, allowed=("OK",), limit=10, include_pending=True):
        """Human-readable invariant violations, at most `limit` per kind, with
        totals. include_pending=False (while traffic still runs) leaves out
        RPCs without a status yet."""
        with self._lock:
            lost = [rid for rid in range(self._next) if not self._outcomes.get(rid)] if include_pending else []
            repeated = [rid for rid, o in self._outcomes.items() if len(o) > 1]
            unexpected = [(rid, o[0]) for rid, o in self._outcomes.items()
                          if o and o[0] not in allowed and not (o[0] == "CANCELLED" and rid in self._cancelled)]
            wrong = sorted(self._wrong.items())
            models = dict(self._model)
            details = dict(self._detail)
        problems = []
        if lost:
            problems.append("%d RPCs got no final status (first ids %s)" % (len(lost), lost[:limit]))
        if repeated:
            problems.append("%d RPCs got more than one final status (first ids %s)" % (len(repeated), repeated[:limit]))
        if unexpected:
            by_code = collections.Counter((models[rid], code) for rid, code in unexpected)
            problems.append("%d RPCs ended with an unexpected status: %s" % (
                len(unexpected), ", ".join("%s %s x%d%s" % (m, c, n, " (%r)" % details[(m, c)][:200] if (m, c) in details else "")
                          for (m, c), n in sorted(by_code.items()))))
        if wrong:
            problems.append("%d OK answers differ from the solo-run reference (first: id %d %s)" % (
                len(wrong), wrong[0][0], wrong[0][1]))
        return problems


class Canceller(threading.Thread):
    """Cancels futures at the times they were scheduled for."""

    def __init__(self):
        super().__init__(daemon=True)
        self.heap, self.cv, self.done, self.seq = [], threading.Condition(), False, 0

    def schedule(self, at, future):
        with self.cv:
            self.seq += 1
            heapq.heappush(self.heap, (at, self.seq, future))
            self.cv.notify()

    def run(self):
        with self.cv:
            while not (self.done and not self.heap):
                if not self.heap:
                    self.cv.wait(0.1)
                    continue
                at, _, future = self.heap[0]
                now = time.monotonic()
                if at > now:
                    self.cv.wait(at - now)
                    continue
                heapq.heappop(self.heap)
                future.cancel()


ProcessSample = collections.namedtuple("ProcessSample", "t rss_bytes threads fds")


def sample_process(pid, t):
    """RSS, thread count and open file descriptors of `pid` from /proc."""
    rss = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir("/proc/%d/fd" % pid))
    return ProcessSample(t, rss, threads, fds)


# gRPC 1.51 runs pools of its own that start threads on demand and keep some
# for a while: the default executor (up to twice the CPU count, kept for the
# life of the process), the timer manager (a new thread whenever no waiter is
# left when a timer fires; extras exit later) and the event engine's pool.
# Growing inside those bounds is not a leak. A thread's comm is cut at 15
# characters.
GRPC_POOL_THREADS = ("default-executo", "grpc_global_tim", "event_engine")


def grpc_pool_bound():
    return max(4, 2 * (os.cpu_count() or 1))


def thread_names(pid):
    """{thread name: count} of `pid`."""
    names = collections.Counter()
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                names[f.read().strip()] += 1
        except FileNotFoundError:  # the thread ended meanwhile
            pass
    return names


def threads_beyond_pools(pid):
    """Threads of `pid`, with each of gRPC's on-demand pools counted only past
    its bound."""
    names = thread_names(pid)
    return sum(n if name not in GRPC_POOL_THREADS else max(0, n - grpc_pool_bound()) for name, n in names.items())


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def scrape(metrics_address, timeout=5.0):
    """{(name, labels text): value} from onyxd's /metrics."""
    with urllib.request.urlopen("http://%s/metrics" % metrics_address, timeout=timeout) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and not line.startswith("#"):
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def gauge_sum(samples, name, model=None):
    """Sum of every series of metric `name` in a scrape() (only those of
    `model`, when given)."""
    label = None if model is None else 'model="%s"' % model
    return sum(v for (n, labels), v in samples.items() if n == name and (label is None or label in labels))
