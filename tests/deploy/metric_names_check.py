#!/usr/bin/python3
"""Every metric and label name deploy/ queries is one onyxd exports.

usage: metric_names_check.py [SOURCE_ROOT]

Reads the PromQL of deploy/prometheus/*_rules.yml, every target and
variable query of deploy/grafana/onyx.json and the Prometheus adapter's
seriesQuery, and checks each onyx_* metric (histogram _bucket/_sum/_count
series by their family) against the names server/observability registers,
each label name against the labels it attaches (plus le and the scrape's
job, instance, namespace and pod), and the values matched for `state` and
`reason` against string literals of server/. A name that is misspelt or
that onyxd stopped exporting would otherwise give an empty panel or an
alert that can never fire. Prints PASS/FAIL per name; exits 1 on a failure.
"""

import json
import os
import re
import sys

import yaml

COLLECTORS = ["metrics.cc", "model_collector.cc", "arena_collector.cc", "process_collector.cc"]
SCRAPE_LABELS = {"le", "job", "instance", "namespace", "pod"}
VALUE_CHECKED = {"state", "reason"}

failures = []


def check(name, ok, why=""):
    print("PASS %s" % name if ok else "FAIL %s: %s" % (name, why))
    if not ok:
        failures.append(name)


def exported(root):
    """(metric families, label names) registered in server/observability."""
    text = ""
    for name in COLLECTORS:
        with open(os.path.join(root, "server/observability", name), encoding="utf-8") as f:
            text += f.read()
    metrics = set(re.findall(r"\"(onyx_[a-z0-9_]+)\"", text))
    labels = set(re.findall(r"\{\"([a-z_]+)\",", text)) | set(re.findall(r"labels\[\"([a-z_]+)\"\]", text))
    return metrics, labels


def server_literals(root):
    literals = set()
    for folder, _, files in os.walk(os.path.join(root, "server")):
        for name in files:
            if name.endswith((".cc", ".h")) and not name.endswith("_test.cc"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    literals |= set(re.findall(r"\"([A-Za-z_]+)\"", f.read()))
    return literals


def expressions(root):
    """(where, PromQL) of everything deploy/ asks Prometheus."""
    out = []
    for name in ("recording_rules.yml", "alerting_rules.yml"):
        with open(os.path.join(root, "deploy/prometheus", name), encoding="utf-8") as f:
            for group in yaml.safe_load(f)["groups"]:
                for rule in group["rules"]:
                    out.append(("%s %s" % (name, rule.get("record") or rule.get("alert")), rule["expr"]))
    with open(os.path.join(root, "deploy/grafana/onyx.json"), encoding="utf-8") as f:
        dash = json.load(f)
    panels = list(dash.get("panels", []))
    for p in list(panels):
        panels += p.get("panels", [])
    for p in panels:
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append(("onyx.json %s" % p.get("title"), t["expr"]))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            out.append(("onyx.json variable %s" % v["name"], q))
    with open(os.path.join(root, "deploy/kubernetes/prometheus-adapter-rules.yaml"), encoding="utf-8") as f:
        for rule in yaml.safe_load(f)["rules"]["custom"]:
            out.append(("prometheus-adapter-rules.yaml", rule["seriesQuery"]))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    metrics, labels = exported(root)
    check("exported names found", {"onyx_requests_total", "onyx_model_state"} <= metrics and {"model", "version"} <= labels,
          "read metrics %r, labels %r" % (sorted(metrics), sorted(labels)))
    literals = server_literals(root)
    used_metrics, used_labels, used_values = {}, {}, {}
    for where, expr in expressions(root):
        for name in re.findall(r"(?<![\w:])(onyx_[a-z0-9_]+)", expr):
            used_metrics.setdefault(name, where)
        for group in re.findall(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
            for name in re.findall(r"\w+", group):
                used_labels.setdefault(name, where)
        for body in re.findall(r"\{([^{}]*)\}", expr):
            for name, value in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)\s*\"([^\"]*)\"", body):
                used_labels.setdefault(name, where)
                if name in VALUE_CHECKED:
                    used_values.setdefault((name, value), where)
        for name in re.findall(r"label_values\(\s*[\w:]+\s*,\s*(\w+)\s*\)", expr):
            used_labels.setdefault(name, where)
    check("some names used", len(used_metrics) >= 10, "found only %r" % sorted(used_metrics))
    for name, where in sorted(used_metrics.items()):
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        check("metric %s" % name, name in metrics or family in metrics,
              "used in %s; server/observability registers no such metric" % where)
    for name, where in sorted(used_labels.items()):
        check("label %s" % name, name in labels | SCRAPE_LABELS,
              "used in %s; onyxd attaches no such label" % where)
    for (name, value), where in sorted(used_values.items()):
        for v in re.split(r"\|", value):
            check("value %s=%s" % (name, v), v in literals, "used in %s; no string %r in server/" % (where, v))
    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
