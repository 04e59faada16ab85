#!/usr/bin/python3
"""The rules of deploy/nginx/onyx.conf, checked against proto/ and onyxd.

usage: nginx_conf_check.py ONYXD SOURCE_ROOT

- every method that has a location of its own exists in proto/ (a misspelt
  path would silently fall through to `location /`);
- the idempotent reads (ServerLive, ServerReady, ModelReady, ServerMetadata,
  ModelMetadata, grpc.health.v1.Health/Check) each have an exact location
  that retries on error and timeout, with `non_idempotent` (gRPC calls are
  POSTs, which nginx otherwise never retries);
- every other location that passes calls on does not retry;
- the control RPCs are refused, and each one of proto/ matches the refusal;
- client_max_body_size is onyxd's default --max-message-bytes (read from
  `ONYXD --help`) plus gRPC's 5-byte prefix;
- every upstream server has max_fails and fail_timeout, and the upstream
  keeps idle connections (keepalive).
Prints PASS/FAIL per check; exits 1 on any failure.
"""

import os
import re
import subprocess
import sys

RETRIED = [
    "/inference.GRPCInferenceService/ServerLive",
    "/inference.GRPCInferenceService/ServerReady",
    "/inference.GRPCInferenceService/ModelReady",
    "/inference.GRPCInferenceService/ServerMetadata",
    "/inference.GRPCInferenceService/ModelMetadata",
    "/grpc.health.v1.Health/Check",
]
CONTROL = re.compile(r"^/inference\.GRPCInferenceService/(Repository(Model)?(Load|Unload)|\w*SharedMemory\w*)$|^/onyx\.admin\.v1\.Admin/")

failures = []


def check(name, ok, why=""):
    print("PASS %s" % name if ok else "FAIL %s: %s" % (name, why))
    if not ok:
        failures.append(name)


def proto_methods(proto_dir):
    """Every '/package.Service/Method' of the .proto files."""
    methods = set()
    for name in sorted(os.listdir(proto_dir)):
        if not name.endswith(".proto"):
            continue
        text = re.sub(r"//[^\n]*", "", open(os.path.join(proto_dir, name), encoding="utf-8").read())
        package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        for service in re.finditer(r"\bservice\s+(\w+)\s*\{(.*?)\n\}", text, re.S):
            for rpc in re.finditer(r"\brpc\s+(\w+)\s*\(", service.group(2)):
                methods.add("/%s.%s/%s" % (package.group(1), service.group(1), rpc.group(1)))
    return methods


def locations(conf):
    """[(modifier, path, body)] of the location blocks (no nesting in onyx.conf)."""
    text = re.sub(r"#[^\n]*", "", conf)
    return [(m.group(1) or "", m.group(2), m.group(3))
            for m in re.finditer(r"\blocation\s+(=|~\*?|\^~)?\s*(\S+)\s*\{(.*?)\}", text, re.S)]


def main():
    onyxd, root = sys.argv[1], sys.argv[2]
    conf = open(os.path.join(root, "deploy/nginx/onyx.conf"), encoding="utf-8").read()
    methods = proto_methods(os.path.join(root, "proto"))
    check("proto_methods_found", "/inference.GRPCInferenceService/ModelInfer" in methods,
          "no ModelInfer among %d methods read from proto/" % len(methods))
    locs = locations(conf)

    for mod, path, body in locs:
        if mod == "=":
            check("exists %s" % path, path in methods, "no such method in proto/")

    exact = {path: body for mod, path, body in locs if mod == "="}
    for method in RETRIED:
        body = exact.get(method)
        if body is None:
            check("retried %s" % method, False, "no `location = %s`" % method)
            continue
        nu = re.search(r"grpc_next_upstream\s+([^;]*);", body)
        conds = nu.group(1).split() if nu else []
        check("retried %s" % method,
              "grpc_pass" in body and {"error", "timeout", "non_idempotent"} <= set(conds),
              "want grpc_pass and grpc_next_upstream error timeout non_idempotent, got %r" % conds)

    for mod, path, body in locs:
        if "grpc_pass" in body and not (mod == "=" and path in RETRIED):
            check("not retried %s" % path, re.search(r"grpc_next_upstream\s+off\s*;", body) is not None,
                  "passes calls on without `grpc_next_upstream off`")

    refusals = [(mod, path) for mod, path, body in locs if re.search(r"\breturn\s+403\s*;", body)]
    control = sorted(m for m in methods if CONTROL.search(m))
    check("control_rpcs_in_proto", len(control) >= 8, "found only %r" % control)
    for method in control:
        hit = any((mod.startswith("~") and re.search(path, method)) or (mod == "" and method.startswith(path))
                  or (mod == "=" and method == path) for mod, path in refusals)
        check("refused %s" % method, hit, "no location returning 403 matches it")
    for method in sorted(methods - set(control)):
        hit = any(mod.startswith("~") and re.search(path, method) for mod, path in refusals)
        check("served %s" % method, not hit, "refused by a control-RPC location")

    help_text = subprocess.run([onyxd, "--help"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"--max-message-bytes\b.*?\(default (\d+)\)", help_text, re.S)
    check("onyxd_help_max_message_bytes", m is not None, "no default for --max-message-bytes in `onyxd --help`")
    # The server's own limit, outside the location blocks (the stream's is 0).
    outside = re.sub(r"\blocation\s[^{]*\{.*?\}", "", re.sub(r"#[^\n]*", "", conf), flags=re.S)
    body_limit = re.search(r"^\s*client_max_body_size\s+(\S+?)\s*;", outside, re.M)
    if m:
        want = int(m.group(1)) + 5
        check("client_max_body_size", body_limit is not None and body_limit.group(1) == str(want),
              "want %d (default max_message_bytes + 5), got %s" % (want, body_limit and body_limit.group(1)))

    upstream = re.search(r"\bupstream\s+\w+\s*\{(.*?)\}", re.sub(r"#[^\n]*", "", conf), re.S)
    servers = re.findall(r"^\s*server\s+([^;]*);", upstream.group(1), re.M) if upstream else []
    check("upstream_servers", len(servers) >= 2, "want at least 2 replicas, got %r" % servers)
    for s in servers:
        check("passive_health %s" % s.split()[0], "max_fails=" in s and "fail_timeout=" in s,
              "no max_fails/fail_timeout")
    check("upstream_keepalive", upstream is not None and re.search(r"^\s*keepalive\s+\d+\s*;", upstream.group(1), re.M),
          "the upstream keeps no idle connections")

    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
