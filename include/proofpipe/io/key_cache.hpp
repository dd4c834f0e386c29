// SPDX-License-Identifier: Apache-2.0 OR MIT
// The key cache: a proving key stored as proofpipe holds it in memory (Montgomery-form points,
// little-endian limbs), so that it is memory-mapped instead of decoded. A 2^27 PoRep key is 45 GiB;
// read from a `.params` file it takes decoding time and 45 GiB of process memory for as long as
// the key is loaded. Mapped, its points are file pages: the GPU prover copies them to the device
// and hands the pages back to the kernel (HostArray::release_pages), so a key resident on the GPU
// costs no host memory, and the CPU prover or a streamed plan reads them again from the file.
//
// Layout (little-endian; every section starts on a 4096-byte boundary):
//   header (one page): magic "PPKCACHE", u32 version, u32 sizeof(G1Affine), u32 sizeof(G2Affine),
//     u32 H basis, u64 domain generator, u64 checksum block bytes, u64 file bytes,
//     {u64 offset, u64 bytes} of the VK and of the checksum table, {u64 offset, u64 count} of
//     h, l, a, b_g1, b_g2; then the XXH3-64 of the table and VK, then the XXH3-64 of the header;
//   the VK in bellman's encoding (io/params.hpp, subgroup-checked when read);
//   the checksum table: the XXH3-64 of each block of each point section, sections in order;
//   the points of h, l, a, b_g1 (G1) and b_g2 (G2), raw.
//
// A cache is made from a key that was validated when it was read (or made); reading one checks
// the structure, the VK, and every block's checksum (in parallel, each block's pages handed back
// once checked), so a truncated, corrupted or foreign file is an error naming the file, the
// section, the block and its byte range — never a key with bad points.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "proofpipe/groth16/keys.hpp"
#include "proofpipe/io/params.hpp"

namespace pp {

// The first 8 bytes of a key cache (read_params dispatches on them).
inline constexpr char kKeyCacheMagic[8] = {'P', 'P', 'K', 'C', 'A', 'C', 'H', 'E'};
bool is_key_cache(std::span<const uint8_t> first_bytes);

// Writes `pk` to `path` (through a temporary file renamed into place, so a reader never sees a
// half-written cache). ParamsError naming the file on failure.
void write_key_cache(const std::filesystem::path& path, const ProvingKey& pk);

// Maps a key cache: the returned key's points are views of the mapping (HostArray::is_view),
// which stays alive as long as any of them. ParamsError naming the file and where on failure.
ProvingKey map_key_cache(const std::filesystem::path& path);
// The same from a mapping of the whole file (read_params's, map_key_file); `path` names it in errors.
ProvingKey map_key_cache(std::shared_ptr<const MappedFile> file, const std::filesystem::path& path);
// The VK, the convention and the counts, with the header's checks but not the points' checksums.
ParamsHeader read_key_cache_header(const std::filesystem::path& path);
ParamsHeader key_cache_header(std::span<const uint8_t> bytes, const std::filesystem::path& path);

}  // namespace pp
