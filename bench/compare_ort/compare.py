#!/usr/bin/python3
"""Runs onyx (`onyx bench`) and ONNX Runtime (ort_bench.js) side by side on the
models of gen_models.py and writes the comparison table.

usage: compare.py --onyx BIN --peer NODE_MODULES --models-dir DIR [options]
(run.sh passes these; see run.sh --help for the options.)

For each model: an agreement check (onyx run and ONNX Runtime on the same
stored batch, rtol 1e-3 / atol 1e-4, both also against torch's output), then
for each thread count and batch, `--rounds` rounds of one onyx process and one
ONNX Runtime process (order alternating per round), both pinned with taskset
to the same first N CPUs, same warm-up and iterations, every input dimension
fixed. The median of the rounds' medians is reported.
"""
import argparse
import datetime
import json
import math
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-4
# Each set's section of RESULTS.md sits between its own markers.
MARKERS = {
    "cnn": ("<!-- bench/compare_ort: begin (written by bench/compare_ort/run.sh; replaced on rerun) -->",
            "<!-- bench/compare_ort: end -->"),
    "sequence": ("<!-- bench/compare_ort sequence: begin (written by bench/compare_ort/run.sh --set sequence; "
                 "replaced on rerun) -->", "<!-- bench/compare_ort sequence: end -->"),
}
TITLES = {
    "cnn": "CNNs vs ONNX Runtime: latency, session creation, peak RSS",
    "sequence": "Transformers, recurrent and small models vs ONNX Runtime: latency, session creation, peak RSS",
}
DESCRIPTIONS = {
    "cnn": "torchvision architectures and a U-Net/FPN segmenter, random weights with calibrated-then-perturbed "
           "BatchNorm statistics, opset 17, dynamic batch",
    "sequence": "BERT-base and a 4-layer BERT (seq 128, padding mask), a 6-layer GPT-2-style decoder with its "
                "language-model head (seq 128, causal mask), ViT-B/16, 2-layer bidirectional LSTM and GRU (100 "
                "steps), a 3-layer MLP; written as Hugging Face's and torchvision's modules are, random weights, "
                "opset 17, dynamic batch and sequence; *_fused: BERT-base and the decoder with the same weights "
                "in the com.microsoft operators of ONNX Runtime's transformer optimizer (EmbedLayerNormalization, "
                "Attention, SkipLayerNormalization, BiasGelu / FastGelu); *_int8: the 4-layer BERT with its weight "
                "MatMuls dynamically quantized (int8 weights; MatMulInteger, or DynamicQuantizeMatMul for _dqmm)",
}


def int_list(text):
    try:
        values = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of integers, received '{text}'")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, received '{text}'")
    return values


def cpu_list(text):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected CPU numbers such as 0,1, received '{text}'")
    if min(values) < 0 or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected distinct CPU numbers, received '{text}'")
    return values


def positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, received '{text}'")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received '{text}'")
    return value


def run_json(cmd, env=None, timeout=1800):
    """Runs cmd; returns (parsed last stdout line, None) or (None, error text)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip())[-400:] or f"exit {p.returncode}"
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, f"no JSON line in output: {p.stdout[-200:]!r}"


class Runner:
    def __init__(self, args):
        self.args = args
        self.env = dict(os.environ, NODE_PATH=args.peer)
        self.here = os.path.dirname(os.path.abspath(__file__))

    def pin(self, threads):
        return ["taskset", "-c", ",".join(str(c) for c in self.args.cpus[:threads])]

    @staticmethod
    def fixed_dims(model):
        with open(os.path.join(os.path.dirname(model), "meta.json")) as f:
            return json.load(f).get("fixed_dims", {})

    def onyx_bench(self, model, threads, batch):
        a = self.args
        dims = [x for d, v in self.fixed_dims(model).items() for x in ("--dim", f"{d}={v}")]
        return run_json(self.pin(threads) + [a.onyx, "bench", model, "--threads", str(threads), "--batch", str(batch)]
                        + dims + ["--iterations", str(a.iterations), "--warmup", str(a.warmup), "--op-stats"])

    def ort_bench(self, model, threads, batch, inputs):
        a = self.args
        dims = [x for d, v in self.fixed_dims(model).items() for x in ("--free-dim", f"{d}={v}")]
        return run_json(self.pin(threads) + ["node", os.path.join(self.here, "ort_bench.js"), model,
                                             "--inputs", json.dumps(inputs), "--threads", str(threads),
                                             "--free-dim", f"batch={batch}", "--iterations", str(a.iterations),
                                             "--warmup", str(a.warmup)] + dims, env=self.env)

    def agreement(self, case):
        """Max |onyx - ORT|, |onyx - torch|, |ORT - torch| over every output and whether onyx agrees with ORT."""
        data = os.path.join(case, "test_data_set_0")
        model = os.path.join(case, "model.onnx")
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        torch_outs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{j}.pb")))
                      for j in range(len(meta["outputs"]))]
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run(self.pin(1) + [self.args.onyx, "run", "--model", model, "--inputs", data,
                                              "--outputs", tmp, "--threads", "1"], capture_output=True, text=True)
            if p.returncode != 0:
                return {"error": "onyx run: " + p.stderr.strip()[-300:]}
            onyx_outs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(tmp, f"output_{j}.pb")))
                         for j in range(len(meta["outputs"]))]
            specs = []
            for i, spec in enumerate(meta["inputs"]):
                stored = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
                specs.append({"name": spec["name"], "dtype": spec.get("dtype", "float32"), "dims": list(stored.shape),
                              "file": f"input_{i}.bin"})
                os.symlink(os.path.join(data, f"input_{i}.bin"), os.path.join(tmp, f"input_{i}.bin"))
            with open(os.path.join(tmp, "inputs.json"), "w") as f:
                json.dump(specs, f)
            p = subprocess.run(self.pin(1) + ["node", os.path.join(self.here, "ort_bench.js"), model, "--run", tmp],
                               capture_output=True, text=True, env=self.env)
            if p.returncode != 0:
                return {"error": "onnxruntime: " + p.stderr.strip()[-300:]}
            with open(os.path.join(tmp, "ort_outputs.json")) as f:
                ort_specs = json.load(f)
            ort_outs = [np.fromfile(os.path.join(tmp, spec["file"]), dtype=np.float32).reshape(spec["dims"])
                        for spec in ort_specs]
        result = {"onyx_vs_ort": 0.0, "onyx_vs_torch": 0.0, "ort_vs_torch": 0.0, "output_abs_max": 0.0, "agree": True}
        for onyx_out, ort_out, torch_out in zip(onyx_outs, ort_outs, torch_outs):
            if onyx_out.shape != ort_out.shape:
                return {"error": f"onyx shape {onyx_out.shape} != ORT {ort_out.shape}"}
            result["onyx_vs_ort"] = max(result["onyx_vs_ort"], float(np.abs(onyx_out - ort_out).max()))
            result["onyx_vs_torch"] = max(result["onyx_vs_torch"], float(np.abs(onyx_out - torch_out).max()))
            result["ort_vs_torch"] = max(result["ort_vs_torch"], float(np.abs(ort_out - torch_out).max()))
            result["output_abs_max"] = max(result["output_abs_max"], float(np.abs(torch_out).max()))
            result["agree"] &= bool(np.allclose(onyx_out, ort_out, rtol=RTOL, atol=meta.get("atol", ATOL)))
        return result


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def measure(runner, name, case, threads, batch, rounds):
    """Each engine's best round (best_round) and every round's line; errors as {'error': text}."""
    model = os.path.join(case, "model.onnx")
    onyx_runs, ort_runs = [], []
    for r in range(rounds):
        order = ["onyx", "ort"] if r % 2 == 0 else ["ort", "onyx"]
        for engine in order:
            if engine == "onyx":
                result, error = runner.onyx_bench(model, threads, batch)
                if error:
                    return {"error": f"onyx bench: {error}"}
                onyx_runs.append(result)
            else:
                # Same input ranges and shapes as onyx's; a first onyx run tells them.
                if not onyx_runs:
                    result, error = runner.onyx_bench(model, threads, batch)
                    if error:
                        return {"error": f"onyx bench: {error}"}
                    onyx_runs.append(result)
                result, error = runner.ort_bench(model, threads, batch, onyx_runs[0]["inputs"])
                if error:
                    return {"error": f"onnxruntime: {error}"}
                ort_runs.append(result)
        print(f"  {name} threads={threads} batch={batch} round {r + 1}: onyx {onyx_runs[-1]['median_ms']:.2f} ms, "
              f"ORT {ort_runs[-1]['median_ms']:.2f} ms", file=sys.stderr, flush=True)
    out = {"onyx": best_round(onyx_runs), "ort": best_round(ort_runs),
           "rounds": {"onyx": onyx_runs, "ort": ort_runs}}
    return out


def best_round(runs):
    """The fields of the round with the smallest median (load from other jobs
    only ever slows a round down), with the smallest session creation of all
    rounds; op_ms from that best round."""
    best = min(runs, key=lambda r: r["median_ms"])
    out = {f: best[f] for f in ["median_ms", "p90_ms", "min_ms", "peak_rss_mb", "start_rss_mb"]}
    out["session_ms"] = min(r["session_ms"] for r in runs)
    out["op_ms"] = best.get("op_ms", {})
    return out


def fmt_ms(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


class OtherLoad:
    """CPU time that processes other than this script and its children used
    while it ran: the machine's busy time (/proc/stat) minus theirs."""

    def __init__(self):
        self.start = self._sample()

    @staticmethod
    def _sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        busy = sum(fields) - fields[3] - fields[4]  # all but idle and iowait
        mine = sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                      resource.getrusage(resource.RUSAGE_CHILDREN)))
        return busy / os.sysconf("SC_CLK_TCK"), mine, datetime.datetime.now()

    def share(self):
        """Fraction of all CPUs' time used by other processes since start."""
        busy, mine, now = self._sample()
        wall = (now - self.start[2]).total_seconds() * os.cpu_count()
        return max(0.0, (busy - self.start[0]) - (mine - self.start[1])) / wall if wall > 0 else 0.0


def machine_notes():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return cpu, os.cpu_count()


def render(args, results, agreement, other_share, started, elapsed):
    settings = [(t, b) for t in args.threads for b in args.batches]
    begin, end = MARKERS[args.set]
    lines = [begin, f"## {TITLES[args.set]} ({started:%Y-%m-%d})", ""]
    lines.append(f"`{args.command}`" if args.command else "")
    cpu, cores = machine_notes()
    busy = other_share > 0.05
    lines += ["", f"{cpu}, {cores} CPUs; onyx {args.revision}; ONNX Runtime {args.ort_version} "
              f"(onnxruntime-node, CPU). Models from `bench/compare_ort/gen_models.py` ({DESCRIPTIONS[args.set]}). Each cell: {args.warmup} warm-up and "
              f"{args.iterations} timed runs per process; {args.rounds} round(s) of one onyx and one ONNX Runtime "
              f"process (order alternating), each engine's best round (smallest median) reported; both pinned with `taskset` to CPUs "
              f"{','.join(map(str, args.cpus[:max(args.threads)]))} (the first N for N threads), every input "
              f"dimension fixed (`onyx bench`'s shape overrides, ORT's `freeDimensionOverrides`), ORT with "
              f"intra-op threads N, inter-op 1, graph optimization 'all'. Ratio = onyx / ORT (below 1: onyx faster). "
              f"Run took {elapsed / 60:.1f} min; other processes used {100 * other_share:.0f}% of the machine's "
              f"CPU time meanwhile"
              + (" — **measured while the machine was busy** (other jobs shared the CPUs), so absolute times "
                 "are noisy; the alternation and best-of-rounds keep the ratios comparable." if busy else "."), ""]
    head = "| model | " + " | ".join(f"{t} thr, b{b}: onyx / ORT ms | ratio" for t, b in settings) + " |"
    lines += ["### Median latency", "", head, "|---|" + "---|---|" * len(settings)]
    ratios = {s: [] for s in settings}
    for name in args.models:
        cells = []
        for s in settings:
            r = results.get((name, *s))
            if r is None or "error" in r:
                cells += ["error", "—"]
                continue
            ratio = r["onyx"]["median_ms"] / r["ort"]["median_ms"]
            ratios[s].append(ratio)
            cells += [f"{fmt_ms(r['onyx']['median_ms'])} / {fmt_ms(r['ort']['median_ms'])}", f"{ratio:.2f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **geometric mean** | " + " | ".join(f" | **{geomean(ratios[s]):.2f}**" for s in settings) + " |")
    lines.append("")
    for t in args.threads:
        all_t = [x for s in settings if s[0] == t for x in ratios[s]]
        lines.append(f"Geometric mean of onyx / ORT at {t} thread{'s' if t > 1 else ''} (all models and batches): "
                     f"**{geomean(all_t):.2f}** ({len(all_t)} cells); slowest cell {max(all_t):.2f}."
                     if all_t else f"No results at {t} threads.")
        lines.append("")
    t0, b0 = args.threads[0], args.batches[0]
    bmax = args.batches[-1]
    lines += ["### Session creation, peak RSS, agreement, where onyx spends its time", "",
              f"Session creation at {t0} thread, batch {b0} (the smallest of the rounds). Peak RSS (VmHWM) at {t0} thread, batch {bmax}; "
              f"'added' is peak minus the process's RSS just before the session was created (node and the ORT "
              f"library for ORT, the onyx binary for onyx), the memory the engine itself took. Agreement: onyx "
              f"(`onyx run`) and ORT on the same stored batch of 2, max |onyx − ORT| (rtol {RTOL:g} / atol "
              f"{ATOL:g}), and max |onyx − torch|. Top ops: the op types (after onyx's graph rewriting) taking "
              f"the largest shares of onyx's kernel time (`onyx bench --op-stats`) at {t0} thread, batch {b0}.", "",
              "| model | session ms onyx / ORT | ratio | peak RSS MB onyx / ORT | ratio | added MB onyx / ORT | ratio "
              "| max \\|onyx − ORT\\| | agree | max \\|onyx − torch\\| | onyx's top op types |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    session_ratios, rss_ratios, added_ratios = [], [], []
    for name in args.models:
        row = [name]
        first = results.get((name, t0, b0))
        big = results.get((name, t0, bmax))
        if first and "error" not in first:
            so, sr = first["onyx"]["session_ms"], first["ort"]["session_ms"]
            session_ratios.append(so / sr)
            row += [f"{so:.0f} / {sr:.0f}", f"{so / sr:.2f}"]
        else:
            row += ["error", "—"]
        if big and "error" not in big:
            po, pr = big["onyx"]["peak_rss_mb"], big["ort"]["peak_rss_mb"]
            ao, ar = po - big["onyx"]["start_rss_mb"], pr - big["ort"]["start_rss_mb"]
            rss_ratios.append(po / pr)
            added_ratios.append(ao / ar)
            row += [f"{po:.0f} / {pr:.0f}", f"{po / pr:.2f}", f"{ao:.0f} / {ar:.0f}", f"{ao / ar:.2f}"]
        else:
            row += ["error", "—", "error", "—"]
        a = agreement.get(name, {"error": "not checked"})
        if "error" in a:
            row += [a["error"].replace("|", "/")[:120], "**no**", "—"]
        else:
            row += [f"{a['onyx_vs_ort']:.1e}", "yes" if a["agree"] else "**no**", f"{a['onyx_vs_torch']:.1e}"]
        if first and "error" not in first:
            total = sum(first["onyx"]["op_ms"].values()) or 1
            ops = sorted(first["onyx"]["op_ms"].items(), key=lambda kv: -kv[1])[:3]
            row.append(", ".join(f"{op} {100 * ms / total:.0f}%" for op, ms in ops))
        else:
            row.append("—")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", f"Geometric means, onyx / ORT: session creation **{geomean(session_ratios):.2f}**, peak RSS "
              f"**{geomean(rss_ratios):.2f}**, added memory **{geomean(added_ratios):.2f}**.", "", end]
    errors = [f"{k}: {v['error']}" for k, v in results.items() if "error" in v]
    return "\n".join(lines) + "\n", errors


def write_results(path, section, markers):
    begin, end = markers
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + section.rstrip("\n") + tail
    else:
        # First entry: after the file's introduction, before its first section
        # or the first other set's marker (a section must not land inside
        # another set's markers, where that set's rerun would replace it).
        starts = [i for i in (text.find("\n## "), text.find("\n<!-- bench/compare_ort")) if i >= 0]
        at = min(starts) + 1 if starts else len(text)
        text = text[:at] + section + "\n" + text[at:]
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--onyx", required=True)
    p.add_argument("--peer", required=True, help="node_modules holding onnxruntime-node")
    p.add_argument("--models-dir", required=True)
    p.add_argument("--models", required=True, help="comma-separated names")
    p.add_argument("--set", choices=sorted(MARKERS), default="cnn", help="which RESULTS.md section to write")
    p.add_argument("--threads", type=int_list, default=[1, 2])
    p.add_argument("--batches", type=int_list, default=[1, 8])
    p.add_argument("--iterations", type=positive, default=10)
    p.add_argument("--warmup", type=positive, default=2)
    p.add_argument("--rounds", type=positive, default=1)
    p.add_argument("--cpus", type=cpu_list, default=sorted(os.sched_getaffinity(0)))
    p.add_argument("--results", default="", help="Markdown file whose compare_ort section is replaced")
    p.add_argument("--json", default="", help="also write the raw numbers here")
    p.add_argument("--command", default="", help="the command line recorded with the table")
    p.add_argument("--revision", default="(unknown revision)")
    p.add_argument("--ort-version", default="1.30.0")
    args = p.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    if max(args.threads) > len(args.cpus):
        p.error(f"--threads {max(args.threads)} needs that many CPUs; --cpus has {len(args.cpus)}")
    runner = Runner(args)
    started = datetime.datetime.now()
    other_load = OtherLoad()
    results, agreement = {}, {}
    for name in args.models:
        case = os.path.join(args.models_dir, name)
        agreement[name] = runner.agreement(case)
        a = agreement[name]
        print(f"{name}: agreement " + (a["error"] if "error" in a else
                                       f"max |onyx-ORT| {a['onyx_vs_ort']:.2e} ({'ok' if a['agree'] else 'DISAGREE'}),"
                                       f" |onyx-torch| {a['onyx_vs_torch']:.2e}"), file=sys.stderr, flush=True)
        for t in args.threads:
            for b in args.batches:
                results[(name, t, b)] = measure(runner, name, case, t, b, args.rounds)
                if "error" in results[(name, t, b)]:
                    print(f"  {name} threads={t} batch={b}: {results[(name, t, b)]['error']}", file=sys.stderr)
    elapsed = (datetime.datetime.now() - started).total_seconds()
    section, errors = render(args, results, agreement, other_load.share(), started, elapsed)
    print(section)
    if args.results:
        write_results(args.results, section, MARKERS[args.set])
        print(f"wrote the section of {args.results}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": {f"{k[0]}/t{k[1]}/b{k[2]}": v for k, v in results.items()},
                       "agreement": agreement}, f, indent=1)
    disagree = [n for n, a in agreement.items() if "error" in a or not a["agree"]]
    for e in errors:
        print("error: " + e, file=sys.stderr)
    if disagree:
        print("outputs disagree or failed: " + ", ".join(disagree), file=sys.stderr)
    return 1 if errors or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
