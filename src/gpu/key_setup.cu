// SPDX-License-Identifier: Apache-2.0 OR MIT
// Proving-key points on the GPU (key_points in prover.hpp): setup's fixed-base multiplications,
// one kernel per 2^22 scalars. Start-up work, not the proving path: it allocates and copies with
// the plain runtime calls.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_status.cuh"
#include "proofpipe/ec/fixed_base.hpp"
#include "proofpipe/gpu/prover.hpp"

namespace pp::gpu {

namespace {

unsigned grid_for(uint64_t n, unsigned block) { return unsigned((n + block - 1) / block); }

template <class C>
__global__ void fixed_base_kernel(const Affine<C>* __restrict__ table, const Fr* __restrict__ scalars, uint64_t n,
                                  Affine<C>* out) {
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fixed_base_mul(table, scalars[i]).to_affine();
}

template <class C>
std::vector<Affine<C>> multiply_all(const std::vector<Affine<C>>& table_host, const std::vector<Fr>& scalars) {
  std::vector<Affine<C>> out(scalars.size());
  if (scalars.empty()) return out;
  constexpr std::size_t kPiece = std::size_t(1) << 22;
  const std::size_t piece = std::min(kPiece, scalars.size());
  Affine<C>* d_table = nullptr;
  Fr* d_scalars = nullptr;
  Affine<C>* d_points = nullptr;
  check(cudaMalloc(&d_table, table_host.size() * sizeof(Affine<C>)), "key_points: cudaMalloc");
  struct Free {
    void* p[3];
    ~Free() {
      for (void* q : p) cudaFree(q);
    }
  } guard{{d_table, nullptr, nullptr}};
  check(cudaMalloc(&d_scalars, piece * sizeof(Fr)), "key_points: cudaMalloc");
  guard.p[1] = d_scalars;
  check(cudaMalloc(&d_points, piece * sizeof(Affine<C>)), "key_points: cudaMalloc");
  guard.p[2] = d_points;
  check(cudaMemcpy(d_table, table_host.data(), table_host.size() * sizeof(Affine<C>), cudaMemcpyHostToDevice),
        "key_points: table upload");
  for (std::size_t off = 0; off < scalars.size(); off += piece) {
    const std::size_t m = std::min(piece, scalars.size() - off);
    check(cudaMemcpy(d_scalars, scalars.data() + off, m * sizeof(Fr), cudaMemcpyHostToDevice), "key_points: upload");
    fixed_base_kernel<C><<<grid_for(m, 128), 128>>>(d_table, d_scalars, m, d_points);
    check(cudaGetLastError(), "key_points: fixed-base kernel");
    check(cudaMemcpy(out.data() + off, d_points, m * sizeof(Affine<C>), cudaMemcpyDeviceToHost), "key_points: download");
  }
  return out;
}

}  // namespace

ProvingKey key_points(const KeyScalars& ks, int device) {
  check(cudaSetDevice(device), "key_points: cudaSetDevice");
  ProvingKey pk = key_skeleton(ks);
  const std::vector<G1Affine> t1 = fixed_base_table(g1_generator());
  const std::vector<G2Affine> t2 = fixed_base_table(g2_generator());
  pk.vk.ic = multiply_all<G1Curve>(t1, ks.ic);
  pk.h = multiply_all<G1Curve>(t1, ks.h);
  pk.l = multiply_all<G1Curve>(t1, ks.l);
  pk.a = multiply_all<G1Curve>(t1, ks.a);
  pk.b_g1 = multiply_all<G1Curve>(t1, ks.b);
  pk.b_g2 = multiply_all<G2Curve>(t2, ks.b);
  return pk;
}

}  // namespace pp::gpu
