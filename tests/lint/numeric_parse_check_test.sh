#!/usr/bin/env bash
# numeric_parse_check_test.sh: numeric_parse_check.sh fails on a scratch tree
# holding each kind of unchecked parse, names every offending line and nothing
# else, and passes once they are gone.
set -euo pipefail

check=$(cd "$(dirname "$0")" && pwd)/numeric_parse_check.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "numeric_parse_check_test: $*" >&2
  exit 1
}

mkdir -p "$scratch"/{engine/framework,providers/cpu,server/config,cli,bench/memory,loadtest,tests/e2e}
cat >"$scratch/engine/framework/tensor_proto.cc" <<'EOF'
int64_t offset = std::stoll(entry.value());
EOF
cat >"$scratch/providers/cpu/cast.h" <<'EOF'
int exp = atoi(text);
EOF
cat >"$scratch/cli/run_command.cc" <<'EOF'
long n = std::strtoll(value.c_str(), &end, 10);
EOF
cat >"$scratch/bench/memory/memory_bench.cc" <<'EOF'
if (std::sscanf(text, "%lf", &period) != 1) return 0;
EOF
cat >"$scratch/loadtest/driver.cc" <<'EOF'
double rate = strtod (value, nullptr);
EOF
# Not findings: checked parses, strtok, names that merely end in "stoi", tests,
# and folders outside the checked ones.
cat >"$scratch/server/config/yaml_util.cc" <<'EOF'
if (!absl::SimpleAtoi(text, &value)) return Error(text);
auto r = std::from_chars(first, last, value);
for (char* tok = std::strtok(list, ","); tok; tok = std::strtok(nullptr, ",")) {}
int n = custom_stoi(text);
EOF
cat >"$scratch/engine/framework/tensor_proto_test.cc" <<'EOF'
EXPECT_EQ(std::stoll("12"), 12);
EOF
cat >"$scratch/tests/e2e/helper.cc" <<'EOF'
int port = std::atoi(argv[1]);
EOF

set +e
out=$("$check" "$scratch" 2>&1)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "exit status $rc on a tree with unchecked parses, want 1; output:
$out"
for want in engine/framework/tensor_proto.cc:1: providers/cpu/cast.h:1: cli/run_command.cc:1: \
            bench/memory/memory_bench.cc:1: loadtest/driver.cc:1:; do
  grep -qF "$want" <<<"$out" || fail "output does not name $want:
$out"
done
for unwanted in server/config/yaml_util.cc tensor_proto_test.cc tests/e2e/helper.cc; do
  if grep -qF "$unwanted" <<<"$out"; then
    fail "output names $unwanted, which is not a finding:
$out"
  fi
done

rm "$scratch/engine/framework/tensor_proto.cc" "$scratch/providers/cpu/cast.h" "$scratch/cli/run_command.cc" \
   "$scratch/bench/memory/memory_bench.cc" "$scratch/loadtest/driver.cc"
out=$("$check" "$scratch" 2>&1) || fail "fails on a tree without unchecked parses:
$out"
echo "numeric_parse_check_test: passed"
