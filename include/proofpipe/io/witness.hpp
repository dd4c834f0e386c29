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
Witness read_witness(const std::filesystem::path& path);
Witness parse_witness(std::span<const uint8_t> bytes, std::string_view name);

// A proof in snarkjs's proof.json shape (decimal affine coordinates, "protocol": "groth16",
// "curve": "bls12381"), two-space indented.
std::string proof_to_json(const Proof& proof);

// Public inputs as a JSON array of decimal strings (without the leading 1).
void write_public_json(const std::filesystem::path& path, std::span<const Fr> inputs_without_one);
std::vector<Fr> read_public_json(const std::filesystem::path& path);

}  // namespace pp
