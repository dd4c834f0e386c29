#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR MIT
# snarkjs/circom interoperability, end to end: circom2 compiles circuits with --prime bls12381,
# snarkjs makes keys (from the committed powers of tau) and witnesses, proofpipe proves and
# snarkjs verifies, snarkjs proves and proofpipe verifies, tampered public inputs fail under
# both, and the .zkey <-> .params conversions give proofs that snarkjs accepts.
# Usage: interop.sh PROOFPIPE WORKDIR CIRCUIT...   (CIRCUIT: multiplier, poseidon_path3, sha256_short)
set -euo pipefail
proofpipe=$(realpath "$1")
work=$2
mkdir -p "$work"
work=$(realpath "$work")
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"   # circom2 (WASI) resolves -l and include paths only below the working directory
ptau="$repo/tests/data/pot10_bls12381.ptau"
# shellcheck source=tests/snarkjs/lib.sh
source "$repo/tests/snarkjs/lib.sh"   # snarkjs, step, fail, expect_ok/_invalid/_error, tamper

for circuit in "$@"; do
  dir="$work/$circuit"
  rm -rf "$dir" && mkdir -p "$dir"
  step "$circuit: circom2 --prime bls12381"
  expect_ok npx --no-install circom2 "tests/circom/$circuit.circom" --r1cs --wasm --O2 --prime bls12381 \
    -l node_modules -l tests/circom -o "$dir"
  expect_ok "$proofpipe" info "$dir/$circuit.r1cs"
  step "$circuit: witness"
  expect_ok snarkjs wtns calculate "$dir/${circuit}_js/$circuit.wasm" "tests/circom/$circuit.input.json" \
    "$dir/witness.wtns"
  expect_ok "$proofpipe" info "$dir/witness.wtns"

  keys=()
  if [[ $circuit == sha256_short ]]; then
    # 29k constraints need a 2^15 powers of tau (40+ minutes of wasm to make); proofpipe's test
    # setup writes the .zkey instead, through the bellman -> snarkjs conversion.
    step "$circuit: proofpipe zkey setup"
    expect_ok "$proofpipe" zkey setup "$dir/$circuit.r1cs" "$dir/key.zkey" --seed 7
    keys=(key)
  else
    step "$circuit: snarkjs groth16 setup + zkey contribute"
    expect_ok snarkjs groth16 setup "$dir/$circuit.r1cs" "$ptau" "$dir/key0.zkey"
    expect_ok snarkjs zkey contribute "$dir/key0.zkey" "$dir/key.zkey" --name=ci -e="proofpipe ci entropy"
    keys=(key0 key)  # setup writes sections as 1,2,4,3,9,8,5,6,7,10 with delta = 1; contribute in order
  fi

  for key in "${keys[@]}"; do
    z="$dir/$key.zkey"
    step "$circuit/$key: verification keys byte for byte"
    expect_ok "$proofpipe" info "$z"
    expect_ok snarkjs zkey export verificationkey "$z" "$dir/$key.vk.json"
    expect_ok "$proofpipe" zkey export-vk "$z" "$dir/$key.vk_pp.json"
    cmp "$dir/$key.vk.json" "$dir/$key.vk_pp.json" || fail "verification_key.json differs from snarkjs's"

    step "$circuit/$key: proofpipe proves, snarkjs verifies"
    expect_ok "$proofpipe" prove "$z" "$dir/witness.wtns" "$dir/$key.pp_proof.json" "$dir/$key.pp_public.json"
    expect_ok snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.pp_proof.json"
    grep -q "OK" "$work/last.log" || fail "snarkjs did not say OK"
    expect_ok "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/$key.pp_proof.json"

    step "$circuit/$key: snarkjs proves, proofpipe verifies; public.json identical"
    expect_ok snarkjs groth16 prove "$z" "$dir/witness.wtns" "$dir/$key.sj_proof.json" "$dir/$key.sj_public.json"
    cmp "$dir/$key.sj_public.json" "$dir/$key.pp_public.json" || fail "public.json differs from snarkjs's"
    expect_ok "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.sj_public.json" "$dir/$key.sj_proof.json"

    step "$circuit/$key: a tampered public input fails under both verifiers"
    tamper "$dir/$key.pp_public.json" "$dir/$key.bad_public.json"
    expect_invalid snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.pp_proof.json"
    expect_invalid "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.pp_proof.json"
    expect_invalid "$proofpipe" verify "$dir/$key.vk.json" "$dir/$key.bad_public.json" "$dir/$key.sj_proof.json"
  done

  key=${keys[-1]}
  z="$dir/$key.zkey"
  step "$circuit: malformed inputs give located errors"
  head -c 1000 "$z" > "$dir/truncated.zkey"
  expect_error "truncated.zkey: .*truncated.*byte offset" "$proofpipe" prove "$dir/truncated.zkey" "$dir/witness.wtns" \
    "$dir/x.json" "$dir/y.json"
  expect_error "not a .zkey file" "$proofpipe" prove "$dir/witness.wtns" "$dir/witness.wtns" "$dir/x.json" "$dir/y.json"
  expect_error "not a .wtns file" "$proofpipe" prove "$z" "$dir/$circuit.r1cs" "$dir/x.json" "$dir/y.json"
  if [[ $circuit == multiplier ]]; then  # the same circuit over bn128: a .wtns of the other curve
    mkdir -p "$dir/bn128"
    expect_ok npx --no-install circom2 "tests/circom/$circuit.circom" --r1cs --wasm --O2 -o "$dir/bn128"
    expect_ok snarkjs wtns calculate "$dir/bn128/${circuit}_js/$circuit.wasm" "tests/circom/$circuit.input.json" \
      "$dir/bn128/witness.wtns"
    expect_ok "$proofpipe" info "$dir/bn128/$circuit.r1cs"   # a bn128 circuit is read as one
    grep -q "BN254" "$work/last.log" || fail "info did not name the bn128 circuit's field"
    expect_error "wrong prime" "$proofpipe" prove "$z" "$dir/bn128/witness.wtns" "$dir/x.json" "$dir/y.json"
  else
    expect_error "nVars" "$proofpipe" prove "$z" tests/data/snarkjs/multiplier.wtns "$dir/x.json" "$dir/y.json"
  fi
  if [[ $circuit != sha256_short ]]; then  # the conversions run n log n scalar multiplications: small circuits
    step "$circuit: .zkey -> .params (H to bellman's basis), proved with --params, verified by snarkjs"
    expect_ok "$proofpipe" zkey export-params "$z" "$dir/$key.params"
    expect_ok "$proofpipe" zkey export-ppw "$z" "$dir/witness.wtns" "$dir/witness.ppw" --public "$dir/ppw_public.json"
    expect_ok "$proofpipe" prove --params "$dir/$key.params" --witness "$dir/witness.ppw" --out "$dir/params_proofs.bin" \
      --json "$dir/params_proofs.json"
    node -e 'const a = require(process.argv[1]); require("fs").writeFileSync(process.argv[2], JSON.stringify(a[0], null, 1));' \
      "$(realpath "$dir/params_proofs.json")" "$dir/params_proof.json"
    expect_ok snarkjs groth16 verify "$dir/$key.vk.json" "$dir/$key.pp_public.json" "$dir/params_proof.json"
    expect_ok "$proofpipe" verify --params "$dir/$key.params" --proofs "$dir/params_proofs.bin" --public "$dir/ppw_public.json"

    step "$circuit: .params -> .zkey (H back to snarkjs's basis), proved by snarkjs and by proofpipe"
    expect_ok "$proofpipe" zkey import-params "$dir/$circuit.r1cs" "$dir/$key.params" "$dir/back.zkey" --rows snarkjs
    expect_ok snarkjs groth16 prove "$dir/back.zkey" "$dir/witness.wtns" "$dir/back_proof.json" "$dir/back_public.json"
    expect_ok snarkjs groth16 verify "$dir/$key.vk.json" "$dir/back_public.json" "$dir/back_proof.json"
    expect_ok "$proofpipe" prove "$dir/back.zkey" "$dir/witness.wtns" "$dir/back_pp_proof.json" "$dir/back_pp_public.json"
    expect_ok snarkjs groth16 verify "$dir/$key.vk.json" "$dir/back_pp_public.json" "$dir/back_pp_proof.json"

    step "$circuit: a bellman key (rows on 7, H = tau^i Z/delta) -> .zkey, proved by snarkjs and proofpipe"
    expect_ok "$proofpipe" zkey setup "$dir/$circuit.r1cs" "$dir/pp.zkey" --seed 11 --via-params "$dir/pp.params"
    expect_ok "$proofpipe" zkey import-params "$dir/$circuit.r1cs" "$dir/pp.params" "$dir/pp_back.zkey"
    cmp "$dir/pp.zkey" "$dir/pp_back.zkey" || fail "import-params differs from the setup's own conversion"
    expect_ok snarkjs zkey export verificationkey "$dir/pp.zkey" "$dir/pp.vk.json"
    expect_ok snarkjs groth16 prove "$dir/pp.zkey" "$dir/witness.wtns" "$dir/pp_sj_proof.json" "$dir/pp_sj_public.json"
    expect_ok snarkjs groth16 verify "$dir/pp.vk.json" "$dir/pp_sj_public.json" "$dir/pp_sj_proof.json"
    expect_ok "$proofpipe" prove "$dir/pp.zkey" "$dir/witness.wtns" "$dir/pp_pp_proof.json" "$dir/pp_pp_public.json"
    expect_ok snarkjs groth16 verify "$dir/pp.vk.json" "$dir/pp_pp_public.json" "$dir/pp_pp_proof.json"
  fi

  if [[ $circuit == sha256_short ]]; then
    step "$circuit: the public digest is SHA-256 of the message"
    node -e 'const fs = require("fs");
      const bits = JSON.parse(fs.readFileSync(process.argv[1])).msg.map(Number);
      const msg = Buffer.alloc(bits.length / 8);
      bits.forEach((b, i) => { msg[i >> 3] |= b << (7 - (i & 7)); });
      const d = require("crypto").createHash("sha256").update(msg).digest("hex");
      const want = [BigInt("0x" + d.slice(0, 32)).toString(), BigInt("0x" + d.slice(32)).toString()];
      const got = JSON.parse(fs.readFileSync(process.argv[2]));
      if (JSON.stringify(got) !== JSON.stringify(want)) { console.error("digest", got, "expected", want); process.exit(1); }' \
      "tests/circom/$circuit.input.json" "$dir/$key.pp_public.json" || fail "SHA-256 digest mismatch"
  fi
  echo "=== $circuit: ok"
done
