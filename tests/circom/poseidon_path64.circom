// SPDX-License-Identifier: Apache-2.0 OR MIT
// Poseidon Merkle path of depth 64 (see poseidon_path.circom).
pragma circom 2.0.0;

include "poseidon_path.circom";

component main {public [leaf]} = PoseidonPath(64);
