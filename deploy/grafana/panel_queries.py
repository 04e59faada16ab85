#!/usr/bin/python3
"""Prints the PromQL of every panel of a Grafana dashboard, one per line.

usage: panel_queries.py [--raw] [--titles] [--rate-interval D] [DASHBOARD]

DASHBOARD defaults to onyx.json beside this script. Panels nested in
collapsed rows are included. Each target's `expr` is JSON-decoded and its
whitespace runs folded to one space, so an expression is always one line.

Grafana's variables are replaced so that Prometheus can run the expression
as it is: $model and $instance (always used with =~) by ".*", $__rate_interval
and $__interval by D (default 1m; it must hold at least two scrapes). --raw
prints the expressions as the dashboard has them. --titles prefixes each line
with the panel title and a tab.
"""

import argparse
import json
import os
import re
import sys


def panels_of(dashboard):
    """Every panel, depth first, with the panels of collapsed rows."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def queries(dashboard):
    """(panel title, expression) for every target that has an expression."""
    for panel in panels_of(dashboard):
        for target in panel.get("targets", []):
            expr = target.get("expr")
            if expr:
                yield panel.get("title", ""), " ".join(expr.split())


def substitute(expr, rate_interval):
    expr = re.sub(r"\$(__rate_interval|__interval)\b|\$\{(__rate_interval|__interval)\}", rate_interval, expr)
    return re.sub(r"\$(model|instance)\b|\$\{(model|instance)\}", ".*", expr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dashboard", nargs="?",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "onyx.json"))
    parser.add_argument("--raw", action="store_true", help="keep Grafana's variables")
    parser.add_argument("--titles", action="store_true", help="prefix each line with the panel title and a tab")
    parser.add_argument("--rate-interval", default="1m", help="what $__rate_interval becomes (default 1m)")
    args = parser.parse_args()
    with open(args.dashboard, encoding="utf-8") as f:
        dashboard = json.load(f)
    found = list(queries(dashboard))
    if not found:
        sys.exit("panel_queries: no panel of %s has a PromQL expression" % args.dashboard)
    for title, expr in found:
        if not args.raw:
            expr = substitute(expr, args.rate_interval)
            if "$" in expr:
                sys.exit("panel_queries: unknown Grafana variable left in %r (panel %r)" % (expr, title))
        print("%s\t%s" % (title, expr) if args.titles else expr)


if __name__ == "__main__":
    main()
