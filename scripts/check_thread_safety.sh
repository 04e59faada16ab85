#!/usr/bin/env bash
# Checks the lock annotations (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED,
# ABSL_LOCKS_EXCLUDED, ...) with clang's thread-safety analysis. The build
# uses GCC, which ignores them; this parses the project .cc files of the
# build's compile_commands.json with Debian's clang (-fsyntax-only, no object
# files) and fails on any -Wthread-safety diagnostic. Other warnings are off:
# GCC's build reports those. A file is parsed when it or a project header it
# includes (transitively) names a lock annotation or a lockable type (Mutex,
# MutexLock, CondVar, ...): nothing else can draw a diagnostic.
#
#   scripts/check_thread_safety.sh [BUILD_DIR]     # default: build
#
# BUILD_DIR must have been configured (CMAKE_EXPORT_COMPILE_COMMANDS is on in
# the top CMakeLists.txt) and its generated protocol headers built. Generated
# sources (under BUILD_DIR) and files outside the source tree are skipped.
# Environment: CLANGXX (default clang++), JOBS (parallel clang runs, default
# 2), ONLY (a Python regex: check only the files whose path relative to the
# source tree it matches, e.g. ONLY='^server/models/'), ALL=1 (parse every
# file, whether or not it names a capability).
# Exit status: 0 clean, 1 when a file has a thread-safety error or does not
# parse (each shown with its diagnostics), 2 for a usage or setup problem.
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "${1:-$src_dir/build}" 2>/dev/null && pwd) || {
  echo "check_thread_safety: no build directory '${1:-$src_dir/build}'" >&2
  exit 2
}
clangxx=${CLANGXX:-clang++}
jobs=${JOBS:-2}
database=$build_dir/compile_commands.json

if ! command -v "$clangxx" >/dev/null; then
  echo "check_thread_safety: '$clangxx' not found (scripts/install-deps.sh installs clang)" >&2
  exit 2
fi
if [ ! -f "$database" ]; then
  echo "check_thread_safety: $database missing (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One response file per source: the build's own flags (defines, include paths,
# language standard), minus what clang rejects or a syntax-only run does not
# need, plus the thread-safety warnings as errors.
python3 - "$database" "$src_dir" "$build_dir" "$work" <<'EOF'
import json, os, re, shlex, sys

database, src_dir, build_dir, work = sys.argv[1:]
only = re.compile(os.environ.get("ONLY", ""))
# GCC options clang does not accept (or that mean nothing without codegen).
gcc_only = re.compile(
    r"^-(f(no-)?(tree-|ipa-|gcse|fat-lto-objects|semantic-interposition$|"
    r"concepts-diagnostics-depth=|max-errors=|lto-partition=|"
    r"diagnostics-urls)|flto=auto$|O\d?$|Os$|Ofast$|g\d?$|ggdb\d?$)")

def quote(arg):
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'

# The analysis can only report something in a translation unit that touches a
# capability: an annotated declaration or a lockable type. A unit none of
# whose project files (the source and every project header it includes,
# followed transitively, #if branches included) names one is skipped; ALL=1
# checks every unit anyway. Headers outside the source tree (absl, gRPC) do not
# decide: their own annotated code is analysed only where a project file uses
# it, and then the project file names the type.
capability = re.compile(
    r"\bABSL_(PT_GUARDED_BY|GUARDED_BY|ACQUIRED_(AFTER|BEFORE)|"
    r"(EXCLUSIVE|SHARED)_LOCKS_REQUIRED|LOCKS_EXCLUDED|LOCK_RETURNED|"
    r"(SCOPED_)?LOCKABLE|(EXCLUSIVE|SHARED)_(TRY)?LOCK_FUNCTION|"
    r"UNLOCK_FUNCTION|ASSERT_(EXCLUSIVE|SHARED)_LOCK)\b|"
    r"\b(Mutex|MutexLock|MutexLockMaybe|ReaderMutexLock|WriterMutexLock|"
    r"ReleasableMutexLock|CondVar)\b")
include = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
check_all = os.environ.get("ALL", "") not in ("", "0")
texts = {}

def text(path):
    if path not in texts:
        try:
            with open(path, errors="replace") as f:
                texts[path] = f.read()
        except OSError:
            texts[path] = ""
    return texts[path]

def in_project(path):
    return (path.startswith(src_dir + os.sep)
            and not path.startswith(build_dir + os.sep))

def touches_capability(source, include_dirs):
    seen, stack = {source}, [source]
    while stack:
        path = stack.pop()
        body = text(path)
        if capability.search(body):
            return True
        for name in include.findall(body):
            for base in [os.path.dirname(path)] + include_dirs:
                candidate = os.path.normpath(os.path.join(base, name))
                if os.path.isfile(candidate):
                    if in_project(candidate) and candidate not in seen:
                        seen.add(candidate)
                        stack.append(candidate)
                    break
    return False

count = skipped = 0
for entry in json.load(open(database)):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if (not path.endswith(".cc") or not path.startswith(src_dir + os.sep)
            or path.startswith(build_dir + os.sep)
            or not only.search(os.path.relpath(path, src_dir))):
        continue
    args = entry.get("arguments") or shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args[1:]:
        if skip:
            skip = False
        elif arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif arg in ("-c", "-MD", "-MMD") or arg == entry["file"] or arg == path:
            pass
        elif arg.startswith("-W") or gcc_only.match(arg):
            pass  # warnings: only thread-safety ones below
        else:
            kept.append(arg)
    include_dirs = []
    for i, arg in enumerate(args):
        if arg == "-I" and i + 1 < len(args):
            include_dirs.append(args[i + 1])
        elif arg.startswith("-I") and len(arg) > 2:
            include_dirs.append(arg[2:])
    include_dirs = [os.path.normpath(os.path.join(entry["directory"], d))
                    for d in include_dirs]
    if not check_all and not touches_capability(path, include_dirs):
        skipped += 1
        continue
    kept += ["-fsyntax-only", "-Wno-everything", "-Wthread-safety",
             "-Werror=thread-safety", path]
    count += 1
    with open(os.path.join(work, "%04d.rsp" % count), "w") as rsp:
        rsp.write(" ".join(quote(a) for a in kept) + "\n")
    with open(os.path.join(work, "%04d.name" % count), "w") as name:
        name.write(os.path.relpath(path, src_dir) + "\n")
print(count, skipped, file=open(os.path.join(work, "count"), "w"))
EOF

read -r count skipped <"$work/count"
if [ $((count + skipped)) -eq 0 ]; then
  echo "check_thread_safety: no project .cc file in $database" >&2
  exit 2
fi
if [ "$count" -eq 0 ]; then
  echo "check_thread_safety: none of $skipped files names a lock annotation or lockable type; nothing to check"
  exit 0
fi
start=$(date +%s)
# Each run leaves <n>.log, and <n>.failed when clang reported an error.
export clangxx
find "$work" -name '*.rsp' -print0 | sort -z |
  xargs -0 -P "$jobs" -n 1 sh -c \
    '"$clangxx" @"$1" >"${1%.rsp}.log" 2>&1 || touch "${1%.rsp}.failed"' sh
elapsed=$(($(date +%s) - start))

failed=0
for marker in "$work"/*.failed; do
  [ -e "$marker" ] || continue
  failed=$((failed + 1))
  base=${marker%.failed}
  echo "== $(cat "$base.name")"
  cat "$base.log"
done
if [ "$failed" -gt 0 ]; then
  echo "check_thread_safety: $failed of $count files failed (${elapsed}s, $jobs jobs)" >&2
  exit 1
fi
echo "check_thread_safety: $count files clean (${elapsed}s, $jobs jobs); $skipped without a lock annotation or lockable type in their project includes skipped (ALL=1 checks them too)"
