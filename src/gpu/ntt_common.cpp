// The host side shared by the GPU NTT and its CPU twin: schedules, roots, and the twin itself.

#include <tbb/parallel_for.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "proofpipe/gpu/ntt.hpp"

namespace pp::gpu {

NttSchedule schedule(const NttOp& op) {
  NttSchedule s;
  s.dif = op.in == Order::natural;
  s.inverse = op.dir == Direction::inverse;
  if (op.dir == Direction::forward) {
    s.pre = op.coset ? Scale::shift : Scale::none;
  } else {
    s.post = op.coset ? Scale::shift_inv : Scale::size_inv;
  }
  s.permute_after = op.out == op.in;
  return s;
}

NttRoots roots_of(const Domain& d, const Fr& shift) {
  return NttRoots{d.omega(), d.omega_inv(), shift, shift.inverse()};
}
NttRoots roots_of(const Domain& d) { return roots_of(d, d.generator()); }

namespace {

// Runs one pass the way a CUDA block would: load, k levels (each a loop over the block's
// "threads"), twist, store — block after block, blocks in parallel.
void twin_pass(Fr* a, const NttPass& p, const NttTables& t, bool dif, bool inverse) {
  const Fr* small = inverse ? t.small_inv : t.small_fwd;
  const Fr* lo = inverse ? t.inv_lo : t.fwd_lo;
  const Fr* hi = inverse ? t.inv_hi : t.fwd_hi;
  tbb::parallel_for(uint64_t(0), p.blocks(), [&](uint64_t block) {
    const uint32_t n = p.elements_per_block();
    std::vector<uint64_t> mem(4 * std::size_t(n));
    const LimbSlots s{mem.data(), n};
    for (uint32_t e = 0; e < n; ++e) {
      Fr v = a[p.global_index(block, e)];
      if (!dif && p.m != 0) v = v * two_level_pow(lo, hi, t.b, p.twist_exponent(block, e));
      s.set(e, v);
    }
    if (dif) {
      for (int j = p.k - 1; j >= 0; --j)
        for (uint32_t q = 0; q < p.threads_per_block(); ++q) dif_butterfly(s, p.cols, j, q, small, t.small_lg);
    } else {
      for (int j = 0; j < p.k; ++j)
        for (uint32_t q = 0; q < p.threads_per_block(); ++q) dit_butterfly(s, p.cols, j, q, small, t.small_lg);
    }
    for (uint32_t e = 0; e < n; ++e) {
      Fr v = s.get(e);
      if (dif && p.m != 0) v = v * two_level_pow(lo, hi, t.b, p.twist_exponent(block, e));
      a[p.global_index(block, e)] = v;
    }
  });
}

void twin_scale(std::span<Fr> a, const NttTables& t, Scale kind, bool bit_reversed) {
  if (kind == Scale::none) return;
  tbb::parallel_for(std::size_t(0), a.size(), [&](std::size_t i) { scale_element(a.data(), i, t, kind, bit_reversed); });
}

}  // namespace

void ntt_twin(std::span<Fr> a, const Domain& d, const NttRoots& roots, const NttOp& op, int max_pass) {
  const int lg = d.lg();
  if (lg > kMaxNttLg)
    throw std::invalid_argument("pp::gpu::ntt_twin: 2^" + std::to_string(lg) + " exceeds the GPU limit 2^" +
                                std::to_string(kMaxNttLg));
  if (a.size() != d.size())
    throw std::invalid_argument("pp::gpu::ntt_twin: " + std::to_string(a.size()) + " values for a domain of " +
                                std::to_string(d.size()));
  std::vector<Fr> buf(table_elements(lg));
  tbb::parallel_for(std::size_t(0), buf.size(), [&](std::size_t i) { buf[i] = table_entry(roots, lg, i); });
  const NttTables t = bind_tables(buf.data(), lg, d.size_inv());
  const NttSchedule s = schedule(op);
  if (max_pass < 1 || max_pass > kMaxPassLg)
    throw std::invalid_argument("pp::gpu::ntt_twin: max_pass " + std::to_string(max_pass) + " outside [1, " +
                                std::to_string(kMaxPassLg) + "]");
  const NttPlan plan = make_ntt_plan(lg, max_pass);

  twin_scale(a, t, s.pre, !s.dif);
  if (s.dif) {
    for (int i = 0; i < plan.count; ++i) twin_pass(a.data(), plan.pass[i], t, true, s.inverse);
  } else {
    for (int i = plan.count - 1; i >= 0; --i) twin_pass(a.data(), plan.pass[i], t, false, s.inverse);
  }
  twin_scale(a, t, s.post, s.dif);
  if (s.permute_after) bit_reverse_permute(a);
}

}  // namespace pp::gpu
