// SPDX-License-Identifier: Apache-2.0 OR MIT
// Poseidon Merkle path of depth 256 (see poseidon_path.circom): 62,208 constraints, a 2^16
// domain, a dense witness (every hash state a full-size field element).
pragma circom 2.0.0;

include "poseidon_path.circom";

component main {public [leaf]} = PoseidonPath(256);
