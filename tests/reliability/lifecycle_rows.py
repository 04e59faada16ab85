"""The model-lifecycle rows of the attack and fault matrix (matrix_test.py):
RepositoryModelLoad and RepositoryModelUnload racing each other from 32
threads while clients infer on the models they churn, and a model reloaded
again and again under load. Every RPC of a row goes through the ledger; an
inference answered OK must equal the model's own result (y = 3 x).
"""
import os
import random
import threading
import time

import numpy as np

import python_client_test as base

CaseFailure, check = base.CaseFailure, base.check

CHURNED = ("churn_a", "churn_b", "churn_c")
LIFECYCLE_THREADS = 32
OPS_PER_THREAD = 12
RELOADS = 10


def lifecycle_rows(m, model_bytes):
    """model_bytes: a model with input x [2, 4] and output y = 3 x."""
    SC = m.SC
    pb = m.client.pb
    x = np.arange(8, dtype=np.float32).reshape(2, 4)

    def put_on_disk(name):
        path = os.path.join(m.repo, name, "1", "model.onnx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(model_bytes)

    def infer_loop(names, stop, allowed, seen):
        """Infers on `names` in turn until `stop`; every status not in
        `allowed` is a ledger violation, every OK answer is checked."""
        i = 0
        while not stop.is_set():
            name = names[i % len(names)]
            i += 1
            rid = m.ledger.sent("row", 3.0 * x)
            req = m.client.infer_request(name, "x", "FP32", [2, 4], raw=x.tobytes(), outputs=["y"])
            try:
                y = base.output_array(m.client.stub.ModelInfer(req, timeout=30), "y")
                m.ledger.finished(rid, "OK", y)
                seen["OK"] = seen.get("OK", 0) + 1
            except m.client.grpc.RpcError as e:
                code = e.code().name
                seen[code] = seen.get(code, 0) + 1
                if e.code() in allowed:  # an allowed refusal is this row's success
                    m.ledger.refused_as_expected(rid)
                else:
                    m.ledger.finished(rid, code, detail=e.details())
            time.sleep(0.005)

    def load_unload_from_32_threads():
        for name in CHURNED:  # known to the repository from here on
            put_on_disk(name)
            m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
        stop = threading.Event()
        seen = {}
        # While a model is unloaded or unloading, inference on it is refused
        # UNAVAILABLE ("no READY version", or its batcher stopping); never
        # anything else, and never a wrong answer.
        clients = [threading.Thread(target=infer_loop, args=(list(CHURNED), stop, (SC.UNAVAILABLE,), seen))
                   for _ in range(2)]
        outcomes = []
        lock = threading.Lock()

        def churn(seed):
            rng = random.Random(seed)
            for _ in range(OPS_PER_THREAD):
                name = rng.choice(CHURNED)
                load = rng.random() < 0.5
                rid = m.ledger.sent("row")
                try:
                    if load:
                        m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
                    else:
                        m.client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=name),
                                                            timeout=60)
                    m.ledger.finished(rid, "OK")
                    code = "OK"
                except m.client.grpc.RpcError as e:
                    code = e.code().name
                    m.ledger.finished(rid, code, detail=e.details())  # loads and unloads must all succeed
                with lock:
                    outcomes.append((load, code))

        for t in clients:
            t.start()
        workers = [threading.Thread(target=churn, args=(i,)) for i in range(LIFECYCLE_THREADS)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(timeout=120)
        check(not any(t.is_alive() for t in workers), "load/unload calls still running after 120 s")
        # Every model ends loaded: inference on each must then answer OK.
        for name in CHURNED:
            m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
        time.sleep(0.2)
        stop.set()
        for t in clients:
            t.join()
        for name in CHURNED:
            y = base.output_array(m.client.infer(m.client.infer_request(name, "x", "FP32", [2, 4], raw=x.tobytes(),
                                                                        outputs=["y"])), "y")
            check(np.allclose(y, 3.0 * x), "%s after the churn: y %s" % (name, y.tolist()))
        loads = sum(1 for load, _ in outcomes if load)
        check(len(outcomes) == LIFECYCLE_THREADS * OPS_PER_THREAD, "%d of %d lifecycle calls finished" % (
            len(outcomes), LIFECYCLE_THREADS * OPS_PER_THREAD))
        check(loads > 0 and loads < len(outcomes), "loads %d of %d calls" % (loads, len(outcomes)))
        check(seen.get("OK", 0) > 0, "no inference answered during the churn: %s" % seen)
        for name in CHURNED:  # leave nothing running for the invariants' thread count
            m.client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=name), timeout=60)

    def reload_under_load():
        # RepositoryModelLoad of a loaded model replaces it; requests sent
        # meanwhile are all answered OK, by the old or the new instance.
        name = "reloaded"
        put_on_disk(name)
        m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
        stop = threading.Event()
        seen = {}
        clients = [threading.Thread(target=infer_loop, args=([name], stop, (), seen)) for _ in range(2)]
        for t in clients:
            t.start()
        try:
            for _ in range(RELOADS):
                time.sleep(0.3)
                rid = m.ledger.sent("row")
                m.client.stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=name), timeout=60)
                m.ledger.finished(rid, "OK")
            time.sleep(0.3)
        finally:
            stop.set()
            for t in clients:
                t.join()
        check(set(seen) == {"OK"} and seen["OK"] > RELOADS * 10, "answers during %d reloads: %s" % (RELOADS, seen))
        m.client.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=name), timeout=60)

    return [
        ("repository_load_unload_from_32_threads_while_inferring", load_unload_from_32_threads),
        ("repository_reload_under_load", reload_under_load),
    ]
