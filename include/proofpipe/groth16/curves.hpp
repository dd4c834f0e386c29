// SPDX-License-Identifier: Apache-2.0 OR MIT
// The pairing-friendly curves the Groth16 layer is written over: BLS12-381 (Filecoin, bellman,
// snarkjs's bls12381) and BN254 (snarkjs's and circom's bn128). Each names its scalar field, its
// two groups and their generators, and its pairing's target group; the keys, witnesses, prover
// and verifier are templates over one of these.
#pragma once

#include "proofpipe/ec/bls12_381.hpp"
#include "proofpipe/ec/bn254.hpp"
#include "proofpipe/ff/tower.hpp"

namespace pp {

template <class F, class C1, class C2, class T>
struct PairingGroups {
  using Fr = F;
  using G1 = C1;
  using G2 = C2;
  using Gt = T;
};

struct Bls12_381 : PairingGroups<Fr, G1Curve, G2Curve, Fp12> {
  static G1Affine g1() { return g1_generator(); }
  static G2Affine g2() { return g2_generator(); }
};

namespace bn254 {
struct Bn254 : PairingGroups<Fr, G1Curve, G2Curve, Fp12> {
  static G1Affine g1() { return g1_generator(); }
  static G2Affine g2() { return g2_generator(); }
};
}  // namespace bn254

// The curve whose scalar field is F: what a circuit over F is proved on.
template <class F>
struct CurveOfField;
template <>
struct CurveOfField<Fr> {
  using type = Bls12_381;
};
template <>
struct CurveOfField<bn254::Fr> {
  using type = bn254::Bn254;
};
template <class F>
using CurveOf = typename CurveOfField<F>::type;

}  // namespace pp
