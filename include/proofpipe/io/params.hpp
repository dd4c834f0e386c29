// SPDX-License-Identifier: Apache-2.0 OR MIT
// bellperson's `.params` (Groth16 Parameters) and VerifyingKey files: writers, mmap'd parallel readers, header peek.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/groth16/query_layout.hpp"
#include "proofpipe/io/serialize.hpp"

namespace pp {

class MappedFile;  // io/binfile.hpp

// Layout (bellperson src/groth16/params.rs `Parameters::write`, verifying_key.rs
// `VerifyingKey::write`); every point uncompressed (G1 96 bytes, G2 192 bytes), counts u32
// big-endian, nothing between the fields and nothing after them:
//   vk:  alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2  (864 bytes)
//        u32 #ic, ic points
//   then h, l, a, b_g1 (G1) and b_g2 (G2), each as u32 count + points.
// A VK file (write_vk) is the vk part alone.
//
// Validation follows bellperson's readers, so that a file one accepts the other accepts:
//  * the six VK points and ic are always subgroup-checked (bellperson decodes them with the
//    checked `from_uncompressed`); they are few, and a verifier depends on them;
//  * h, l, a, b_g1, b_g2 are subgroup-checked only with SubgroupCheck::yes (bellperson's
//    `checked` flag): that check is one scalar multiplication per point, which dominates the
//    load time of large keys that come from a trusted ceremony file;
//  * the point at infinity is rejected in ic and in the five query vectors (bellperson:
//    "point at infinity"), accepted for the six VK points.
inline constexpr std::size_t kVkFixedBytes = 3 * kG1UncompressedBytes + 3 * kG2UncompressedBytes;  // 864

struct ParamsReadOptions {
  SubgroupCheck subgroup = SubgroupCheck::no;  // for h, l, a, b_g1, b_g2 (see above)
};

// Every read/parse/write failure. The message starts with the file (or the `name` given to a
// parse_* function) and says where: the vector ("h", "l", "a", "b_g1", "b_g2", "vk.ic" or a
// single VK point such as "vk.delta_g2"), the index within it, the byte offset in the file and
// the decode error, or the expected and actual sizes of a truncated or over-long file.
class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What `proofpipe info` shows: the VK and the vector lengths, without touching point data.
struct ParamsHeader {
  VerifyingKey vk;
  KeyConvention convention = kBellmanConvention;  // a .params file's; a key cache records its own
  std::size_t h = 0, l = 0, a = 0, b_g1 = 0, b_g2 = 0;
  uint64_t file_size = 0;
  bool key_cache = false;  // the file is a key cache (io/key_cache.hpp), not a .params file
};

// Exact encoded sizes (throw ParamsError when a vector has more than 2^32 - 1 points, which
// the u32 counts cannot express).
uint64_t params_encoded_size(const ProvingKey& pk);
uint64_t vk_encoded_size(const VerifyingKey& vk);

// Writers: stream through a buffer; any I/O error throws ParamsError naming the file. The
// file is truncated/created; on error it is left incomplete (readers reject it).
void write_params(const std::filesystem::path& path, const ProvingKey& pk);
void write_vk(const std::filesystem::path& path, const VerifyingKey& vk);

// In-memory encoders, byte for byte what the writers put in a file.
std::vector<uint8_t> encode_params(const ProvingKey& pk);
std::vector<uint8_t> encode_vk(const VerifyingKey& vk);

// Readers. Each opens and maps the file once (read-only) and dispatches on its first bytes:
// read_params calls parse_params on a .params file, and on a key cache (io/key_cache.hpp,
// recognised by its magic) map_key_cache (its points stay file pages, checked by checksum;
// `options` does not apply); read_params_header reads either's header.
// Points are decoded in parallel (oneTBB); the error reported is always the first bad point in
// file order, whatever the thread schedule. The whole layout (counts against the file size) is
// checked before any point is decoded, so a truncated file never costs a decode pass.
ProvingKey read_params(const std::filesystem::path& path, const ParamsReadOptions& options = {});
ProvingKey parse_params(std::span<const uint8_t> bytes, const ParamsReadOptions& options,
                        std::string_view name);

// The query layout of a key from its header (in the header's convention): what the
// planner and a witness check need, without reading a point. ParamsError naming `name` when the
// counts cannot belong to one key (QueryLayout::of_sizes).
QueryLayout params_layout(const ParamsHeader& header, std::string_view name);

// Reads the VK and the five counts, skipping the point data (only the pages holding the counts
// and the VK are read); the layout must still account for the file size exactly. VK points are
// validated as above.
ParamsHeader read_params_header(const std::filesystem::path& path);
// The whole file mapped read-only (a key's readers share it): ParamsError naming the file when it
// cannot be opened, is not a regular file, or cannot be mapped.
std::shared_ptr<const MappedFile> map_key_file(const std::filesystem::path& path);
ParamsHeader parse_params_header(std::span<const uint8_t> bytes, std::string_view name);

// A VK file: exactly the vk part of the layout.
VerifyingKey read_vk(const std::filesystem::path& path);
VerifyingKey parse_vk(std::span<const uint8_t> bytes, std::string_view name);

}  // namespace pp
