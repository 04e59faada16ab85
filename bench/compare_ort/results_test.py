#!/usr/bin/python3
"""compare.py's RESULTS.md writer keeps each set's section to itself.

A set written for the first time lands after the introduction, before the
first section or other set's marker; a rerun replaces only its own section.
(A sequence section once landed inside the CNN set's markers, and the next
CNN run deleted it.)
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def section(set_name, body):
    begin, end = compare.MARKERS[set_name]
    return "%s\n## %s\n%s\n%s\n" % (begin, set_name, body, end)


def main():
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "RESULTS.md")
        with open(path, "w") as f:
            f.write("# Benchmark results\n\nintro\n\n" + section("cnn", "cnn run 1") + "\n## Soak\nsoak table\n")
        compare.write_results(path, section("sequence", "sequence run 1"), compare.MARKERS["sequence"])
        compare.write_results(path, section("cnn", "cnn run 2"), compare.MARKERS["cnn"])
        if "sequence run 1" not in open(path).read():
            problems.append("rerunning the CNN set deleted the sequence set's section")
        compare.write_results(path, section("sequence", "sequence run 2"), compare.MARKERS["sequence"])
        text = open(path).read()
        for want in ("intro", "cnn run 2", "sequence run 2", "soak table"):
            if text.count(want) != 1:
                problems.append("%r appears %d times, expected once" % (want, text.count(want)))
        for gone in ("cnn run 1", "sequence run 1"):
            if gone in text:
                problems.append("%r was not replaced" % gone)
        order = [text.find(s) for s in ("intro", "sequence run 2", "cnn run 2", "soak table")]
        if order != sorted(order):
            problems.append("sections out of order: %s" % text)
    for p in problems:
        print("FAIL", p)
    print("PASS results sections" if not problems else "FAIL results sections")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
