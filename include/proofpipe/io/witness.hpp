// SPDX-License-Identifier: Apache-2.0 OR MIT
// proofpipe's native witness file (a, b, c + assignments + densities) and decimal scalars.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proofpipe/groth16/prover.hpp"
#include "proofpipe/io/decimal.hpp"

namespace pp {

// Layout in docs/FORMATS.md. Writing is streamed; reading validates every scalar (< r) and
// the sizes, and throws std::runtime_error naming the file, the section, the index and the
// byte offset of the first problem.
void write_witness(const std::filesystem::path& path, const Witness& w);
// Reads a file at the storage's speed: large positioned reads on every core (TBB), each block
// converted and checked as it arrives. Same checks and messages as parse_witness.
Witness read_witness(const std::filesystem::path& path);
Witness parse_witness(std::span<const uint8_t> bytes, std::string_view name);

// The counts of a .ppw file, checked (magic, input count, rows >= inputs) together with the
// file's size, which the counts fix: what a caller can check before reading the scalars.
struct WitnessHeader {
  uint64_t rows = 0, inputs = 0, aux = 0;
  uint64_t file_bytes = 0;
};
WitnessHeader read_witness_header(const std::filesystem::path& path);
// The same of a file's bytes in memory: the counts checked against bytes.size() (a truncated or
// over-long file is reported as parse_witness reports it); the scalars are not read.
WitnessHeader parse_witness_header(std::span<const uint8_t> bytes, std::string_view name);
// The density bitmaps of a .ppw file (header and size checked, the scalars not read): what a
// GPU's layout of the key depends on (pp_key_preload).
Densities read_witness_densities(const std::filesystem::path& path);
// Reads the whole file into the page cache (one sequential stream, as `cat` reads, at the
// storage's speed), so that a later read_witness finds it there: run it on a thread of its own
// ahead of the reader. A file that cannot be opened or read is ignored (read_witness reports it).
void prefetch_witness(const std::filesystem::path& path);
// Bytes of a .ppw file with these counts; 0 when they overflow.
uint64_t witness_file_bytes(uint64_t rows, uint64_t inputs, uint64_t aux);

// A proof in snarkjs's proof.json shape (decimal affine coordinates, "protocol": "groth16",
// "curve": "bls12381"), two-space indented.
std::string proof_to_json(const Proof& proof);

// Public inputs as a JSON array of decimal strings (without the leading 1).
void write_public_json(const std::filesystem::path& path, std::span<const Fr> inputs_without_one);
// F: BLS12-381's Fr (the default) or BN254's.
template <class F = Fr>
std::vector<F> read_public_json(const std::filesystem::path& path);

}  // namespace pp
