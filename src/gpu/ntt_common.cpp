// SPDX-License-Identifier: Apache-2.0 OR MIT
// The host side shared by the GPU NTT and its CPU twin: schedules, roots, and the twin itself.

#include <tbb/parallel_for.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ntt_kernels.hpp"
#include "proofpipe/gpu/ntt.hpp"

namespace pp::gpu {

NttSchedule schedule(const NttOp& op) {
  NttSchedule s;
  s.dif = op.in == Order::natural;
  s.inverse = op.dir == Direction::inverse;
  if (op.dir == Direction::forward) {
    if (op.take_size_inv) s.pre = op.coset ? Scale::shift_size_inv : Scale::size_inv;
    else s.pre = op.coset ? Scale::shift : Scale::none;
  } else if (op.defer_size_inv) {
    s.post = Scale::none;
  } else if (op.canonical_out) {
    s.post = op.coset ? Scale::shift_inv_canonical : Scale::size_inv_canonical;
  } else {
    s.post = op.coset ? Scale::shift_inv : Scale::size_inv;
  }
  s.permute_after = op.out == op.in;
  return s;
}

std::string check_op(const NttOp& op) {
  if (op.canonical_out && op.dir == Direction::forward)
    return "canonical output is for inverse transforms (their last scaling leaves Montgomery form)";
  if (op.defer_size_inv && op.dir == Direction::forward) return "defer_size_inv is for inverse transforms";
  if (op.take_size_inv && op.dir == Direction::inverse) return "take_size_inv is for forward transforms";
  if (op.defer_size_inv && (op.coset || op.canonical_out))
    return "defer_size_inv leaves no scaling, so it cannot go with coset or canonical_out (their factor is the last one)";
  return {};
}

PassStep pass_step(const NttSchedule& s, const NttPlan& plan, int i) {
  return PassStep{plan.pass[s.dif ? i : plan.count - 1 - i],
                  PassJob{s.dif, s.inverse, i == 0 ? s.pre : Scale::none, i == plan.count - 1 ? s.post : Scale::none}};
}

NttRoots roots_of(const Domain& d, const Fr& shift) {
  return NttRoots{d.omega(), d.omega_inv(), shift, shift.inverse(), d.size_inv()};
}
NttRoots roots_of(const Domain& d) { return roots_of(d, d.generator()); }
NttRootsOf<bn254::Fr> roots_of(const bn254::Domain& d, const bn254::Fr& shift) {
  return NttRootsOf<bn254::Fr>{d.omega(), d.omega_inv(), shift, shift.inverse(), d.size_inv()};
}
NttRootsOf<bn254::Fr> roots_of(const bn254::Domain& d) { return roots_of(d, d.generator()); }

namespace {

// Runs one pass the way a CUDA block would: copy in, the rounds (each a loop over the block's
// "threads"), copy out — block after block, blocks in parallel.
template <class F>
void twin_pass(F* a, const NttPass& p, const NttTablesOf<F>& t, const PassJob& job) {
  tbb::parallel_for(uint64_t(0), p.blocks(), [&](uint64_t block) {
    const uint32_t n = p.elements_per_block();
    std::vector<uint64_t> mem(slots_bytes(n) / sizeof(uint64_t));
    const HalfSlots s{mem.data(), n + 4};
    for (uint32_t e = 0; e < n; ++e) s.set(e, a[p.global_index(block, e)]);
    for (int r = 0; r < p.rounds(); ++r)
      for (uint32_t tid = 0; tid < p.threads_per_block(); ++tid) {
        const bool small = p.thread_lg == kSmallThreadLg;
        if (job.dif) small ? pass_round<true, kSmallThreadLg>(p, t, job, s, block, tid, r)
                           : pass_round<true, kThreadLg>(p, t, job, s, block, tid, r);
        else small ? pass_round<false, kSmallThreadLg>(p, t, job, s, block, tid, r)
                   : pass_round<false, kThreadLg>(p, t, job, s, block, tid, r);
      }
    for (uint32_t e = 0; e < n; ++e) a[p.global_index(block, e)] = s.template get<F>(e);
  });
}

template <class F>
void twin(std::span<F> a, const DomainOf<F>& d, const NttRootsOf<F>& roots, const NttOp& op, int max_pass, int twist_lg,
          int min_blocks_lg, int thread_lg) {
  const int lg = d.lg();
  if (lg > kMaxNttLg)
    throw std::invalid_argument("pp::gpu::ntt_twin: 2^" + std::to_string(lg) + " exceeds the GPU limit 2^" +
                                std::to_string(kMaxNttLg));
  if (a.size() != d.size())
    throw std::invalid_argument("pp::gpu::ntt_twin: " + std::to_string(a.size()) + " values for a domain of " +
                                std::to_string(d.size()));
  if (const std::string why = check_op(op); !why.empty()) throw std::invalid_argument("pp::gpu::ntt_twin: " + why);
  std::vector<F> buf(table_elements(lg, twist_lg));
  tbb::parallel_for(std::size_t(0), buf.size(), [&](std::size_t i) { buf[i] = table_entry(roots, lg, i, twist_lg); });
  const NttTablesOf<F> t = bind_tables(buf.data(), lg, d.size_inv(), twist_lg);
  const NttSchedule s = schedule(op);
  if (max_pass < 1 || max_pass > kMaxPassLg)
    throw std::invalid_argument("pp::gpu::ntt_twin: max_pass " + std::to_string(max_pass) + " outside [1, " +
                                std::to_string(kMaxPassLg) + "]");
  if (min_blocks_lg < 0)
    throw std::invalid_argument("pp::gpu::ntt_twin: min_blocks_lg " + std::to_string(min_blocks_lg) + " below 0");
  if (thread_lg != 0 && thread_lg != kSmallThreadLg && thread_lg != kThreadLg)
    throw std::invalid_argument("pp::gpu::ntt_twin: thread_lg " + std::to_string(thread_lg) + " is none of 0, " +
                                std::to_string(kSmallThreadLg) + " and " + std::to_string(kThreadLg));
  const NttPlan plan = make_ntt_plan(lg, max_pass, min_blocks_lg, thread_lg);

  for (int i = 0; i < plan.count; ++i) {
    const PassStep step = pass_step(s, plan, i);
    twin_pass(a.data(), step.pass, t, step.job);
  }
  if (s.permute_after) bit_reverse_permute(a);
}

}  // namespace

void ntt_twin(std::span<Fr> a, const Domain& d, const NttRoots& roots, const NttOp& op, int max_pass, int twist_lg,
              int min_blocks_lg, int thread_lg) {
  twin(a, d, roots, op, max_pass, twist_lg, min_blocks_lg, thread_lg);
}
void ntt_twin(std::span<bn254::Fr> a, const bn254::Domain& d, const NttRootsOf<bn254::Fr>& roots, const NttOp& op,
              int max_pass, int twist_lg, int min_blocks_lg, int thread_lg) {
  twin(a, d, roots, op, max_pass, twist_lg, min_blocks_lg, thread_lg);
}

}  // namespace pp::gpu
