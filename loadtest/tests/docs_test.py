#!/usr/bin/python3
"""Every onyx-load flag is documented: in the root README.md's flag table and
in `onyx-load --help`, and nothing documented there is a flag onyx-load
lacks.

usage: docs_test.py --onyx-load BIN --root DIR

The flags are read from loadtest/flags.cc (the parser's own tables), so a new
flag without documentation fails here.
"""

import argparse
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onyx-load", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    with open(args.root + "/loadtest/flags.cc") as f:
        parser = f.read()
    flags = set(re.findall(r'\{"(--[a-z-]+)"', parser)) | set(re.findall(r'flag == "(--[a-z-]+)"', parser))
    flags.discard("--help")  # "-h" maps onto it
    with open(args.root + "/README.md") as f:
        readme = f.read()
    section = readme.split("## onyx-load", 1)[1].split("\n## ", 1)[0]
    table = set(re.findall(r"^\| `(--[a-z-]+)", section, re.M)) | set(re.findall(r", `(--[a-z-]+)`", section))
    help_text = subprocess.run([args.onyx_load, "--help"], capture_output=True, text=True).stdout
    in_help = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", help_text))
    problems = []
    if len(flags) < 30:
        problems.append("only %d flags found in flags.cc: the pattern no longer matches the parser" % len(flags))
    for flag in sorted(flags - table):
        problems.append("%s is not in README.md's onyx-load flag table" % flag)
    for flag in sorted(table - flags - {"--help"}):
        problems.append("README.md documents %s, which onyx-load does not take" % flag)
    for flag in sorted(flags - in_help):
        problems.append("%s is not in onyx-load --help" % flag)
    for code in range(6):
        if not re.search(r"\b%d\b" % code, section.split("Exit codes:", 1)[-1]):
            problems.append("README.md does not document exit code %d" % code)
    for p in problems:
        print("FAIL " + p)
    print("%d flags documented; %d problems" % (len(flags), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
