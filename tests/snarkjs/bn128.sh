#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR MIT
# BN254 (snarkjs's and circom's bn128) end to end: circom2 compiles circuits with its default prime,
# snarkjs makes a small bn128 powers of tau, the keys and the witnesses; proofpipe proves and
# snarkjs verifies, snarkjs proves and proofpipe verifies, proofpipe's verification_key.json is
# snarkjs's byte for byte, and tampered public inputs and proofs fail under both verifiers.
# Usage: bn128.sh PROOFPIPE WORKDIR CIRCUIT...   (CIRCUIT: multiplier, range_check, poseidon_path3)
set -euo pipefail
proofpipe=$(realpath "$1")
work=$2
mkdir -p "$work"
work=$(realpath "$work")
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"   # circom2 (WASI) resolves -l and include paths only below the working directory
# shellcheck source=tests/snarkjs/lib.sh
source "$repo/tests/snarkjs/lib.sh"   # snarkjs, step, fail, expect_ok/_invalid/_error, tamper

step "bn128 powers of tau (2^11, made here: a few seconds of wasm)"
ptau0="$work/pot11_0.ptau" ptau="$work/pot11.ptau"
if [[ ! -s $ptau ]]; then
  expect_ok snarkjs powersoftau new bn128 11 "$ptau0"
  expect_ok snarkjs powersoftau contribute "$ptau0" "$work/pot11_1.ptau" --name=ci -e="proofpipe bn128 entropy"
  expect_ok snarkjs powersoftau prepare phase2 "$work/pot11_1.ptau" "$ptau"
fi

for circuit in "$@"; do
  dir="$work/$circuit"
  rm -rf "$dir" && mkdir -p "$dir"
  step "$circuit: circom2 (bn128)"
  expect_ok npx --no-install circom2 "tests/circom/$circuit.circom" --r1cs --wasm --O2 \
    -l node_modules -l tests/circom -o "$dir"
  expect_ok snarkjs wtns calculate "$dir/${circuit}_js/$circuit.wasm" "tests/circom/$circuit.input.json" \
    "$dir/witness.wtns"
  step "$circuit: snarkjs groth16 setup + zkey contribute"
  expect_ok snarkjs groth16 setup "$dir/$circuit.r1cs" "$ptau" "$dir/key0.zkey"
  expect_ok snarkjs zkey contribute "$dir/key0.zkey" "$dir/key.zkey" --name=ci -e="proofpipe ci entropy"
  # The uncontributed key (delta = 1) for the first circuit only; the contributed one for all.
  keys="key"
  [[ $circuit == "$1" ]] && keys="key0 key"
  for key in $keys; do
    z="$dir/$key.zkey"
    step "$circuit/$key: verification keys byte for byte"
    expect_ok snarkjs zkey export verificationkey "$z" "$dir/$key.vk.json"
    expect_ok "$proofpipe" zkey export-vk "$z" "$dir/$key.vk_pp.json"
    cmp "$dir/$key.vk.json" "$dir/$key.vk_pp.json" || fail "verification_key.json differs from snarkjs's"

    step "$circuit/$key: proofpipe proves, snarkjs verifies"
    expect_ok "$proofpipe" prove "$z" "$dir/witness.wtns" "$dir/$key.pp_proof.json" "$dir/$key.pp_public.json"
    grep -q "bn128" "$work/last.log" || fail "the prover did not say it proved on bn128"
    expect_ok snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.pp_proof.json"
    grep -q "OK" "$work/last.log" || fail "snarkjs did not say OK"
    expect_ok "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.pp_proof.json"

    step "$circuit/$key: snarkjs proves, proofpipe verifies; public.json identical"
    expect_ok snarkjs groth16 prove "$z" "$dir/witness.wtns" "$dir/$key.sj_proof.json" "$dir/$key.sj_public.json"
    cmp "$dir/$key.sj_public.json" "$dir/$key.pp_public.json" || fail "public.json differs from snarkjs's"
    expect_ok "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.sj_public.json" "$dir/$key.sj_proof.json"

    step "$circuit/$key: tampered public inputs and proofs fail under both verifiers"
    tamper "$dir/$key.pp_public.json" "$dir/$key.bad_public.json"
    expect_invalid snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.pp_proof.json"
    expect_invalid "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.pp_proof.json"
    expect_invalid "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.sj_proof.json"
    # pi_a of snarkjs's proof in proofpipe's: a valid point, the wrong proof.
    node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync(process.argv[1]));
      p.pi_a = JSON.parse(fs.readFileSync(process.argv[2])).pi_a; fs.writeFileSync(process.argv[3], JSON.stringify(p, null, 1));' \
      "$dir/$key.pp_proof.json" "$dir/$key.sj_proof.json" "$dir/$key.mixed_proof.json"
    expect_invalid snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.mixed_proof.json"
    expect_invalid "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.mixed_proof.json"
  done
  if [[ $circuit == "$1" ]]; then
    step "$circuit: --repeat keeps the key loaded: 3 timed proofs, the same proof as one prove with that seed"
    z="$dir/key.zkey"
    expect_ok "$proofpipe" prove --repeat 3 --seed 9 "$z" "$dir/witness.wtns" "$dir/rep_proof.json" "$dir/rep_public.json"
    [[ $(grep -c "^proofpipe op=prove-loaded curve=bn128 .* run=" "$work/last.log") == 3 ]] || fail "--repeat 3 did not time 3 proofs"
    grep -q "^proofpipe op=prove-loaded curve=bn128 .* runs=3 s_median=" "$work/last.log" || fail "--repeat printed no median"
    expect_ok "$proofpipe" prove --seed 9 "$z" "$dir/witness.wtns" "$dir/one_proof.json" "$dir/one_public.json"
    cmp "$dir/rep_proof.json" "$dir/one_proof.json" || fail "--repeat's proof differs from one prove with the same seed"
    if "$proofpipe" prove --repeat 0 "$z" "$dir/witness.wtns" "$dir/x.json" "$dir/y.json" > "$work/last.log" 2>&1; then
      fail "--repeat 0 was accepted"
    fi
    grep -q -- "--repeat" "$work/last.log" || fail "--repeat 0: no message naming the option"
  fi
  step "$circuit: proofpipe zkey setup on the bn128 .r1cs, proved by snarkjs and by proofpipe"
  expect_ok "$proofpipe" info "$dir/$circuit.r1cs"
  grep -q "BN254" "$work/last.log" || fail "info did not name the .r1cs's field"
  expect_ok "$proofpipe" info "$dir/witness.wtns"
  grep -q "BN254" "$work/last.log" || fail "info did not name the .wtns's field"
  expect_ok "$proofpipe" zkey setup "$dir/$circuit.r1cs" "$dir/pp.zkey" --seed 5
  expect_ok "$proofpipe" info "$dir/pp.zkey"
  grep -q "curve bn128" "$work/last.log" || fail "info did not name the .zkey's curve"
  expect_ok snarkjs zkey export verificationkey "$dir/pp.zkey" "$dir/pp.vk.json"
  expect_ok "$proofpipe" zkey export-vk "$dir/pp.zkey" "$dir/pp.vk_pp.json"
  cmp "$dir/pp.vk.json" "$dir/pp.vk_pp.json" || fail "verification_key.json of proofpipe's key differs from snarkjs's"
  expect_ok snarkjs groth16 prove "$dir/pp.zkey" "$dir/witness.wtns" "$dir/pp_sj_proof.json" "$dir/pp_sj_public.json"
  expect_ok snarkjs groth16 verify "$dir/pp.vk.json" "$dir/pp_sj_public.json" "$dir/pp_sj_proof.json"
  expect_ok "$proofpipe" prove "$dir/pp.zkey" "$dir/witness.wtns" "$dir/pp_pp_proof.json" "$dir/pp_pp_public.json"
  expect_ok snarkjs groth16 verify "$dir/pp.vk.json" "$dir/pp_pp_public.json" "$dir/pp_pp_proof.json"
  grep -q "OK" "$work/last.log" || fail "snarkjs did not say OK"

  step "$circuit: a key with a point off the curve is refused, naming it, and nothing is written"
  # H point 1's y, lowest byte (still below p): found through the .zkey's section table.
  node -e 'const fs = require("fs"); const b = fs.readFileSync(process.argv[1]);
    let pos = 12, h = -1;
    while (pos < b.length) { const id = b.readUInt32LE(pos), n = Number(b.readBigUInt64LE(pos + 4)); if (id === 9) h = pos + 12; pos += 12 + n; }
    if (h < 0) throw new Error("no section 9"); b[h + 64 + 32] ^= 1; fs.writeFileSync(process.argv[2], b);' \
    "$dir/key.zkey" "$dir/off_curve.zkey"
  rm -f "$dir/oc_proof.json" "$dir/oc_public.json"
  expect_error "section 9 \(H\): H point 1 of [0-9]+: not on the curve" \
    "$proofpipe" prove "$dir/off_curve.zkey" "$dir/witness.wtns" "$dir/oc_proof.json" "$dir/oc_public.json"
  [[ ! -e $dir/oc_proof.json && ! -e $dir/oc_public.json ]] || fail "a proof was written for a key with a point off the curve"

  step "$circuit: a key and a witness of different curves are named as such"
  expect_error "wrong prime" "$proofpipe" prove "$dir/key.zkey" tests/data/snarkjs/multiplier.wtns "$dir/x.json" "$dir/y.json"
  expect_error "wrong prime" "$proofpipe" prove tests/data/snarkjs/multiplier.zkey "$dir/witness.wtns" "$dir/x.json" "$dir/y.json"
  echo "=== $circuit: ok"
done
