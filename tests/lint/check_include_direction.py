#!/usr/bin/env python3
"""Checks that every #include points down the documented layers.

The library split (engine/CMakeLists.txt) makes most wrong includes a build
error; this check also covers what a build cannot see: edges through headers
that no compiled file of the layer includes yet, `engine/...` or `../` paths
that would bypass the include views, the public onyx/session.h used below the
session layer, and engine internals included from server/, cli/, bench/ or
loadtest/. It also checks that engine/README.md's arrows match the CMake
targets (`--write-readme` rewrites them).

usage: check_include_direction.py [--write-readme]
Exit 0 when every edge is allowed, 1 with one line per violation.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import layering  # noqa: E402

BEGIN = "<!-- layers: generated from engine/CMakeLists.txt by tests/lint/check_include_direction.py -->"
END = "<!-- end layers -->"
SOURCE_SUFFIXES = {".cc", ".h"}


def is_test(path):
    return path.name.endswith("_test.cc") or path.name.endswith("_test_util.h") or path.name == "op_test_util.h"


def violations():
    layers = layering.engine_layers()
    engine_folders = set(layers)
    found = []

    def check(path, allowed, public_session_ok):
        for inc in layering.includes(path):
            first = inc.split("/")[0]
            rel = path.relative_to(layering.ROOT)
            if inc.startswith("engine/") or inc.startswith("../"):
                found.append(f"{rel}: includes \"{inc}\": engine headers are named from their folder, never by path")
            elif first in engine_folders and first not in allowed:
                found.append(f"{rel}: includes \"{inc}\": '{first}' is not visible from here "
                             f"(visible: {', '.join(sorted(allowed)) or 'only the public onyx/ headers'})")
            elif inc == "onyx/session.h" and not public_session_ok:
                found.append(f"{rel}: includes \"onyx/session.h\": below the session layer include the small "
                             "public headers (onyx/value_info.h, run_options.h, session_options.h, session_stats.h)")

    for layer, sees in layers.items():
        for path in sorted((layering.ENGINE / layer).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and not is_test(path):
                check(path, set(sees), layer == "session")
    for path in sorted((layering.ENGINE / "include").rglob("*.h")):
        check(path, set(), True)
    for path in sorted((layering.ROOT / "providers").rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and not is_test(path):
            allowed = set(layering.PROVIDER_SEES)
            if path.name == "builtin_providers.cc":
                allowed.add("session")  # the runtime glue: registers providers with the session's registry
            check(path, allowed, False)
    for top in ("server", "cli", "bench", "loadtest"):
        folder = layering.ROOT / top
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.suffix in SOURCE_SUFFIXES and not is_test(path):
                    check(path, set(), True)
    return found


def readme_problem(write):
    readme = layering.ENGINE / "README.md"
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        return f"engine/README.md: no generated layer block ({BEGIN} ... {END})"
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    wanted = "\n" + layering.readme_block(layering.engine_layers()) + "\n"
    if current == wanted:
        return None
    if write:
        readme.write_text(head + BEGIN + wanted + END + tail)
        return None
    return "engine/README.md: the layer arrows differ from engine/CMakeLists.txt (run with --write-readme)"


def main():
    problems = violations()
    readme = readme_problem("--write-readme" in sys.argv[1:])
    if readme:
        problems.append(readme)
    for p in problems:
        print(p)
    print(f"include direction: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
