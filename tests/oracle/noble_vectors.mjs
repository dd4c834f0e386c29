// SPDX-License-Identifier: Apache-2.0 OR MIT
// Independent BLS12-381 and BN254 test oracle: writes deterministic reference vectors (from
// @noble/curves) as JSON. BN254's (key "bn254": scalar multiples of both generators) print every
// coordinate as 32 bytes.
//
// Usage: node tests/oracle/noble_vectors.mjs [out.json]   (stdout if no path given)
//
// Conventions: field elements are canonical (noble stores plain bigints, not Montgomery),
// printed as big-endian lowercase hex with no 0x, zero-padded to 48 bytes (Fp) / 32 bytes (scalars).
// Point encodings are noble's toRawBytes(): the zcash/IETF format (flags in top 3 bits of byte 0;
// G2 puts the u-coefficient first: x_c1 || x_c0 [|| y_c1 || y_c0]).
//
// Fp12 layout in noble (node_modules/@noble/curves/esm/abstract/tower.js): an Fp12 value is
// {c0, c1} of Fp6 (Fp12 = Fp6[w]/(w^2 - v)); an Fp6 is {c0, c1, c2} of Fp2 (Fp6 = Fp2[v]/(v^3 - (u+1)));
// an Fp2 is {c0, c1} of Fp bigints (Fp2 = Fp[u]/(u^2 + 1)). We emit the 12 coefficients in the order
// c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1 -- the same order as noble's Fp12.toBytes().
//
// Pairing exponent: bls12_381.pairing(P, Q) applies final exponentiation by default
// (withFinalExponent = true). Its hard part (the x-chain in bls12-381.js Fp12finalExponentiate) raises
// to 3*(p^4 - p^2 + 1)/r, so the result is f^(3*(p^12-1)/r), i.e. the CUBE of the pairing with the
// exact exponent (p^12-1)/r. Verified numerically against Fp12.pow(f, k*(p^12-1)/r) for k = 1, 2, 3:
// only k = 3 matches. Since gcd(3, r) = 1 this is still a non-degenerate bilinear pairing. This cubed
// convention is the de-facto standard: e(G1, G2) here (c0.c0.c0 = 1250ebd8...) equals the GT vector of
// zkcrypto/pairing and kilic/bls12-381. An exact-exponent implementation must compare value == own^3.
import { createHash } from 'node:crypto';
import { writeFileSync, readFileSync } from 'node:fs';
import { bls12_381 as bls } from '@noble/curves/bls12-381';
import { bn254 } from '@noble/curves/bn254';

const { Fp, Fp2, Fr } = bls.fields;
const r = Fr.ORDER;
// The installed version (its package.json is not in "exports", so locate it via a resolvable entry).
const entry = new URL(import.meta.resolve('@noble/curves/bls12-381')).pathname;
const pkgDir = entry.slice(0, entry.lastIndexOf('@noble/curves/') + '@noble/curves/'.length);
const version = JSON.parse(readFileSync(pkgDir + 'package.json', 'utf8')).version;

const hexN = (n, bytes) => n.toString(16).padStart(2 * bytes, '0');
const fp = (n) => hexN(n, 48);
const sc = (n) => hexN(n, 32);
const bytesHex = (u8) => Buffer.from(u8).toString('hex');
// Deterministic pseudo-random value in [1, mod): sha512("proofpipe/<label>/<i>") mod (mod-1), plus 1.
const rand = (label, i, mod) =>
  BigInt('0x' + createHash('sha512').update(`proofpipe/${label}/${i}`).digest('hex')) % (mod - 1n) + 1n;

const scalars = [1n, 2n, 3n, r - 1n, ...Array.from({ length: 12 }, (_, i) => rand('scalar', i, r))];

const g1 = scalars.map((k) => {
  const P = bls.G1.ProjectivePoint.BASE.multiply(k);
  const { x, y } = P.toAffine();
  return { k: sc(k), x: fp(x), y: fp(y),
    compressed: bytesHex(P.toRawBytes(true)), uncompressed: bytesHex(P.toRawBytes(false)) };
});

const g2 = scalars.map((k) => {
  const P = bls.G2.ProjectivePoint.BASE.multiply(k);
  const { x, y } = P.toAffine();
  return { k: sc(k), x_c0: fp(x.c0), x_c1: fp(x.c1), y_c0: fp(y.c0), y_c1: fp(y.c1),
    compressed: bytesHex(P.toRawBytes(true)), uncompressed: bytesHex(P.toRawBytes(false)) };
});

const inf = (G) => ({ compressed: bytesHex(G.ProjectivePoint.ZERO.toRawBytes(true)),
  uncompressed: bytesHex(G.ProjectivePoint.ZERO.toRawBytes(false)) });

const fp12Coeffs = (f) =>
  [f.c0, f.c1].flatMap((f6) => [f6.c0, f6.c1, f6.c2].flatMap((f2) => [fp(f2.c0), fp(f2.c1)]));
const pairs = [[1n, 1n], [rand('pair-a', 0, r), rand('pair-b', 0, r)], [rand('pair-a', 1, r), rand('pair-b', 1, r)]];
const pairing = pairs.map(([a, b]) => ({ a: sc(a), b: sc(b), value: fp12Coeffs(
  bls.pairing(bls.G1.ProjectivePoint.BASE.multiply(a), bls.G2.ProjectivePoint.BASE.multiply(b))) }));

const p = Fp.ORDER;
const fp2_sqrt = Array.from({ length: 8 }, (_, i) => {
  const t = { c0: rand('fp2-sqrt-c0', i, p), c1: rand('fp2-sqrt-c1', i, p) };
  const a = Fp2.sqr(t), s = Fp2.sqrt(a);
  if (!Fp2.eql(Fp2.sqr(s), a)) throw new Error('Fp2 sqrt check failed');
  return { a_c0: fp(a.c0), a_c1: fp(a.c1), sqrt_c0: fp(s.c0), sqrt_c1: fp(s.c1) };
});
const fp_sqrt = Array.from({ length: 8 }, (_, i) => {
  const a = Fp.sqr(rand('fp-sqrt', i, p)), s = Fp.sqrt(a);
  if (!Fp.eql(Fp.sqr(s), a)) throw new Error('Fp sqrt check failed');
  return { a: fp(a), sqrt: fp(s) };
});

// BN254: the same scalar recipe below its own group order.
const bnR = bn254.fields.Fr.ORDER;
const bnScalars = [1n, 2n, 3n, bnR - 1n, ...Array.from({ length: 12 }, (_, i) => rand('bn254-scalar', i, bnR))];
const bnG1 = bnScalars.map((k) => {
  const { x, y } = bn254.G1.ProjectivePoint.BASE.multiply(k).toAffine();
  return { k: sc(k), x: sc(x), y: sc(y) };
});
const bnG2 = bnScalars.map((k) => {
  const { x, y } = bn254.G2.ProjectivePoint.BASE.multiply(k).toAffine();
  return { k: sc(k), x_c0: sc(x.c0), x_c1: sc(x.c1), y_c0: sc(y.c0), y_c1: sc(y.c1) };
});
// BN254 pairings e(aG1, bG2) as noble returns them: e^m for m = 2x(6x^2 + 3x + 1) relative to the exact
// (p^12 - 1)/r exponent (checked here against noble's own Fp12.pow of its Miller loop output).
const bnFp12 = bn254.fields.Fp12;
const bnP = bn254.fields.Fp.ORDER;
const bnCoeffs = (f) =>
  [f.c0, f.c1].flatMap((f6) => [f6.c0, f6.c1, f6.c2].flatMap((f2) => [sc(f2.c0), sc(f2.c1)]));
const bnPairs = [[1n, 1n], [rand('bn254-pair-a', 0, bnR), rand('bn254-pair-b', 0, bnR)]];
const bnPairing = bnPairs.map(([a, b]) => {
  const P = bn254.G1.ProjectivePoint.BASE.multiply(a), Q = bn254.G2.ProjectivePoint.BASE.multiply(b);
  const v = bn254.pairing(P, Q);
  const exact = bnFp12.pow(bn254.pairing(P, Q, false), (bnP ** 12n - 1n) / bnR);
  const x = 4965661367192848881n;
  if (!bnFp12.eql(v, bnFp12.pow(exact, 2n * x * (6n * x * x + 3n * x + 1n))))
    throw new Error('noble bn254 pairing exponent convention changed');
  return { a: sc(a), b: sc(b), value: bnCoeffs(v) };
});

const out = {
  generator: `noble-curves ${version}`,
  g1, g2,
  g1_infinity: inf(bls.G1),
  g2_infinity: inf(bls.G2),
  pairing,
  pairing_exponent_note: 'noble bls12_381.pairing applies final exponentiation by default and raises the Miller loop ' +
    'output to 3*(p^12-1)/r (hard part uses 3*(p^4-p^2+1)/r), so each value is the cube of the exact-exponent ' +
    '(p^12-1)/r pairing.',
  fp2_sqrt,
  fp_sqrt,
  bn254: { g1: bnG1, g2: bnG2, pairing: bnPairing },
};
const json = JSON.stringify(out, null, 1) + '\n';
if (process.argv[2]) writeFileSync(process.argv[2], json); else process.stdout.write(json);
