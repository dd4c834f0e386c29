// SPDX-License-Identifier: Apache-2.0 OR MIT
// circom/snarkjs witness files (`.wtns`): the full assignment z, canonical little-endian scalars.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "proofpipe/ff/bls12_381.hpp"
#include "proofpipe/ff/bn254.hpp"
#include "proofpipe/io/binfile.hpp"

namespace pp {

// Magic "wtns", version 2 (1 accepted), two sections:
//   1 u32 n8 (= 32), prime r, u32 nWitness
//   2 nWitness × 32-byte little-endian canonical scalars
// z[0] is the constant 1, then outputs, public inputs, private inputs, internal wires.
// Throws FormatError naming the file, section, index and byte offset (wrong prime or n8,
// section size not nWitness·32, a scalar >= r, z[0] != 1).
// F is the scalar field: BLS12-381's Fr (the default) or BN254's (circom's bn128); a file over the
// other one is a FormatError that says so.
template <class F = Fr>
std::vector<F> parse_wtns(std::span<const uint8_t> bytes, std::string_view name);
template <class F = Fr>
std::vector<F> read_wtns(const std::filesystem::path& path);
// The first min(count, nWitness) values (z[0] = 1 included; the whole file's layout is checked,
// only these values are converted), and nWitness in *total when total is not NULL.
template <class F = Fr>
std::vector<F> read_wtns_prefix(const std::filesystem::path& path, std::size_t count, std::size_t* total = nullptr);

// The field of a .wtns (from its header's prime): true for BN254's, false for BLS12-381's;
// FormatError naming the file for any other prime.
bool wtns_file_is_bn254(const std::filesystem::path& path);

std::vector<uint8_t> encode_wtns(std::span<const Fr> z);
std::vector<uint8_t> encode_wtns(std::span<const bn254::Fr> z);
void write_wtns(const std::filesystem::path& path, std::span<const Fr> z);
void write_wtns(const std::filesystem::path& path, std::span<const bn254::Fr> z);

}  // namespace pp
