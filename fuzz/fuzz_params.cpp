// SPDX-License-Identifier: Apache-2.0 OR MIT
// libFuzzer target for the .params parser: any input must parse or throw ParamsError; accepted inputs must re-encode to themselves.
// The same bytes as a key cache (io/key_cache.hpp): the header reader and the mapper, on a memfd
// holding the input, must accept or throw ParamsError and agree with each other.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "proofpipe/io/key_cache.hpp"
#include "proofpipe/io/params.hpp"

using namespace pp;

namespace {

// Findings that are not crashes: the fuzzer only reports aborts, so invariant violations abort.
void require(bool ok) {
  if (!ok) std::abort();
}

bool same_vk(const VerifyingKey& x, const VerifyingKey& y) {
  return x.alpha_g1 == y.alpha_g1 && x.beta_g1 == y.beta_g1 && x.beta_g2 == y.beta_g2 &&
         x.gamma_g2 == y.gamma_g2 && x.delta_g1 == y.delta_g1 && x.delta_g2 == y.delta_g2 && x.ic == y.ic;
}

// The input as a key cache. The header reader runs on the bytes; only when it accepts (the header
// carries its own checksum) is the input written to a memfd and mapped as a file, which also
// checks every block's checksum.
void key_cache_case(std::span<const uint8_t> in) {
  ParamsHeader hdr;
  try {
    hdr = key_cache_header(in, "fuzz");
  } catch (const ParamsError&) {
    return;
  }
  require(hdr.key_cache && hdr.file_size == in.size());
  const int fd = memfd_create("fuzz.ppk", MFD_CLOEXEC);
  require(fd >= 0);
  std::size_t done = 0;
  while (done < in.size()) {
    const ssize_t n = ::write(fd, in.data() + done, in.size() - done);
    require(n > 0);
    done += std::size_t(n);
  }
  try {
    const ProvingKey pk = map_key_cache("/proc/self/fd/" + std::to_string(fd));
    require(same_vk(pk.vk, hdr.vk) && pk.convention == hdr.convention && pk.h.size() == hdr.h &&
            pk.l.size() == hdr.l && pk.a.size() == hdr.a && pk.b_g1.size() == hdr.b_g1 && pk.b_g2.size() == hdr.b_g2);
    require(pk.h.is_view() && pk.b_g2.is_view());
  } catch (const ParamsError&) {
    // a block whose checksum does not match: the header alone cannot see it
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const uint8_t> in(data, size);

  try {
    const ProvingKey pk = parse_params(in, ParamsReadOptions{}, "fuzz");
    // Every accepted encoding is canonical (flags, infinity and coordinates < p are all
    // checked), so decoding is injective and writing the key back must give the input.
    const std::vector<uint8_t> out = encode_params(pk);
    require(out.size() == size && std::equal(out.begin(), out.end(), data));
    // The header reader checks a subset of what the full reader checks. Only run on accepted
    // inputs: on the others it would repeat the same layout walk and VK decoding (the VK
    // subgroup checks dominate the cost of an input) for no new code.
    ParamsHeader hdr;
    try {
      hdr = parse_params_header(in, "fuzz");
    } catch (const ParamsError&) {
      std::abort();
    }
    require(same_vk(hdr.vk, pk.vk) && hdr.h == pk.h.size() && hdr.l == pk.l.size() && hdr.a == pk.a.size() &&
            hdr.b_g1 == pk.b_g1.size() && hdr.b_g2 == pk.b_g2.size() && hdr.file_size == size);
  } catch (const ParamsError&) {
  }

  // The same bytes as a VK file (a VK is a prefix of a params file, so seeds reach it too).
  try {
    const VerifyingKey vk = parse_vk(in, "fuzz");
    const std::vector<uint8_t> out = encode_vk(vk);
    require(out.size() == size && std::equal(out.begin(), out.end(), data));
  } catch (const ParamsError&) {
  }

  key_cache_case(in);
  return 0;
}
