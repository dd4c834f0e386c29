# SPDX-License-Identifier: Apache-2.0 OR MIT
# shellcheck shell=bash disable=SC2154  # repo and work: set by the sourcing script
# Helpers of the snarkjs end-to-end tests (interop.sh, mul_chain.sh), sourced after they set
# $repo (the repository root) and $work (their scratch directory, absolute).
snarkjs() { node "$repo/node_modules/snarkjs/build/cli.cjs" "$@"; }
step() { echo "--- $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_ok() { "$@" > "$work/last.log" 2>&1 || { cat "$work/last.log"; fail "$*"; }; }
expect_invalid() {  # a verifier must reject; a crash or a usage error is not a rejection
  local rc=0
  "$@" > "$work/last.log" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]]; then cat "$work/last.log"; fail "accepted: $*"; fi
  grep -qiE "invalid" "$work/last.log" || { cat "$work/last.log"; fail "no clean rejection: $*"; }
}
expect_error() {  # expect_error PATTERN CMD...: fails with exit code 1 and a message matching PATTERN
  local pattern=$1 rc=0
  shift
  "$@" > "$work/last.log" 2>&1 || rc=$?
  [[ $rc -eq 1 ]] && grep -qE "$pattern" "$work/last.log" || { cat "$work/last.log"; fail "expected /$pattern/ from: $*"; }
}
# The public signals with the first one incremented (still below r).
tamper() { node -e 'const p = require(process.argv[1]); p[0] = (BigInt(p[0]) + 1n).toString();
  require("fs").writeFileSync(process.argv[2], JSON.stringify(p, null, 1));' "$(realpath "$1")" "$2"; }
