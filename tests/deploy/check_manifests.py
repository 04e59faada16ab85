#!/usr/bin/python3
"""deploy_manifests: deploy/kubernetes and deploy/kserve against onyxd itself.

usage: check_manifests.py ONYXD [SOURCE_ROOT]

Renders deploy/kubernetes/kustomization.yaml as kustomize would for the
fields it uses (resources, labels, images, namespace; any other field fails
the test rather than being ignored), reads deploy/kserve/, and checks them
against the flags `ONYXD --help` lists (with their defaults), the server.yaml
keys server/config/server_config.cc accepts, onyxd's final shutdown grace in
server/main.cc, the metric names server/observability registers, and the
Dockerfile's binary path. What each check means is in its name and message.
Prints PASS/FAIL per check and exits 1 on any failure. Needs python3-yaml;
no cluster and no kubectl.
"""

import json
import os
import re
import subprocess
import sys

import yaml

import manifest_render as render

failures = []


def check(name, ok, why=""):
    print("PASS %s" % name if ok else "FAIL %s: %s" % (name, why))
    if not ok:
        failures.append(name)
    return ok


# --- what onyxd says about itself ---------------------------------------------------------------

def onyxd_help(onyxd):
    """({flag: default or None}, text) from `ONYXD --help`."""
    text = subprocess.run([onyxd, "--help"], capture_output=True, text=True, timeout=30).stdout
    flags = {}
    # A flag's entry runs from its line to the next flag's line.
    entries = re.split(r"\n(?=\s+--)", text)
    for entry in entries:
        m = re.match(r"\s*(--[a-z0-9-]+)", entry)
        if m:
            d = re.search(r"\(default ([^)]*)\)", entry)
            flags[m.group(1)] = d.group(1).strip() if d else None
    return flags, text


def server_config_keys(root):
    """Every server.yaml key path the parser accepts (CheckKeys calls)."""
    text = open(os.path.join(root, "server/config/server_config.cc"), encoding="utf-8").read()
    keys = set()
    for m in re.finditer(r"CheckKeys\(\s*\w+,\s*\{([^}]*)\},\s*source,\s*\"([^\"]*)\"\)", text, re.S):
        for key in re.findall(r"\"(\w+)\"", m.group(1)):
            keys.add(m.group(2) + key)
    return keys


def shutdown_grace_seconds(root):
    """Seconds onyxd gives gRPC to close after the drain (kShutdownGrace)."""
    text = open(os.path.join(root, "server/main.cc"), encoding="utf-8").read()
    m = re.search(r"kShutdownGrace\s*=\s*std::chrono::seconds\((\d+)\)", text)
    return int(m.group(1)) if m else None


def registered_metrics(root):
    names = set()
    folder = os.path.join(root, "server/observability")
    for name in os.listdir(folder):
        if name.endswith(".cc") and not name.endswith("_test.cc"):
            names |= set(re.findall(r"\"(onyx_[a-z0-9_]+)\"", open(os.path.join(folder, name)).read()))
    return names


def dockerfile_binary(root):
    text = open(os.path.join(root, "Dockerfile"), encoding="utf-8").read()
    m = re.search(r"^ENTRYPOINT\s+(\[.*\])\s*$", text, re.M)
    return json.loads(m.group(1))[0] if m else None


# --- onyxd's effective settings in a container ---------------------------------------------------

def flag_values(argv):
    """{--flag: value} of an onyxd command line (--flag VALUE or --flag=VALUE)."""
    values, i = {}, 0
    while i < len(argv):
        arg = str(argv[i])
        if arg.startswith("--"):
            if "=" in arg:
                name, value = arg.split("=", 1)
            else:
                name, value = arg, (str(argv[i + 1]) if i + 1 < len(argv) else None)
                i += 1
            values[name] = value
        i += 1
    return values


def port_of(address):
    m = re.search(r":(\d+)$", address or "")
    return int(m.group(1)) if m else None


def effective(flags, config, defaults):
    """grpc/metrics addresses, repository, linger and drain: flags over server.yaml over defaults."""
    shutdown = config.get("shutdown") or {}

    def pick(flag, value_from_config):
        if flag in flags:
            return flags[flag]
        if value_from_config is not None:
            return value_from_config
        return defaults.get(flag)

    return {
        "grpc_address": pick("--grpc-address", config.get("grpc_address")),
        "metrics_address": pick("--metrics-address", config.get("metrics_address")),
        "model_repository": pick("--model-repository", config.get("model_repository")),
        "linger": int(pick("--shutdown-linger-seconds", shutdown.get("linger_seconds")) or 0),
        "drain": int(pick("--drain-timeout-seconds", shutdown.get("drain_timeout_seconds")) or 0),
    }


def check_flags(where, argv, flags):
    used = [a.split("=", 1)[0] for a in map(str, argv) if a.startswith("--")]
    check("%s: uses flags" % where, bool(used), "no --flag on the command line")
    for flag in used:
        check("%s: %s exists" % (where, flag), flag in flags, "`onyxd --help` has no %s" % flag)


def check_listen(where, name, address):
    check("%s: %s listens beyond loopback" % (where, name),
          address is not None and re.match(r"^(0\.0\.0\.0|\[::\]):\d+$", address) is not None,
          "%s is %r: probes, Services and Prometheus reach the pod IP" % (name, address))


def cpu_cores(quantity):
    q = str(quantity)
    return int(q[:-1]) / 1000 if q.endswith("m") else float(q)


def check_resources(where, resources):
    req, lim = resources.get("requests") or {}, resources.get("limits") or {}
    ok = "cpu" in lim and cpu_cores(lim["cpu"]).is_integer() and cpu_cores(lim["cpu"]) >= 1
    check("%s: whole-CPU limit" % where, ok,
          "cpu limit %r: onyxd rounds the cgroup quota up to its thread count, so a fraction "
          "gives more threads than CPU time" % lim.get("cpu"))
    check("%s: cpu requests == limits" % where, "cpu" in req and cpu_cores(req["cpu"]) == cpu_cores(lim.get("cpu", -1)),
          "requests %r, limits %r: Guaranteed QoS (and CPU pinning) needs them equal" % (req.get("cpu"), lim.get("cpu")))
    check("%s: memory requests == limits" % where, "memory" in req and req.get("memory") == lim.get("memory"),
          "requests %r, limits %r" % (req.get("memory"), lim.get("memory")))


# --- Kubernetes ----------------------------------------------------------------------------------

def check_kubernetes(root, flags, config_keys, grace, metrics):
    objects = render.render(os.path.join(root, "deploy/kubernetes"))
    by_kind = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    for kind, want in [("ConfigMap", 1), ("Deployment", 1), ("Service", 2), ("HorizontalPodAutoscaler", 1),
                       ("PodDisruptionBudget", 1), ("NetworkPolicy", 1), ("ServiceMonitor", 1)]:
        check("k8s: %d %s" % (want, kind), len(by_kind.get(kind, [])) == want,
              "found %d" % len(by_kind.get(kind, [])))
    if failures:
        return

    deployment = by_kind["Deployment"][0]
    pod = deployment["spec"]["template"]
    pod_labels = pod["metadata"].get("labels") or {}
    spec = pod["spec"]
    containers = {c["name"]: c for c in spec["containers"]}
    if not check("k8s: onyxd container", "onyxd" in containers, "containers %r" % list(containers)):
        return
    c = containers["onyxd"]
    argv = list(c.get("command") or []) + list(c.get("args") or [])
    check("k8s: command is the image's onyxd", argv[:1] == [dockerfile_binary(root)],
          "command %r, Dockerfile ENTRYPOINT runs %r" % (argv[:1], dockerfile_binary(root)))
    # The demo-models init container copies the models out of onyxd's own image.
    image = c.get("image", "")
    inits_by_name = {i["name"]: i for i in spec.get("initContainers", [])}
    check("k8s: image pinned to a tag or digest", re.search(r"[:@][^/]+$", image) is not None,
          "onyxd image %r after the kustomization's images" % image)
    check("k8s: demo models come from onyxd's image", inits_by_name.get("demo-models", {}).get("image") == image,
          "demo-models runs %r, onyxd %r" % (inits_by_name.get("demo-models", {}).get("image"), image))
    check_flags("k8s onyxd", argv, flags)
    values = flag_values(argv)

    # server.yaml: the file --config names, from the ConfigMap mounted there.
    config_path = values.get("--config")
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    config = {}
    cm_source = None
    for path, mount in mounts.items():
        vol = volumes.get(mount["name"], {})
        if config_path and "configMap" in vol and config_path.startswith(path.rstrip("/") + "/"):
            rel = config_path[len(path.rstrip("/")) + 1:]
            items = vol["configMap"].get("items")
            key = next((i["key"] for i in items if i["path"] == rel), None) if items else rel
            cm = next((o for o in by_kind["ConfigMap"] if o["metadata"]["name"] == vol["configMap"]["name"]), None)
            if cm is not None and key in (cm.get("data") or {}):
                cm_source = "%s/%s" % (cm["metadata"]["name"], key)
                config = yaml.safe_load(cm["data"][key]) or {}
    check("k8s: --config names a mounted ConfigMap key", cm_source is not None,
          "--config %r is no key of a ConfigMap mounted in the container" % config_path)

    def key_paths(node, prefix=""):
        for k, v in node.items():
            yield prefix + k
            if isinstance(v, dict) and prefix + k in ("tls", "shutdown"):
                yield from key_paths(v, prefix + k + ".")
    for key in key_paths(config):
        check("k8s: server.yaml key %s" % key, key in config_keys,
              "server/config/server_config.cc does not accept it")

    eff = effective(values, config, flags)
    grpc_port, metrics_port = port_of(eff["grpc_address"]), port_of(eff["metrics_address"])
    check_listen("k8s", "grpc_address", eff["grpc_address"])
    check_listen("k8s", "metrics_address", eff["metrics_address"])
    named = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    check("k8s: containerPort grpc", named.get("grpc") == grpc_port, "ports %r, onyxd listens on %s" % (named, grpc_port))
    check("k8s: containerPort metrics", named.get("metrics") == metrics_port,
          "ports %r, metrics on %s" % (named, metrics_port))

    def resolve(port):
        return named.get(port) if isinstance(port, str) else port

    # Probes: grpc.health.v1 on the gRPC port; their timing against the shutdown.
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = c.get(kind) or {}
        g = probe.get("grpc")
        check("k8s: %s is a gRPC health probe" % kind, g is not None and g.get("service", "") == "",
              "want grpc: {port: ...} on the server's health (service \"\"), got %r" % probe)
        check("k8s: %s port" % kind, g is not None and g.get("port") == grpc_port,
              "probe port %r, onyxd's gRPC port %s" % (g and g.get("port"), grpc_port))
    linger, drain = eff["linger"], eff["drain"]
    ready, live = c.get("readinessProbe", {}), c.get("livenessProbe", {})
    check("k8s: linger > 0", linger > 0, "without a linger, a pod refuses calls before endpoints drop it")
    ready_s = ready.get("periodSeconds", 10) * ready.get("failureThreshold", 3)
    check("k8s: readiness fails within the linger", ready_s < linger,
          "readiness needs %d s of failures to drop the pod, linger is %d s" % (ready_s, linger))
    live_s = live.get("periodSeconds", 10) * live.get("failureThreshold", 3)
    check("k8s: liveness outlasts linger + drain", live_s > linger + drain,
          "liveness restarts after %d s of NOT_SERVING; a shutdown reports it for %d s" % (live_s, linger + drain))
    tgp = spec.get("terminationGracePeriodSeconds", 30)
    check("k8s: shutdown grace known", grace is not None, "no kShutdownGrace in server/main.cc")
    check("k8s: terminationGracePeriodSeconds > linger + drain + gRPC shutdown", grace is not None and tgp > linger + drain + grace,
          "%d s, onyxd may take %d + %d + %s s" % (tgp, linger, drain, grace))

    check_resources("k8s onyxd", c.get("resources") or {})

    # The model repository: a volume the init containers fill.
    repo = eff["model_repository"]
    repo_mount = mounts.get(repo)
    check("k8s: model repository is a volume", repo_mount is not None,
          "model_repository %r is no mountPath of the onyxd container" % repo)
    inits = spec.get("initContainers") or []
    check("k8s: an init container fills the repository", repo_mount is not None and any(
        any(m["name"] == repo_mount["name"] for m in i.get("volumeMounts", [])) for i in inits),
        "no init container mounts the %r volume" % (repo_mount or {}).get("name"))

    ann = pod["metadata"].get("annotations") or {}
    check("k8s: prometheus.io annotations", ann.get("prometheus.io/scrape") == "true" and
          ann.get("prometheus.io/port") == str(metrics_port) and ann.get("prometheus.io/path") == "/metrics",
          "%r, metrics on %s /metrics" % (ann, metrics_port))

    # Services.
    services = {s["metadata"]["name"]: s for s in by_kind["Service"]}
    for name, svc in services.items():
        check("k8s: Service %s selects the pods" % name, render.selects(svc["spec"].get("selector"), pod_labels),
              "selector %r, pod labels %r" % (svc["spec"].get("selector"), pod_labels))
        for p in svc["spec"].get("ports", []):
            target = resolve(p.get("targetPort", p["port"]))
            check("k8s: Service %s port %s targets a container port" % (name, p.get("name")),
                  target in (grpc_port, metrics_port), "targetPort %r resolves to %r" % (p.get("targetPort"), target))
    headless = [s for s in services.values() if s["spec"].get("clusterIP") == "None"]
    check("k8s: one headless Service with the gRPC port", len(headless) == 1 and any(
        resolve(p.get("targetPort", p["port"])) == grpc_port for p in headless[0]["spec"]["ports"]),
        "headless Services: %r" % [s["metadata"]["name"] for s in headless])

    # ServiceMonitor: one Service, its metrics port.
    sm = by_kind["ServiceMonitor"][0]
    picked = [s for s in services.values()
              if render.selects(sm["spec"]["selector"].get("matchLabels"), s["metadata"].get("labels") or {})]
    check("k8s: ServiceMonitor selects one Service", len(picked) == 1,
          "selects %r (each pod would be scraped once per Service)" % [s["metadata"]["name"] for s in picked])
    for ep in sm["spec"].get("endpoints", []):
        ports = {p.get("name"): p for p in (picked[0]["spec"]["ports"] if picked else [])}
        p = ports.get(ep.get("port"))
        check("k8s: ServiceMonitor scrapes the metrics port", p is not None and
              resolve(p.get("targetPort", p["port"])) == metrics_port and ep.get("path", "/metrics") == "/metrics",
              "endpoint %r on Service ports %r; metrics on %s" % (ep, list(ports), metrics_port))

    # HPA and its custom metric.
    hpa = by_kind["HorizontalPodAutoscaler"][0]["spec"]
    ref = hpa["scaleTargetRef"]
    check("k8s: HPA scales the Deployment", ref.get("kind") == "Deployment" and ref.get("name") == deployment["metadata"]["name"],
          "scaleTargetRef %r" % ref)
    check("k8s: Deployment leaves replicas to the HPA", "replicas" not in deployment["spec"],
          "replicas %r would reset the HPA's count on every apply" % deployment["spec"].get("replicas"))
    kinds = {m["type"]: m for m in hpa.get("metrics", [])}
    check("k8s: HPA on CPU", kinds.get("Resource", {}).get("resource", {}).get("name") == "cpu", "metrics %r" % hpa.get("metrics"))
    pods_metric = kinds.get("Pods", {}).get("pods", {}).get("metric", {}).get("name")
    adapter = yaml.safe_load(open(os.path.join(root, "deploy/kubernetes/prometheus-adapter-rules.yaml")))
    rules = {r["name"]["as"]: r for r in adapter["rules"]["custom"]}
    rule = rules.get(pods_metric)
    check("k8s: HPA Pods metric served by the adapter rule", rule is not None,
          "HPA asks for %r, adapter serves %r" % (pods_metric, list(rules)))
    if rule:
        series = re.match(r"\s*(\w+)", rule["seriesQuery"]).group(1)
        check("k8s: adapter series is an onyxd metric", series in metrics,
              "%s is not registered in server/observability" % series)
        check("k8s: adapter maps namespace and pod", set(rule["resources"]["overrides"]) >= {"namespace", "pod"},
              "overrides %r" % rule["resources"]["overrides"])
    min_replicas = hpa.get("minReplicas", 1)
    check("k8s: HPA keeps two pods", min_replicas >= 2, "minReplicas %d" % min_replicas)

    pdb = by_kind["PodDisruptionBudget"][0]["spec"]
    check("k8s: PDB selects the pods", render.selects(pdb["selector"].get("matchLabels"), pod_labels), "selector %r" % pdb["selector"])
    allowed = pdb["maxUnavailable"] if "maxUnavailable" in pdb else min_replicas - pdb.get("minAvailable", min_replicas)
    check("k8s: PDB lets a drain proceed and keeps one pod", isinstance(allowed, int) and 1 <= allowed < min_replicas,
          "%r with minReplicas %d" % (pdb, min_replicas))

    # NetworkPolicy: both ports named, neither open to every source.
    np = by_kind["NetworkPolicy"][0]["spec"]
    check("k8s: NetworkPolicy selects the pods", render.selects(np["podSelector"].get("matchLabels"), pod_labels),
          "podSelector %r" % np["podSelector"])
    covered = {}
    for rule in np.get("ingress", []):
        for p in rule.get("ports", []):
            covered[resolve(p.get("port"))] = rule.get("from") or []
    for port, what in ((grpc_port, "gRPC"), (metrics_port, "metrics")):
        check("k8s: NetworkPolicy admits %s from named sources only" % what, bool(covered.get(port)),
              "port %s: %r" % (port, covered.get(port, "not admitted")))
    check("k8s: metrics and gRPC admitted from different sources", covered.get(grpc_port) != covered.get(metrics_port),
          "both ports admit the same sources")


# --- KServe --------------------------------------------------------------------------------------

def check_kserve(root, flags):
    docs = []
    folder = os.path.join(root, "deploy/kserve")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml"):
            docs += [d for d in yaml.safe_load_all(open(os.path.join(folder, name))) if d]
    runtimes = [d for d in docs if d["kind"] == "ServingRuntime"]
    services = [d for d in docs if d["kind"] == "InferenceService"]
    if not check("kserve: a ServingRuntime and an InferenceService", len(runtimes) == 1 and len(services) >= 1,
                 "kinds %r" % [d["kind"] for d in docs]):
        return
    rt = runtimes[0]
    spec = rt["spec"]
    formats = {f["name"] for f in spec.get("supportedModelFormats", [])}
    check("kserve: serves onnx", "onnx" in formats, "supportedModelFormats %r" % formats)
    check("kserve: gRPC v2 only", spec.get("protocolVersions") == ["grpc-v2"],
          "protocolVersions %r: onyxd serves the v2 protocol over gRPC, no REST" % spec.get("protocolVersions"))
    c = spec["containers"][0]
    argv = list(c.get("command") or []) + list(c.get("args") or [])
    check("kserve: command is the image's onyxd", argv[:1] == [dockerfile_binary(root)], "command %r" % argv[:1])
    check_flags("kserve onyxd", argv, flags)
    eff = effective(flag_values(argv), {}, flags)
    check("kserve: repository is KServe's model mount", eff["model_repository"] == "/mnt/models",
          "model repository %r" % eff["model_repository"])
    check_listen("kserve", "grpc_address", eff["grpc_address"])
    check_listen("kserve", "metrics_address", eff["metrics_address"])
    ports = c.get("ports") or []
    check("kserve: the one port is gRPC (h2c)", len(ports) == 1 and ports[0].get("name") == "h2c" and
          ports[0]["containerPort"] == port_of(eff["grpc_address"]), "ports %r, gRPC on %s" % (ports, eff["grpc_address"]))
    ann = spec.get("annotations") or {}
    check("kserve: metrics annotations", ann.get("prometheus.kserve.io/port") == str(port_of(eff["metrics_address"])) and
          ann.get("prometheus.kserve.io/path") == "/metrics", "%r, metrics on %s" % (ann, eff["metrics_address"]))
    check_resources("kserve onyxd", c.get("resources") or {})
    for isvc in services:
        model = isvc["spec"]["predictor"]["model"]
        name = isvc["metadata"]["name"]
        check("kserve: %s uses the runtime" % name, model.get("runtime") == rt["metadata"]["name"] and
              model.get("modelFormat", {}).get("name") in formats and model.get("protocolVersion") in spec["protocolVersions"],
              "runtime %r, format %r, protocol %r" % (model.get("runtime"), model.get("modelFormat"), model.get("protocolVersion")))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    onyxd = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    flags, _ = onyxd_help(onyxd)
    check("onyxd --help lists flags", "--config" in flags and "--grpc-address" in flags,
          "read %r from `%s --help`" % (sorted(flags), onyxd))
    defaults_ok = all(flags.get(f) is not None for f in ("--grpc-address", "--metrics-address", "--drain-timeout-seconds",
                                                          "--shutdown-linger-seconds"))
    check("onyxd --help gives defaults", defaults_ok, "defaults %r" % flags)
    config_keys = server_config_keys(root)
    check("server.yaml keys read from server_config.cc", {"grpc_address", "shutdown.linger_seconds"} <= config_keys,
          "keys %r" % sorted(config_keys))
    metrics = registered_metrics(root)
    try:
        check_kubernetes(root, flags, config_keys, shutdown_grace_seconds(root), metrics)
    except render.RenderError as e:
        check("k8s: render", False, str(e))
    check_kserve(root, flags)
    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
