// SPDX-License-Identifier: Apache-2.0 OR MIT
// Device memory planner: see include/proofpipe/engine/plan.hpp and docs/PLANNER.md.
#include "proofpipe/engine/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>
#include <set>
#include <tuple>

#include "proofpipe/gpu/msm.hpp"
#include "proofpipe/gpu/msm_sizing.hpp"
#include "proofpipe/gpu/ntt_sizing.hpp"
#include "proofpipe/gpu/prover_host.hpp"
#include "proofpipe/msm/digits.hpp"

namespace pp::engine {

static_assert(kBls12_381Points == PointSizes::over(sizeof(Fp)) && kBn254Points == PointSizes::over(sizeof(bn254::Fp)),
              "a curve's point sizes follow from its base field");
static_assert(sizeof(Fr) == kScalarBytes && sizeof(bn254::Fr) == kScalarBytes);

namespace {

// Constants of the GPU MSM these bounds describe (its headers; the carve-up itself is in
// src/gpu/msm_impl.cuh and the GPU harness checks these bounds against it).
constexpr uint64_t kMinSegment = gpu::kMinSegment, kMaxSegment = gpu::kMaxSegment;
// The GPU MSM cuts m sorted entries into segments of segment_length(m) = clamp(m >> 17, min, max)
// entries. This bounds ceil(m' / segment_length(m')) for every m' <= m (monotone in m): below
// min·2^17 points at most ceil(m/min); in the middle floor(m'/2^17) >= min entries each, so at
// most 2^17·(1 + 1/min) + 1 segments; above, ceil(m/max).
uint64_t segments_bound(uint64_t m) {
  const uint64_t middle = (uint64_t(1) << 17) + (uint64_t(1) << 17) / kMinSegment + 1;
  return std::min((m + kMinSegment - 1) / kMinSegment, std::max((m + kMaxSegment - 1) / kMaxSegment, middle));
}
constexpr int kMinGpuWindow = gpu::kMinWindow;   // result sums are sized for this many windows at most
constexpr int kMaxWindowCut = 3;         // the planner may lower a window by up to this many bits
constexpr double kEfficientCost = 1.10;  // "efficient" MSM pieces: within 10 % of one pass
constexpr double kG2CostWeight = 3.0;    // a G2 XYZZ addition costs about three G1 ones (Fp2 muls)
constexpr int kMaxWorkers = 64;

uint64_t align_up(uint64_t x) { return (x + kRegionAlign - 1) & ~(kRegionAlign - 1); }
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
int ceil_log2(uint64_t m) { return m <= 1 ? 0 : int(std::bit_width(m - 1)); }
uint64_t bitmap_bytes(uint64_t bits) { return ceil_div(bits, 64) * 8; }

// Largest G1 MSM (H, L, A or B_G1).
uint64_t max_g1(const CircuitShape& s) { return std::max({s.h_points, s.num_aux, s.a_points, s.b_points}); }

// One way to run the MSMs: placement, piece size and windows.
struct Choice {
  SrsPlacement srs = SrsPlacement::streamed;
  uint64_t chunk = 0;
  int c1 = 0, c2 = 0;
};

Choice make_choice(const CircuitShape& s, SrsPlacement srs, uint64_t chunk, int cut) {
  Choice ch{srs, chunk, 0, 0};
  ch.c1 = std::max(4, default_msm_window(std::min(chunk, max_g1(s))) - cut);
  ch.c2 = std::max(4, default_msm_window(std::min(chunk, s.b_points)) - cut);
  return ch;
}

struct Piece {
  std::string name, contents;
  uint64_t bytes = 0;
};
uint64_t bytes_of(const std::vector<Piece>& pieces) {
  uint64_t total = 0;
  for (const Piece& p : pieces) total += align_up(p.bytes);
  return total;
}

std::string count(uint64_t n) { return fmt::format("{}", n); }

std::vector<Piece> shared_pieces(const CircuitShape& s, SrsPlacement srs, int h_copies = 1, int h_window = 0,
                                 bool full_twist = false) {
  std::vector<Piece> v;
  if (srs == SrsPlacement::resident) {
    v.push_back({"srs.h",
                 h_copies > 1 ? fmt::format("H query: {} G1 points and {} shifted copies (fixed-base table, c = {})",
                                            s.h_points, h_copies - 1, h_window)
                              : "H query: " + count(s.h_points) + " G1 points",
                 s.h_points * s.points.g1_affine * uint64_t(h_copies)});
    v.push_back({"srs.l", "L query: " + count(s.num_aux) + " G1 points", s.num_aux * s.points.g1_affine});
    v.push_back({"srs.a", "A query: " + count(s.a_points) + " G1 points", s.a_points * s.points.g1_affine});
    v.push_back({"srs.b_g1", "B query: " + count(s.b_points) + " G1 points", s.b_points * s.points.g1_affine});
    v.push_back({"srs.b_g2", "B query: " + count(s.b_points) + " G2 points", s.b_points * s.points.g2_affine});
    v.push_back({"srs.a_vars", "variable of each A point (u32), to gather tail points", s.a_points * 4});
    v.push_back({"srs.b_vars", "variable of each B point (u32), to gather tail points", s.b_points * 4});
  }
  v.push_back({"ntt.tables",
               fmt::format("twiddles of the 2^{} domain and its coset{}", s.lg, full_twist ? ", a root per twist" : ""),
               ntt_tables_bound(s.lg, full_twist)});
  return v;
}

uint64_t workspace_need(const CircuitShape& s, const Choice& ch) {
  const uint64_t m1 = std::min(ch.chunk, max_g1(s)), m2 = std::min(ch.chunk, s.b_points);
  return std::max({msm_workspace_bound(s.points, Curve::g1, m1, ch.c1), msm_workspace_bound(s.points, Curve::g2, m2, ch.c2),
                   batch_add_workspace_bound(s.points, Curve::g1, m1),
                   batch_add_workspace_bound(s.points, Curve::g2, m2)});
}

// The tail gather buffer: one MSM piece of every tail query (L, A, B_G1 in G1; B_G2 in G2) as
// the prover lays it out (gpu::GatherLayout: with a resident SRS the word ranks of the query's tail
// bitmap in front, then the piece's points and scalars), for pieces of up to a chunk of points.
uint64_t gather_need(const CircuitShape& s, const Choice& ch) {
  const auto need = [&](uint64_t n, uint64_t point_bytes) {
    return gpu::GatherLayout::of((n + 63) / 64, std::min(ch.chunk, n), point_bytes).bytes;
  };
  return std::max({need(s.num_aux, s.points.g1_affine), need(s.a_points, s.points.g1_affine),
                   need(s.b_points, s.points.g1_affine), need(s.b_points, s.points.g2_affine)});
}

// The larger of a chunk layout's bytes for chunks of up to m points of the G1 queries that use it
// (up to g1_points points) and of B_G2: bytes(points, point_bytes) is the layout's size for a
// chunk of `points`.
template <class Bytes>
uint64_t largest_chunk(const CircuitShape& s, uint64_t m, uint64_t g1_points, Bytes bytes) {
  return std::max(bytes(std::min(m, g1_points), s.points.g1_affine), bytes(std::min(m, s.b_points), s.points.g2_affine));
}
// The largest split query (L, A, B): what a batch pass reads (H is not batched).
uint64_t max_split(const CircuitShape& s) { return std::max({s.num_aux, s.a_points, s.b_points}); }
// A streamed SRS chunk buffer: the largest ChunkLayout of a piece (H chunks hold points only).
uint64_t chunk_buffer_need(const CircuitShape& s, const Choice& ch) {
  return largest_chunk(s, ch.chunk, max_g1(s), [](uint64_t m, uint64_t pb) { return gpu::ChunkLayout::of(m, pb).bytes; });
}
// Batched split MSMs: the largest BatchChunkLayout of k partitions for chunks of up to m points.
uint64_t batch_chunk_need(const CircuitShape& s, uint64_t m, int k) {
  return largest_chunk(s, m, max_split(s), [k](uint64_t points, uint64_t pb) {
    return gpu::BatchChunkLayout::of(points, uint64_t(k), pb).bytes;
  });
}
// A batch chunk is whole bitmap words, or holds every split query whole (one chunk each). The
// batch chunk: the largest (msm_chunk itself, else a power of two below it) whose shared points and
// k partitions' sides fit a chunk buffer of `buffer` bytes, for every split query; 0: none.
bool valid_batch_chunk(const CircuitShape& s, uint64_t m) { return m > 0 && (m % 64 == 0 || m >= max_split(s)); }
uint64_t batch_chunk_points(const CircuitShape& s, uint64_t msm_chunk, uint64_t buffer, int k) {
  if (valid_batch_chunk(s, msm_chunk) && batch_chunk_need(s, msm_chunk, k) <= buffer) return msm_chunk;
  uint64_t m = 64;
  while (2 * m < msm_chunk) m *= 2;  // the largest power of two below msm_chunk
  for (; m >= 64; m /= 2)
    if (batch_chunk_need(s, m, k) <= buffer) return m;
  return 0;
}

// The dense H MSM's pieces (MemoryPlan::h_chunk).
struct HPieces {
  uint64_t chunk = 0;
  int c = 0;
  bool in_stage = false, points_in_stage = false;
};
uint64_t h_stage_room(const CircuitShape& s) { return 2 * s.domain() * kScalarBytes; }  // stage b + c
HPieces h_pieces(const CircuitShape& s, const Choice& ch) {
  HPieces best{std::min(ch.chunk, s.h_points), ch.c1, false, false};
  if (ch.srs != SrsPlacement::streamed) return best;
  const auto window = [](uint64_t m) { return std::min(24, default_msm_window(m)); };
  for (uint64_t m = std::min(s.h_points, chunk_buffer_need(s, ch) / s.points.g1_affine); m > best.chunk; m /= 2)
    if (msm_workspace_bound(s.points, Curve::g1, m, window(m)) <= h_stage_room(s)) {
      best = {m, window(m), true, false};
      break;
    }
  for (uint64_t m = s.h_points; m > best.chunk; m /= 2)
    if (HStageLayout::of(s.points, m, window(m)).bytes <= h_stage_room(s)) {
      best = {m, window(m), true, true};
      break;
    }
  return best;
}

// The H MSM over a fixed-base table of `copies` (MemoryPlan::h_copies) needs this much workspace.
uint64_t h_table_workspace(const CircuitShape& s, int copies, int c) {
  return copies > 1 ? msm_workspace_bound(s.points, Curve::g1, s.h_points, c, copies) : 0;
}

std::vector<Piece> compute_pieces(const CircuitShape& s, const Choice& ch, int h_copies = 1, int h_window = 0) {
  std::vector<Piece> v;
  v.push_back({"compute.workspace",
               fmt::format("MSM / batch addition workspace: pieces <= {} points, c <= {} (G1) / {} (G2){}", ch.chunk,
                           ch.c1, ch.c2, h_copies > 1 ? "; the H MSM over its fixed-base table" : ""),
               std::max(workspace_need(s, ch), h_table_workspace(s, h_copies, h_window))});
  v.push_back({"compute.gather", "tail MSM piece: gathered points + scalars", gather_need(s, ch)});
  if (ch.srs == SrsPlacement::streamed) {
    const uint64_t buf = chunk_buffer_need(s, ch);
    v.push_back({"compute.srs_chunk[0]", "SRS chunk (packed points, 1s bitmap, tail scalars), double buffer 0", buf});
    v.push_back({"compute.srs_chunk[1]", "SRS chunk (packed points, 1s bitmap, tail scalars), double buffer 1", buf});
  }
  return v;
}

std::vector<Piece> stage_pieces(const CircuitShape& s) {
  const uint64_t n = s.domain();
  return {{"a", "a = A.z evaluations; h after the H step (H MSM scalars)", n * kScalarBytes},
          {"b", "b = B.z evaluations", n * kScalarBytes},
          {"c", "c = a∘b, made on the device (c = C.z for a satisfying witness)", n * kScalarBytes}};
}

// Window sums of the five MSMs and the four batch-addition sums, for any window >= 2 bits.
uint64_t sums_need(const CircuitShape& s) {
  return msm_sums_bytes(s.points, msm_windows(kMinGpuWindow));
}

std::vector<Piece> msm_pieces(const CircuitShape& s, SrsPlacement srs) {
  std::vector<Piece> v;
  if (srs == SrsPlacement::resident) {
    v.push_back({"scalars", "assignment z (inputs + aux): tail MSM scalars", s.num_variables() * kScalarBytes});
    v.push_back({"bitmaps", "scalar = 1 and scalar not in {0, 1} bitmaps of L, A, B",
                 2 * (bitmap_bytes(s.num_aux) + bitmap_bytes(s.a_points) + bitmap_bytes(s.b_points))});
  }
  v.push_back({"sums", "window sums and batch-addition sums of H, L, A, B_G1, B_G2", sums_need(s)});
  return v;
}

// Estimated point additions of one MSM of m points in pieces of `chunk` with windows <= c_cap:
// every point once per window, plus about 2^c bucket-reduction additions per window per piece.
double msm_cost(uint64_t m, uint64_t chunk, int c_cap) {
  if (m == 0) return 0;
  const uint64_t piece = std::min(chunk, m), pieces = ceil_div(m, piece);
  const int c = std::min(c_cap, default_msm_window(piece));
  return double(msm_windows(c)) * (double(m) + double(pieces) * double(uint64_t(1) << c));
}
double partition_msm_cost(const CircuitShape& s, uint64_t chunk, int c1, int c2) {
  return msm_cost(s.h_points, chunk, c1) + msm_cost(s.num_aux, chunk, c1) + msm_cost(s.a_points, chunk, c1) +
         msm_cost(s.b_points, chunk, c1) + kG2CostWeight * msm_cost(s.b_points, chunk, c2);
}
double one_pass_cost(const CircuitShape& s) {
  const uint64_t all = std::numeric_limits<uint64_t>::max();
  return partition_msm_cost(s, all, 64, 64);
}

struct Option {
  Choice ch;
  uint64_t shared = 0, compute = 0, stage = 0, msm = 0;
  double cost = 0;
  uint64_t total(int stages, int msms) const {
    return shared + compute + uint64_t(stages) * stage + uint64_t(msms) * msm;
  }
};

// Every (placement, piece size, window cut) the planner considers.
std::vector<Option> options_for(const CircuitShape& s, SrsPlacement want) {
  std::vector<Option> out;
  const uint64_t top = max_g1(s);
  const int hi = std::min(ceil_log2(top), ceil_log2(kMaxMsmChunk));
  const int lo = std::min(ceil_log2(kMinMsmChunk), hi);
  const uint64_t stage = bytes_of(stage_pieces(s));
  for (SrsPlacement srs : {SrsPlacement::resident, SrsPlacement::streamed}) {
    if (want != SrsPlacement::automatic && want != srs) continue;
    const uint64_t shared = bytes_of(shared_pieces(s, srs)), msm = bytes_of(msm_pieces(s, srs));
    for (int k = lo; k <= hi; ++k) {
      const uint64_t chunk = std::min(uint64_t(1) << k, top);
      std::set<std::pair<int, int>> seen;
      for (int cut = 0; cut <= kMaxWindowCut; ++cut) {
        const Choice ch = make_choice(s, srs, chunk, cut);
        if (!seen.insert({ch.c1, ch.c2}).second) continue;
        out.push_back(
            {ch, shared, bytes_of(compute_pieces(s, ch)), stage, msm, partition_msm_cost(s, chunk, ch.c1, ch.c2)});
      }
    }
  }
  return out;
}

uint64_t minimum_of(const std::vector<Option>& opts, SrsPlacement srs, const Option** best = nullptr) {
  uint64_t m = std::numeric_limits<uint64_t>::max();
  for (const Option& o : opts) {
    if (o.ch.srs != srs) continue;
    if (o.total(1, 1) < m) {
      m = o.total(1, 1);
      if (best) *best = &o;
    }
  }
  return m;
}

std::string lg_of(uint64_t chunk) {
  return std::has_single_bit(chunk) ? fmt::format("2^{}", std::countr_zero(chunk)) : fmt::format("{}", chunk);
}

// The message for a budget below the minimum: which group of the smallest plan did not fit.
[[noreturn]] void throw_infeasible(const CircuitShape& s, uint64_t budget, uint64_t minimum, const Option& o,
                                   SrsPlacement requested) {
  struct Group {
    std::string what;
    uint64_t bytes;
  };
  const std::vector<Group> groups = {
      {o.ch.srs == SrsPlacement::resident ? "the resident SRS and NTT tables" : "the NTT tables", o.shared},
      {"the a, b, c of one partition", o.stage},
      {o.ch.srs == SrsPlacement::resident ? "one partition's scalars and bitmaps" : "one partition's MSM sums", o.msm},
      {fmt::format("the MSM workspace and {} at pieces of {} points",
                   o.ch.srs == SrsPlacement::resident ? "gather buffer" : "SRS chunk buffers", lg_of(o.ch.chunk)),
       o.compute}};
  uint64_t used = 0;
  std::string what = "the plan";
  for (const Group& g : groups) {
    if (used + g.bytes > budget) {
      what =
          fmt::format("{} ({}) do not fit in the {} left", g.what, format_bytes(g.bytes), format_bytes(budget - used));
      if (used > 0) what += " after " + format_bytes(used) + " of earlier regions";
      break;
    }
    used += g.bytes;
  }
  throw PlanError(
      fmt::format("memory plan: vram budget {} ({} bytes) is below the minimum {} ({} bytes) for a "
                  "2^{} domain with {} variables{}: the smallest plan ({} SRS, one partition, MSM "
                  "pieces of {} points) needs that much; {}",
                  format_bytes(budget), budget, format_bytes(minimum), minimum, s.lg, s.num_variables(),
                  requested == SrsPlacement::automatic ? "" : fmt::format(" and a {} SRS", to_string(requested)),
                  to_string(o.ch.srs), lg_of(o.ch.chunk), what),
      budget, minimum);
}

void check_request(const PlanRequest& r) {
  r.shape.validate();
  if (r.gw < 1 || r.gw > kMaxWorkers)
    throw std::invalid_argument(
        fmt::format("memory plan: gw = {} workers per GPU, expected 1 .. {}", r.gw, kMaxWorkers));
  if (r.device_memory <= r.reserve)
    throw std::invalid_argument(
        fmt::format("memory plan: device memory {} is not above the {} reserved for the CUDA "
                    "context",
                    format_bytes(r.device_memory), format_bytes(r.reserve)));
  if (r.split_batch < 0 || r.split_batch > kMaxWorkers)
    throw std::invalid_argument(fmt::format("memory plan: a split batch of {} partitions, expected 0 (automatic) .. {}",
                                            r.split_batch, kMaxWorkers));
  if (r.budget > r.device_memory - r.reserve)
    throw std::invalid_argument(
        fmt::format("memory plan: vram budget {} exceeds the device memory {} less the {} "
                    "reserved for the CUDA context ({} at most)",
                    format_bytes(r.budget), format_bytes(r.device_memory), format_bytes(r.reserve),
                    format_bytes(r.device_memory - r.reserve)));
}

void append(std::vector<Region>& regions, uint64_t& offset, const std::vector<Piece>& pieces, RegionGroup g, int slot,
            const std::string& prefix) {
  for (const Piece& p : pieces) {
    regions.push_back({prefix + p.name, g, slot, offset, p.bytes, p.contents});
    offset += align_up(p.bytes);
  }
}

}  // namespace

int msm_windows(int c) {
  if (c < 1 || c > 31) throw std::invalid_argument(fmt::format("msm_windows: window of {} bits", c));
  return msm_digits::num_windows(c);
}

int default_msm_window(uint64_t m) { return gpu::default_gpu_window(m); }

// The kernels' own layouts (gpu/msm.hpp), sized for every piece up to m points: a segment count
// that bounds all of them and a bound of the radix sort's storage (CUB's query needs the device
// compiler; the GPU harness checks both bounds against the kernels' exact figures).
uint64_t msm_workspace_bound(const PointSizes& points, Curve curve, uint64_t m, int c, int copies) {
  if (m == 0) return 0;
  const int windows = msm_windows(c);  // checks c
  if (copies < 1) throw std::invalid_argument(fmt::format("msm_workspace_bound: {} copies", copies));
  const gpu::MsmShape shape{m, c, std::min(copies, windows)};
  const uint64_t entries = gpu::msm_entries_bound(m, shape.copies);
  return align_up(gpu::msm_layout(shape, entries, segments_bound(entries), points.xyzz(curve),
                                  gpu::radix_sort_temp_bound(entries)).total);
}

FixedBaseChoice choose_fixed_base(const PointSizes& points, Curve curve, uint64_t m, uint64_t budget,
                                  uint64_t workspace_floor) {
  // The cost of a full XYZZ addition (the reduction's) in mixed ones (the accumulation's), from
  // the GPU MSM's stage times per addition (docs/perf-history/gpu-kernels-v1-v9.md).
  const double full_add = curve == Curve::g1 ? 1.8 : 3.0;
  const uint64_t point_bytes = points.affine(curve);
  const auto cost = [&](int c, int sets) {
    return double(m) * msm_windows(c) + double(sets) * 2.0 * full_add * double(uint64_t(1) << (c - 1));
  };
  const int c0 = default_msm_window(std::max<uint64_t>(m, 1));
  const auto bytes = [&](const FixedBaseChoice& ch) { return ch.table_bytes + std::max(ch.workspace_bytes, workspace_floor); };
  FixedBaseChoice best{c0, 1, m * point_bytes, msm_workspace_bound(points, curve, m, c0, 1), cost(c0, msm_windows(c0))};
  if (m == 0 || bytes(best) > budget) return best;
  for (int c = gpu::kMinWindow; c <= gpu::kMaxWindow; ++c) {
    const int windows = msm_windows(c);
    for (int copies = 2; copies <= windows; ++copies) {
      if (m * uint64_t(copies) >= (uint64_t(1) << 31)) break;  // an entry's index must fit 31 bits
      const int sets = (windows + copies - 1) / copies;
      if (copies > 1 && (windows + copies - 2) / (copies - 1) == sets) continue;  // one copy fewer, same sets
      const FixedBaseChoice ch{c, copies, m * point_bytes * uint64_t(copies), msm_workspace_bound(points, curve, m, c, copies),
                               cost(c, sets)};
      if (bytes(ch) > budget) break;  // more copies only need more
      if (ch.cost < best.cost * (1 - 1e-9) || (ch.cost <= best.cost * (1 + 1e-9) && bytes(ch) < bytes(best))) best = ch;
    }
  }
  return best;
}

uint64_t batch_add_workspace_bound(const PointSizes& points, Curve curve, uint64_t m) {
  if (m == 0) return 0;
  return align_up(gpu::batch_add_layout(m, points.xyzz(curve)).total);
}

uint64_t ntt_tables_bound(int lg, bool full_twist) {
  if (lg < 1 || lg > 31) throw std::invalid_argument(fmt::format("ntt_tables_bound: lg = {}", lg));
  return gpu::table_elements(lg, gpu::twist_table_lg(lg, full_twist)) * kScalarBytes;
}

uint64_t CircuitShape::srs_bytes() const {
  return (h_points + num_aux + a_points + b_points) * points.g1_affine + b_points * points.g2_affine;
}

void CircuitShape::validate() const {
  const auto bad = [](const std::string& what) { throw std::invalid_argument("circuit shape: " + what); };
  if (lg < 1 || lg > 31) bad(fmt::format("lg = {}, expected 1 .. 31", lg));
  if (num_inputs == 0) bad("num_inputs = 0 (it counts the constant one)");
  if (num_aux >= (uint64_t(1) << 32) || num_variables() >= (uint64_t(1) << 32))
    bad(fmt::format("{} variables, expected fewer than 2^32", num_variables()));
  if (h_points == 0 || h_points > domain())
    bad(fmt::format("h_points = {}, expected 1 .. 2^{} = {}", h_points, lg, domain()));
  if (a_points > num_variables()) bad(fmt::format("a_points = {} exceeds the {} variables", a_points, num_variables()));
  if (b_points > num_variables()) bad(fmt::format("b_points = {} exceeds the {} variables", b_points, num_variables()));
  if (points != kBls12_381Points && points != kBn254Points)
    bad(fmt::format("point sizes G1 {} / G2 {} bytes are neither BLS12-381's nor BN254's", points.g1_affine,
                    points.g2_affine));
}

CircuitShape shape_of(const QueryLayout& layout, const PointSizes& points) {
  CircuitShape s;
  s.points = points;
  s.lg = layout.lg();
  s.num_inputs = layout.num_inputs;
  s.num_aux = layout.num_aux;
  s.h_points = layout.h_points;
  s.a_points = layout.a_points;
  s.b_points = layout.b_points;
  s.validate();
  return s;
}

HStageLayout HStageLayout::of(const PointSizes& points, uint64_t m, int c) {
  HStageLayout h;
  h.points0 = align_up(msm_workspace_bound(points, Curve::g1, m, c));
  h.points1 = h.points0 + align_up(m * points.g1_affine);
  h.bytes = h.points1 + m * points.g1_affine;
  return h;
}

const char* to_string(SrsPlacement p) {
  switch (p) {
    case SrsPlacement::automatic:
      return "automatic";
    case SrsPlacement::resident:
      return "resident";
    case SrsPlacement::streamed:
      return "streamed";
  }
  return "?";
}

const char* to_string(RegionGroup g) {
  switch (g) {
    case RegionGroup::shared:
      return "shared";
    case RegionGroup::compute:
      return "compute";
    case RegionGroup::stage:
      return "stage";
    case RegionGroup::msm:
      return "msm";
  }
  return "?";
}

uint64_t minimum_budget(const CircuitShape& shape, SrsPlacement srs) {
  shape.validate();
  const std::vector<Option> opts = options_for(shape, srs);
  uint64_t m = std::numeric_limits<uint64_t>::max();
  for (SrsPlacement p : {SrsPlacement::resident, SrsPlacement::streamed}) m = std::min(m, minimum_of(opts, p));
  return m;
}

MemoryPlan plan_memory(const PlanRequest& request) {
  check_request(request);
  const CircuitShape& s = request.shape;
  const uint64_t budget = request.budget ? request.budget : request.device_memory - request.reserve;
  const std::vector<Option> opts = options_for(s, request.srs);
  const std::vector<Option> all =
      request.srs == SrsPlacement::automatic ? opts : options_for(s, SrsPlacement::automatic);
  const uint64_t resident_min = minimum_of(all, SrsPlacement::resident);
  const uint64_t streamed_min = minimum_of(all, SrsPlacement::streamed);
  const double reference = one_pass_cost(s);

  // Best by the preference order of plan_memory's comment (a lexicographic key, larger wins).
  using Key = std::tuple<bool, bool, bool, int, int, double, int64_t>;
  const Option* best = nullptr;
  int best_stages = 0, best_msms = 0;
  Key best_key{};
  for (const Option& o : opts) {
    const bool efficient = o.cost <= kEfficientCost * reference;
    for (int st = 1; st <= request.gw; ++st) {
      for (int ms = st; ms <= request.gw; ++ms) {
        const uint64_t total = o.total(st, ms);
        if (total > budget) continue;
        const Key key{o.ch.srs == SrsPlacement::resident,
                      request.gw == 1 || ms >= 2,
                      efficient,
                      st,
                      ms,
                      -o.cost,
                      -int64_t(total)};
        if (!best || key > best_key) {
          best = &o;
          best_key = key;
          best_stages = st;
          best_msms = ms;
        }
      }
    }
  }
  if (!best) {
    const Option* smallest = nullptr;
    uint64_t minimum = std::numeric_limits<uint64_t>::max();
    for (SrsPlacement p : {SrsPlacement::resident, SrsPlacement::streamed}) {
      const Option* o = nullptr;
      const uint64_t m = minimum_of(opts, p, &o);
      if (o && m < minimum) {
        minimum = m;
        smallest = o;
      }
    }
    throw_infeasible(s, budget, minimum, *smallest, request.srs);
  }

  MemoryPlan plan;
  plan.shape = s;
  plan.device_memory = request.device_memory;
  plan.reserve = request.reserve;
  plan.budget = budget;
  plan.gw = request.gw;
  plan.srs = best->ch.srs;
  plan.stage_slots = best_stages;
  plan.msm_slots = best_msms;
  plan.msm_chunk = best->ch.chunk;
  plan.window_g1 = best->ch.c1;
  plan.window_g2 = best->ch.c2;
  plan.workspace_bytes = workspace_need(s, best->ch);
  plan.chunk_buffer_bytes =
      best->ch.srs == SrsPlacement::streamed ? chunk_buffer_need(s, best->ch) : gather_need(s, best->ch);
  const HPieces hp = h_pieces(s, best->ch);
  plan.h_chunk = hp.chunk;
  plan.window_h = hp.c;
  plan.h_workspace_in_stage = hp.in_stage;
  plan.h_points_in_stage = hp.points_in_stage;
  plan.resident_minimum = resident_min;
  plan.streamed_minimum = streamed_min;
  plan.msm_cost_ratio = reference > 0 ? best->cost / reference : 1.0;

  const auto lay_out = [&] {
    plan.regions.clear();
    uint64_t offset = 0;
    append(plan.regions, offset, shared_pieces(s, plan.srs, plan.h_copies, plan.window_h, plan.ntt_full_twist),
           RegionGroup::shared, 0, "");
    append(plan.regions, offset, compute_pieces(s, best->ch, plan.h_copies, plan.window_h), RegionGroup::compute, 0, "");
    for (int i = 0; i < best_stages; ++i)
      append(plan.regions, offset, stage_pieces(s), RegionGroup::stage, i, fmt::format("stage[{}].", i));
    for (int i = 0; i < best_msms; ++i)
      append(plan.regions, offset, msm_pieces(s, plan.srs), RegionGroup::msm, i, fmt::format("msm[{}].", i));
    plan.arena_bytes = offset;
  };
  lay_out();
  // What the budget has left goes to a fixed-base table for the H MSM (resident, one piece): the
  // table replaces srs.h (copy 0 is the H query) and the workspace grows to what its MSM needs.
  if (request.h_table && plan.srs == SrsPlacement::resident && plan.h_chunk >= s.h_points && s.h_points > 0 &&
      plan.arena_bytes < budget) {
    const uint64_t h_bytes = align_up(s.h_points * s.points.g1_affine), ws = plan.workspace_bytes;
    const FixedBaseChoice fb =
        choose_fixed_base(s.points, Curve::g1, s.h_points, budget - plan.arena_bytes + h_bytes + ws, ws);
    if (fb.copies > 1) {
      plan.h_copies = fb.copies;
      plan.window_h = fb.c;
      plan.workspace_bytes = std::max(ws, fb.workspace_bytes);
      lay_out();
      if (plan.arena_bytes > budget) {  // alignment slack; never expected
        plan.h_copies = 1;
        plan.window_h = hp.c;
        plan.workspace_bytes = ws;
        lay_out();
      }
    }
  }
  // A root per NTT twist from what the H table left, so it never costs the table a copy: then no
  // NTT pass multiplies two table entries for its twist (docs/perf-history/gpu-kernels-v10-v15.md).
  if (request.ntt_full_twist && plan.srs == SrsPlacement::resident &&
      ntt_tables_bound(s.lg, true) > ntt_tables_bound(s.lg, false) &&
      plan.arena_bytes + align_up(ntt_tables_bound(s.lg, true)) - align_up(ntt_tables_bound(s.lg, false)) <= budget) {
    plan.ntt_full_twist = true;
    lay_out();
  }
  // Streamed: as many partitions per pass over the split queries as the msm slots carry (a batch
  // needs 2k in flight) and the chunk buffer holds sides for, each chunk the largest that does.
  // 4 or 2: the four passes of a batch then spread evenly over the H MSMs that follow it.
  if (plan.srs == SrsPlacement::streamed && request.split_batch != 1) {
    int limit = std::min(kMaxSplitBatch, plan.msm_slots / 2);
    if (request.split_batch > 1) limit = std::min(limit, request.split_batch);
    for (const int k : {4, 2}) {
      if (k > limit) continue;
      const uint64_t m = batch_chunk_points(s, plan.msm_chunk, plan.chunk_buffer_bytes, k);
      if (m == 0) continue;
      plan.split_batch = k;
      plan.batch_chunk = m;
      break;
    }
  }
  return plan;
}

const Region* MemoryPlan::find(std::string_view name) const {
  for (const Region& r : regions)
    if (r.name == name) return &r;
  return nullptr;
}

uint64_t MemoryPlan::group_bytes(RegionGroup g, int slot) const {
  uint64_t total = 0;
  for (const Region& r : regions)
    if (r.group == g && (slot < 0 || r.slot == slot)) total += align_up(r.bytes);
  return total;
}

std::vector<std::string> plan_violations(const MemoryPlan& p) {
  std::vector<std::string> v;
  const auto fail = [&](std::string s) { v.push_back(std::move(s)); };
  try {
    p.shape.validate();
  } catch (const std::exception& e) {
    fail(e.what());
    return v;
  }
  if (p.srs != SrsPlacement::resident && p.srs != SrsPlacement::streamed) fail("placement is not resident or streamed");
  if (p.gw < 1 || p.gw > kMaxWorkers) fail(fmt::format("gw = {}", p.gw));
  if (p.stage_slots < 1 || p.stage_slots > p.msm_slots || p.msm_slots > p.gw)
    fail(fmt::format("slots: 1 <= stage {} <= msm {} <= gw {} does not hold", p.stage_slots, p.msm_slots, p.gw));
  if (p.device_memory <= p.reserve || p.budget > p.device_memory - p.reserve)
    fail(fmt::format("budget {} above device {} - reserve {}", p.budget, p.device_memory, p.reserve));
  if (p.arena_bytes > p.budget) fail(fmt::format("arena {} bytes over the budget {}", p.arena_bytes, p.budget));
  if (p.msm_chunk == 0 || p.msm_chunk > kMaxMsmChunk) fail(fmt::format("msm_chunk = {}", p.msm_chunk));
  if (p.window_g1 < 4 || p.window_g1 > 24 || p.window_g2 < 4 || p.window_g2 > 24)
    fail(fmt::format("windows {} / {} outside 4 .. 24", p.window_g1, p.window_g2));
  if (!v.empty()) return v;

  std::set<std::string> names;
  for (std::size_t i = 0; i < p.regions.size(); ++i) {
    const Region& r = p.regions[i];
    if (!names.insert(r.name).second) fail("region " + r.name + " appears twice");
    if (r.offset % kRegionAlign)
      fail(fmt::format("region {} at offset {} is not {}-byte aligned", r.name, r.offset, kRegionAlign));
    if (r.bytes > p.arena_bytes || r.offset > p.arena_bytes - r.bytes)
      fail(fmt::format("region {} [{}, +{}) ends past the arena ({} bytes)", r.name, r.offset, r.bytes, p.arena_bytes));
    if (i > 0 && p.regions[i - 1].end() > r.offset)
      fail(fmt::format("regions {} and {} overlap or are out of order", p.regions[i - 1].name, r.name));
  }

  // Every region the placement and slots call for, at least as large as its contents need.
  const CircuitShape& s = p.shape;
  const auto need = [&](const std::string& name, uint64_t bytes) {
    const Region* r = p.find(name);
    if (!r) {
      fail("region " + name + " is missing");
    } else if (r->bytes < bytes) {
      fail(fmt::format("region {} has {} bytes, needs {}", name, r->bytes, bytes));
    }
  };
  need("ntt.tables", ntt_tables_bound(s.lg, p.ntt_full_twist));
  const Choice ch{p.srs, p.msm_chunk, p.window_g1, p.window_g2};
  need("compute.workspace", std::max(workspace_need(s, ch), h_table_workspace(s, p.h_copies, p.window_h)));
  need("compute.gather", gather_need(s, ch));
  if (p.srs == SrsPlacement::resident) {
    need("srs.h", s.h_points * s.points.g1_affine * uint64_t(std::max(p.h_copies, 1)));
    need("srs.l", s.num_aux * s.points.g1_affine);
    need("srs.a", s.a_points * s.points.g1_affine);
    need("srs.b_g1", s.b_points * s.points.g1_affine);
    need("srs.b_g2", s.b_points * s.points.g2_affine);
    need("srs.a_vars", s.a_points * 4);
    need("srs.b_vars", s.b_points * 4);
  } else {
    need("compute.srs_chunk[0]", chunk_buffer_need(s, ch));
    need("compute.srs_chunk[1]", chunk_buffer_need(s, ch));
  }
  for (int i = 0; i < p.stage_slots; ++i)
    for (const char* x : {"a", "b", "c"}) need(fmt::format("stage[{}].{}", i, x), s.domain() * kScalarBytes);
  if (p.h_chunk == 0 || p.window_h < 4 || p.window_h > 24) fail(fmt::format("H pieces {} c {}", p.h_chunk, p.window_h));
  if (p.h_copies < 1 || (p.window_h >= 1 && p.h_copies > msm_windows(p.window_h)))
    fail(fmt::format("H table of {} copies at c {}", p.h_copies, p.window_h));
  if (p.h_copies > 1 && (p.srs != SrsPlacement::resident || p.h_chunk < s.h_points))
    fail("an H fixed-base table needs a resident SRS and the H MSM in one piece");
  if (p.h_workspace_in_stage) {
    if (p.srs != SrsPlacement::streamed) fail("the H MSM's workspace in a stage slot needs a streamed SRS");
    if (!p.h_points_in_stage && p.h_chunk * s.points.g1_affine > p.chunk_buffer_bytes)
      fail(fmt::format("H pieces of {} points overflow the chunk buffer ({} bytes)", p.h_chunk, p.chunk_buffer_bytes));
    const uint64_t want = p.h_points_in_stage ? HStageLayout::of(s.points, p.h_chunk, p.window_h).bytes
                                              : msm_workspace_bound(s.points, Curve::g1, p.h_chunk, p.window_h);
    for (int i = 0; i < p.stage_slots; ++i) {
      const Region* b = p.find(fmt::format("stage[{}].b", i));
      const Region* c = p.find(fmt::format("stage[{}].c", i));
      if (!b || !c || b->end() != c->offset)
        fail(fmt::format("stage[{}].b and .c are not contiguous for the H MSM's workspace", i));
      else if (want > b->bytes + c->bytes)
        fail(fmt::format("stage[{}].b + .c hold {} bytes, the H MSM needs {} there", i, b->bytes + c->bytes, want));
    }
  } else if (p.h_points_in_stage || p.h_chunk > p.msm_chunk) {
    fail(fmt::format("H pieces of {} points exceed msm_chunk {} without a stage workspace", p.h_chunk, p.msm_chunk));
  }
  if (p.split_batch != 1) {
    if (p.srs != SrsPlacement::streamed) fail("batched split MSMs need a streamed SRS");
    if ((p.split_batch != 2 && p.split_batch != 4) || 2 * p.split_batch > p.msm_slots)
      fail(fmt::format("a split batch of {} with {} msm slots", p.split_batch, p.msm_slots));
    else if (!valid_batch_chunk(s, p.batch_chunk) || p.batch_chunk > p.msm_chunk)
      fail(fmt::format("batch chunks of {} points (msm_chunk {})", p.batch_chunk, p.msm_chunk));
    else if (batch_chunk_need(s, p.batch_chunk, p.split_batch) > p.chunk_buffer_bytes)
      fail(fmt::format("batch chunks of {} points for {} partitions need {} bytes, the chunk buffer has {}", p.batch_chunk,
                       p.split_batch, batch_chunk_need(s, p.batch_chunk, p.split_batch), p.chunk_buffer_bytes));
  } else if (p.batch_chunk != 0) {
    fail("batch chunks without a split batch");
  }
  for (int i = 0; i < p.msm_slots; ++i) {
    need(fmt::format("msm[{}].sums", i), sums_need(s));
    if (p.srs == SrsPlacement::resident) {
      need(fmt::format("msm[{}].scalars", i), s.num_variables() * kScalarBytes);
      need(fmt::format("msm[{}].bitmaps", i),
           2 * (bitmap_bytes(s.num_aux) + bitmap_bytes(s.a_points) + bitmap_bytes(s.b_points)));
    }
  }
  return v;
}

uint64_t parse_budget(std::string_view text) {
  if (text == "card") return 0;
  const uint64_t bytes = parse_byte_size(text);
  if (bytes == 0) throw std::invalid_argument("a budget of 0 bytes (write 'card' for the whole card)");
  return bytes;
}

uint64_t witness_bytes(uint64_t rows, uint64_t inputs, uint64_t aux) {
  const uint64_t scalars = 3 * rows + inputs + aux;
  const uint64_t words = 2 * ((aux + 63) / 64) + (inputs + 63) / 64;
  return scalars * 32 + words * 8;
}

std::string format_bytes(uint64_t b) {
  if (b >= kGiB) return fmt::format("{:.2f} GiB", double(b) / double(kGiB));
  if (b >= kMiB) return fmt::format("{:.2f} MiB", double(b) / double(kMiB));
  if (b >= 1024) return fmt::format("{:.2f} KiB", double(b) / 1024.0);
  return fmt::format("{} B", b);
}

uint64_t parse_byte_size(std::string_view text) {
  const auto bad = [&](const char* why) -> uint64_t {
    throw std::invalid_argument(fmt::format("byte size '{}': {} (examples: 16GiB, 141GB, 512MiB, 4096)", text, why));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  bool digits = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (whole > (std::numeric_limits<uint64_t>::max() - 9) / 10) return bad("too large");
    whole = whole * 10 + uint64_t(text[i] - '0');
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (frac_scale < 1000000) {  // six decimals are plenty (and keep the products below 2^64)
        frac = frac * 10 + uint64_t(text[i] - '0');
        frac_scale *= 10;
      }
      digits = true;
    }
  }
  if (!digits) return bad("no number");
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) break;
    unit += char(std::tolower(static_cast<unsigned char>(text[i])));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) return bad("trailing characters");
  uint64_t scale = 0;
  static const std::pair<const char*, uint64_t> kUnits[] = {{"", 1},
                                                            {"b", 1},
                                                            {"kb", 1000},
                                                            {"mb", 1000000},
                                                            {"gb", 1000000000},
                                                            {"tb", 1000000000000},
                                                            {"kib", 1ull << 10},
                                                            {"mib", 1ull << 20},
                                                            {"gib", 1ull << 30},
                                                            {"tib", 1ull << 40}};
  for (const auto& [name, value] : kUnits)
    if (unit == name) scale = value;
  if (scale == 0) return bad("unknown unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  if (whole > std::numeric_limits<uint64_t>::max() / scale) return bad("too large");
  // frac < frac_scale <= 10^6 and scale <= 2^40: both products stay below 2^64.
  const uint64_t part = scale / frac_scale * frac + scale % frac_scale * frac / frac_scale;
  const uint64_t value = whole * scale;
  if (part > std::numeric_limits<uint64_t>::max() - value) return bad("too large");
  return value + part;
}

std::string MemoryPlan::describe() const {
  const CircuitShape& s = shape;
  std::string out;
  const auto line = [&](std::string_view key, const std::string& text) {
    out += fmt::format("  {:<11}{}\n", key, text);
  };
  out += fmt::format("proofpipe memory plan: 2^{} domain, {} workers per GPU (gw)\n", s.lg, gw);
  line("circuit", fmt::format("{} inputs (with the 1), {} aux; MSM points H {}, L {}, A {}, B {} (G1 and G2)",
                              s.num_inputs, s.num_aux, s.h_points, s.num_aux, s.a_points, s.b_points));
  line("curve", fmt::format("{}: G1 points {} bytes, G2 {} (affine)",
                            s.points == kBn254Points ? "BN254" : "BLS12-381", s.points.g1_affine, s.points.g2_affine));
  line("device",
       fmt::format("{} ({} bytes), {} kept for the CUDA context; budget {} ({} bytes)", format_bytes(device_memory),
                   device_memory, format_bytes(reserve), format_bytes(budget), budget));
  line("SRS", fmt::format("{}: {} of points{}; resident needs a budget >= {}, streamed >= {}", to_string(srs),
                          format_bytes(s.srs_bytes()),
                          srs == SrsPlacement::resident ? " uploaded once, reused by every proof"
                          : split_batch > 1 ? " streamed through two chunk buffers, H per partition, the rest per batch"
                                            : " streamed per partition through two chunk buffers",
                          format_bytes(resident_minimum), format_bytes(streamed_minimum)));
  line("partitions",
       fmt::format("{} in flight (msm slots), {} with a, b, c on the device (stage slots)", msm_slots, stage_slots));
  const uint64_t top = max_g1(s);
  line("MSM",
       fmt::format("pieces of <= {} points ({}), windows c <= {} (G1) / {} (G2); workspace {}, {} {}", lg_of(msm_chunk),
                   msm_chunk >= top ? "one pass" : fmt::format("{} pieces for the largest", ceil_div(top, msm_chunk)),
                   window_g1, window_g2, format_bytes(workspace_bytes),
                   srs == SrsPlacement::resident ? "gather buffer" : "2 x chunk buffer",
                   format_bytes(chunk_buffer_bytes)));
  if (h_workspace_in_stage)
    line("", fmt::format("H MSM in pieces of {} points (about {} pieces), c {}, its workspace{} in the partition's "
                         "stage b + c",
                         h_chunk, ceil_div(s.h_points, h_chunk), window_h, h_points_in_stage ? " and points" : ""));
  if (h_copies > 1)
    line("", fmt::format("H MSM over a fixed-base table in srs.h: {} copies of its {} points ({}), c {}, {} bucket "
                         "set(s) instead of {} windows",
                         h_copies, s.h_points, format_bytes(s.h_points * s.points.g1_affine * uint64_t(h_copies)), window_h,
                         (msm_windows(window_h) + h_copies - 1) / h_copies, msm_windows(window_h)));
  if (split_batch > 1)
    line("", fmt::format("split MSMs batched: one pass over the L, A, B chunks serves {} partitions, chunks of {} "
                         "points crossing whole with each partition's bitmaps and tail scalars",
                         split_batch, batch_chunk));
  line("", fmt::format("estimated MSM work {:.3f}x one pass at default windows", msm_cost_ratio));
  if (ntt_full_twist)
    line("NTT", fmt::format("a root per twist in ntt.tables ({}): no pass multiplies two table entries",
                            format_bytes(ntt_tables_bound(s.lg, true))));
  line("arena", fmt::format("{} ({} bytes) of the {} budget; {} unused", format_bytes(arena_bytes), arena_bytes,
                            format_bytes(budget), format_bytes(budget - arena_bytes)));
  line("host", fmt::format("pinned staging {} ({} stage slot(s): a, b{})", format_bytes(pinned_staging_bytes()),
                           stage_slots, srs == SrsPlacement::resident ? " and z" : ""));
  if (srs == SrsPlacement::streamed)
    line("", fmt::format("pinned SRS copy {} (registered once at load; the chunks cross from it)",
                         format_bytes(pinned_srs_bytes())));
  if (pinned_pack_bytes() > 0)
    line("", fmt::format("pinned pack buffers {} ({} x the chunk buffer: {})", format_bytes(pinned_pack_bytes()),
                         kPackBuffers,
                         split_batch > 1 ? "the batch's bitmaps and tail scalars beside each shared chunk"
                                         : "chunks cross without their 0-scalar points"));
  line("", fmt::format("held while the prover lives: {} (charged to a host budget)", format_bytes(held_host_bytes(true))));
  out += fmt::format("\n  {:>16}  {:>16}  {:>11}  {:<22} {:<14} {}\n", "offset", "bytes", "size", "region", "held by",
                     "contents");
  for (const Region& r : regions) {
    std::string holder = r.group == RegionGroup::shared    ? "all (read-only)"
                         : r.group == RegionGroup::compute ? "compute token"
                         : r.group == RegionGroup::stage   ? fmt::format("stage slot {}", r.slot)
                                                           : fmt::format("msm slot {}", r.slot);
    out += fmt::format("  {:>16}  {:>16}  {:>11}  {:<22} {:<14} {}\n", r.offset, r.bytes, format_bytes(r.bytes), r.name,
                       holder, r.contents);
  }
  return out;
}

}  // namespace pp::engine
