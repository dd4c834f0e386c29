#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR MIT
# The proofs abi_caller wrote (blst affine -> bellperson compressed) must pass `proofpipe verify`,
# and tampered copies must not: A negated (the sign bit of proof 0: still a valid point, so the
# pairing check is what rejects it), one flipped bit in proof 1's C, and the two proofs swapped.
# Usage: verify.sh PROOFPIPE DATA_DIR PROOFS
set -u
proofpipe=$1 data=$2 proofs=$3
publics=(--public "$data/public-0.json" --public "$data/public-1.json")
failures=0

verify() {  # expectation (pass|fail), label, proofs file
  local want=$1 label=$2 file=$3 rc=0
  "$proofpipe" verify --params "$data/params" --proofs "$file" "${publics[@]}" >"$file.log" 2>&1 || rc=$?
  if [[ $want == pass && $rc -ne 0 ]] || [[ $want == fail && $rc -eq 0 ]]; then
    echo "verify.sh: FAILED: $label: expected verification to $want, exit $rc:"; cat "$file.log"
    failures=$((failures + 1))
  else
    echo "verify.sh: ok: $label: verification ${want}ed as expected (exit $rc): $(head -c 200 "$file.log" | tr '\n' ' ')"
  fi
}

flip() {  # in, out, byte offset, xor mask
  cp "$1" "$2"
  local byte
  byte=$(od -An -tu1 -j "$3" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\x%02x' $((byte ^ $4)))" | dd of="$2" bs=1 seek="$3" conv=notrunc status=none
}

size=$(stat -c %s "$proofs")
if [[ $size -ne 384 ]]; then
  echo "verify.sh: FAILED: $proofs has $size bytes, expected 2 x 192"
  exit 1
fi
verify pass "abi_caller's proofs" "$proofs"
flip "$proofs" "$proofs.neg-a" 0 0x20
verify fail "proof 0 with A negated (sign bit flipped)" "$proofs.neg-a"
flip "$proofs" "$proofs.flip-c" 383 0x01
verify fail "proof 1 with one bit of C flipped" "$proofs.flip-c"
{ tail -c 192 "$proofs"; head -c 192 "$proofs"; } > "$proofs.swapped"
verify fail "proofs swapped" "$proofs.swapped"
exit $((failures > 0))
