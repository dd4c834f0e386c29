#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR MIT
# Issue 46's large circom circuit at a CI size: the mul_chain generator (tests/circom/gen-mul-chain,
# the same one that makes the 2^20-constraint circuit proved on the GPU by scripts/h200-zkey)
# compiled by circom2 with --prime bls12381 at N constraints, keyed by proofpipe's test setup
# (the committed powers of tau covers 2^10 only), proved by proofpipe, verified by snarkjs and by
# proofpipe; the public output must be the chain's value computed here independently, and a
# tampered public input must fail under both verifiers.
# Usage: mul_chain.sh PROOFPIPE WORKDIR [N]   (N: constraints, default 4096)
set -euo pipefail
proofpipe=$(realpath "$1")
work=$2
n=${3:-4096}
mkdir -p "$work"
work=$(realpath "$work")
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
# shellcheck source=tests/snarkjs/lib.sh
source "$repo/tests/snarkjs/lib.sh"   # snarkjs, step, fail, expect_ok/_invalid/_error, tamper
dir="$work/mul_chain_$n"
rm -rf "$dir" && mkdir -p "$dir"

step "mul_chain N=$n: generate, circom2 --O2 --prime bls12381, witness"
expect_ok tests/circom/gen-mul-chain "$n" "$dir"
expect_ok "$proofpipe" info "$dir/mul_chain_$n.r1cs"
grep -qE "^  constraints: $n\$" "$work/last.log" || { cat "$work/last.log"; fail "expected $n constraints"; }
expect_ok "$proofpipe" info "$dir/witness.wtns"

step "mul_chain N=$n: proofpipe zkey setup, verification key as snarkjs exports it"
expect_ok "$proofpipe" zkey setup "$dir/mul_chain_$n.r1cs" "$dir/key.zkey" --seed 7
expect_ok "$proofpipe" zkey export-vk "$dir/key.zkey" "$dir/vk.json"
expect_ok snarkjs zkey export verificationkey "$dir/key.zkey" "$dir/vk_sj.json"
cmp "$dir/vk_sj.json" "$dir/vk.json" || fail "verification_key.json differs from snarkjs's"

step "mul_chain N=$n: proofpipe proves, snarkjs and proofpipe verify"
expect_ok "$proofpipe" prove "$dir/key.zkey" "$dir/witness.wtns" "$dir/proof.json" "$dir/public.json"
expect_ok snarkjs groth16 verify "$dir/vk.json" "$dir/public.json" "$dir/proof.json"
grep -q "OK" "$work/last.log" || { cat "$work/last.log"; fail "snarkjs did not say OK"; }
expect_ok "$proofpipe" verify "$dir/vk.json" "$dir/public.json" "$dir/proof.json"

step "mul_chain N=$n: public.json is [out, seed] with out = t[N] of the chain, computed here"
node -e 'const fs = require("fs");
  const r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;
  const n = +process.argv[1], inp = JSON.parse(fs.readFileSync(process.argv[2]));
  const x = inp.x.map(BigInt), k = x.length;
  let t = (BigInt(inp.seed) + x[0]) % r;
  for (let i = 1; i <= n; i++) t = (t * (t + x[i % k]) + 1n) % r;
  const want = [t.toString(), String(inp.seed)], got = JSON.parse(fs.readFileSync(process.argv[3]));
  if (JSON.stringify(got) !== JSON.stringify(want)) { console.error("public", got, "expected", want); process.exit(1); }' \
  "$n" "$dir/mul_chain_$n.input.json" "$dir/public.json" || fail "public signals are not [t[N], seed]"

step "mul_chain N=$n: a tampered public input (out + 1) fails under both verifiers"
tamper "$dir/public.json" "$dir/bad_public.json"
cmp -s "$dir/public.json" "$dir/bad_public.json" && fail "tamper left public.json unchanged"
expect_invalid snarkjs groth16 verify "$dir/vk.json" "$dir/bad_public.json" "$dir/proof.json"
expect_invalid "$proofpipe" verify "$dir/vk.json" "$dir/bad_public.json" "$dir/proof.json"
echo "=== mul_chain N=$n: ok"
