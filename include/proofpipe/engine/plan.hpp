// SPDX-License-Identifier: Apache-2.0 OR MIT
// Device memory plan for Groth16 proving of one circuit shape on one GPU (pure CPU logic).
//
// All device memory of a proving GPU is one arena, allocated once at start and cut into named
// regions at fixed offsets. The planner decides, from the device memory, a budget, the circuit's
// sizes and the number of workers per GPU (gw):
//   * where the SRS lives: resident (every key point uploaded once and reused) or streamed in
//     chunks through two device chunk buffers (double buffering) from the pinned host copy;
//   * how many partitions can be in flight and how many can hold staged a, b, c at once;
//   * the MSM piece size (points per MSM invocation) and windows, which fix the workspace.
// A plan never exceeds its budget: every region's size is an upper bound of what the GPU code
// uses, the regions are disjoint, and plan_violations() re-checks both. Below the smallest
// feasible budget plan_memory() throws PlanError naming the budget, the minimum and what did
// not fit. docs/PLANNER.md explains the choices.
//
// Regions and who may touch them while proving (the engine hands slots out through tokens):
//   shared      written once at start, then read-only: NTT tables; resident SRS and the
//               variable index of every A and B point (for gathering tail MSM points).
//   compute     used only by the worker holding the GPU's compute token: the MSM workspace, the
//               tail gather buffer, and (streamed) the two SRS chunk buffers.
//   stage[i]    a, b, c of one partition: held from staging until its H MSM has run (h ends in
//               a), then released, so the next partition stages while this one's other MSMs run.
//   msm[i]      what a partition needs until its last MSM: the per-MSM result sums, and with a
//               resident SRS the assignment (tail scalars) and the 0/1/other bitmaps.
//               A partition holds one msm slot from staging to the end; msm slots >= stage slots.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proofpipe/groth16/query_layout.hpp"

namespace pp::engine {

// ---- sizes the GPU code works with ----
inline constexpr uint64_t kScalarBytes = 32;  // Fr, either curve's
inline constexpr uint64_t kRegionAlign = 256;  // every region and workspace piece starts here
inline constexpr uint64_t kMiB = uint64_t(1) << 20, kGiB = uint64_t(1) << 30;
// Kept outside the arena when the budget defaults to the device: CUDA context, module images,
// kernel stacks and the driver's own allocations.
inline constexpr uint64_t kDefaultReserve = 512 * kMiB;
// Smallest MSM piece the planner considers (smaller ones spend more on bucket reduction than
// on points) and the largest (the GPU MSM indexes a piece's points with 31 bits).
inline constexpr uint64_t kMinMsmChunk = uint64_t(1) << 16;
inline constexpr uint64_t kMaxMsmChunk = uint64_t(1) << 30;

enum class Curve { g1, g2 };

// The bytes of one curve's points as the GPU code holds them: affine (x, y) and XYZZ (X, Y, ZZ,
// ZZZ), G1 over Fp and G2 over Fp2, for a base field of fp_bytes. A circuit's shape carries its
// curve's (CircuitShape::points); the GPU prover checks them against its own types.
struct PointSizes {
  uint64_t g1_affine = 0, g2_affine = 0, g1_xyzz = 0, g2_xyzz = 0;
  static constexpr PointSizes over(uint64_t fp_bytes) {
    return PointSizes{2 * fp_bytes, 4 * fp_bytes, 4 * fp_bytes, 8 * fp_bytes};
  }
  constexpr uint64_t affine(Curve c) const { return c == Curve::g1 ? g1_affine : g2_affine; }
  constexpr uint64_t xyzz(Curve c) const { return c == Curve::g1 ? g1_xyzz : g2_xyzz; }
  constexpr bool operator==(const PointSizes&) const = default;
};
inline constexpr PointSizes kBls12_381Points = PointSizes::over(48);  // G1 affine 96 bytes
inline constexpr PointSizes kBn254Points = PointSizes::over(32);      // G1 affine 64 bytes

// One streamed SRS chunk of m points of a split MSM as it crosses into a chunk buffer, packed on
// the host (gpu::pack_chunk): the points that travel (point_bytes each, at most m: those whose
// scalar is 1, then the tail's) from offset 0, a bitmap over the first (at most m bits), and the
// chunk's tail scalars (at most m). Each part starts kRegionAlign-aligned; `bytes` is the whole.
// Streamed SRS, the H MSM's use of its partition's stage b + c (contiguous, dead once the H step
// has run): its workspace from offset 0, then two point buffers of m G1 points each.
struct HStageLayout {
  uint64_t points0 = 0, points1 = 0, bytes = 0;  // workspace: [0, points0)
  static HStageLayout of(const PointSizes& points, uint64_t m, int c);
};

// Windows of c bits over a 255-bit scalar: floor(255 / c) + 1 (signed digits need the extra one).
int msm_windows(int c);
// The GPU MSM's default window for m points: clamp(ceil(log2 m) - 4, 4, 21).
int default_msm_window(uint64_t m);
// Upper bound of the GPU MSM workspace for every piece of up to m points at window c: the
// kernel's own layout (gpu::msm_layout) with a segment count that bounds every piece size and
// gpu::radix_sort_temp_bound for the sort's storage. Monotone in m and in c. 0 for m == 0.
// `copies`: the MSM runs over a fixed-base table of that many copies (gpu::MsmShape): its sorts
// hold copies·m entries, its buckets one set per `copies` windows.
uint64_t msm_workspace_bound(const PointSizes& points, Curve curve, uint64_t m, int c, int copies = 1);
// A fixed-base table for one MSM of m points (gpu::precompute_bases): c-bit windows and
// `copies` copies of the bases (copy k = 2^(k·c)·P). The choice minimises the modelled MSM cost
// (one mixed addition per point per window, two full additions per bucket per set, a full one
// weighted by its measured cost against a mixed one) within `budget` bytes for the table and the MSM's
// workspace; of equal costs the smaller table wins. copies = 1 (no table: the bases alone) when
// no larger one fits or pays.
struct FixedBaseChoice {
  int c = 0, copies = 1;
  uint64_t table_bytes = 0;      // copies·m affine points
  uint64_t workspace_bytes = 0;  // msm_workspace_bound(points, curve, m, c, copies)
  double cost = 0;               // modelled, in mixed additions
};
// `workspace_floor`: a workspace that exists anyway (the table's MSM counts only what it needs
// beyond it).
FixedBaseChoice choose_fixed_base(const PointSizes& points, Curve curve, uint64_t m, uint64_t budget,
                                  uint64_t workspace_floor = 0);
// An msm slot's window sums (its "sums" region): the G1 windows of H, L, A and B_G1 and their
// three batch-addition sums, then B_G2's windows and its batch sum, for MSMs of `windows` windows.
constexpr uint64_t msm_g1_sums(int windows) { return 4 * uint64_t(windows) + 3; }
constexpr uint64_t msm_g2_sums(int windows) { return uint64_t(windows) + 1; }
constexpr uint64_t msm_sums_bytes(const PointSizes& points, int windows) {
  return msm_g1_sums(windows) * points.g1_xyzz + msm_g2_sums(windows) * points.g2_xyzz;
}
// Upper bound of the bitmap batch addition workspace for m points (gpu::batch_add_layout).
uint64_t batch_add_workspace_bound(const PointSizes& points, Curve curve, uint64_t m);
// Bytes of the GPU NTT's tables of a 2^lg domain, as the kernels lay them out
// (gpu::table_elements: two-level tables of omega, omega^-1, the coset shift and its inverse, the
// small in-pass tables and the direct twist table; full_twist: that table holds a root per twist,
// 2^lg of them, gpu::twist_table_lg).
uint64_t ntt_tables_bound(int lg, bool full_twist = false);

// ---- the circuit ----
// Sizes of one circuit shape (bellman's convention: num_inputs counts the constant one).
// MSM sizes: H h_points (dense scalars), L num_aux, A a_points, B_G1 and B_G2 b_points.
struct CircuitShape {
  int lg = 0;               // evaluation domain 2^lg (a, b, c are 2^lg scalars each)
  uint64_t num_inputs = 0;  // including the constant one
  uint64_t num_aux = 0;
  uint64_t h_points = 0;  // bellman: 2^lg - 1; snarkjs: 2^lg
  uint64_t a_points = 0;  // inputs + aux with a non-zero A column
  uint64_t b_points = 0;  // inputs + aux with a non-zero B column
  PointSizes points = kBls12_381Points;  // the curve's (Filecoin's by default; a BN254 key's: kBn254Points)

  uint64_t domain() const { return uint64_t(1) << lg; }
  uint64_t num_variables() const { return num_inputs + num_aux; }
  // Bytes of the whole SRS's query points (H, L, A, B_G1 in G1; B_G2 in G2).
  uint64_t srs_bytes() const;
  // std::invalid_argument naming the field: lg outside 1..31, no inputs, 2^32 or more variables,
  // h_points 0 or above 2^lg, a_points or b_points above the variables.
  void validate() const;
};

// The shape of a proving key: its QueryLayout's counts and domain (the layout is the one
// description of the queries; the planner does not re-derive it). The synthetic PoRep-shaped
// circuit's is porep_like_shape (groth16/synthetic.hpp, testkit).
CircuitShape shape_of(const QueryLayout& layout, const PointSizes& points);

// ---- the plan ----
enum class SrsPlacement { automatic, resident, streamed };
const char* to_string(SrsPlacement p);

struct PlanRequest {
  CircuitShape shape;
  uint64_t device_memory = 0;                  // bytes of device memory (the card, or free at start)
  uint64_t budget = 0;                         // the arena may use at most this; 0: device_memory - reserve
  uint64_t reserve = kDefaultReserve;          // left outside the arena; budget <= device_memory - reserve
  int gw = 2;                                  // workers per GPU, 1 .. 64
  SrsPlacement srs = SrsPlacement::automatic;  // or force one placement
  // With a resident SRS, spend what the budget has left on a fixed-base table for the H MSM
  // (MemoryPlan::h_copies) when one pays by the MSM cost model (choose_fixed_base).
  bool h_table = true;
  // With a resident SRS, spend 2^lg scalars of what the H table left on a root per NTT twist
  // (MemoryPlan::ntt_full_twist) when they fit.
  bool ntt_full_twist = true;
  // Streamed SRS: partitions that share one pass over the split queries' chunks
  // (MemoryPlan::split_batch: 4 or 2). 0: as many as the msm slots allow (half of them, at most
  // kMaxSplitBatch; fewer than 2: none); 1: none; k >= 2: at most k.
  int split_batch = 0;
};
// The most partitions one pass over a streamed SRS serves (MemoryPlan::split_batch).
inline constexpr int kMaxSplitBatch = 4;

enum class RegionGroup { shared, compute, stage, msm };
const char* to_string(RegionGroup g);

struct Region {
  std::string name;  // e.g. "srs.h", "compute.workspace", "stage[1].b", "msm[0].scalars"
  RegionGroup group = RegionGroup::shared;
  int slot = 0;         // stage/msm slot index; 0 for shared and compute
  uint64_t offset = 0;  // from the arena base, a multiple of kRegionAlign
  uint64_t bytes = 0;
  std::string contents;  // what it holds, for people
  uint64_t end() const { return offset + bytes; }
};

struct MemoryPlan {
  CircuitShape shape;
  uint64_t device_memory = 0, reserve = 0, budget = 0;
  int gw = 0;
  SrsPlacement srs = SrsPlacement::streamed;  // resident or streamed (never automatic)
  int stage_slots = 0;                        // partitions that can hold a, b, c at once
  int msm_slots = 0;                          // partitions in flight at once
  // MSM pieces: at most msm_chunk points per MSM invocation, windows at most window_g1 /
  // window_g2 bits. Any piece of m <= msm_chunk points with c <= the window fits the workspace.
  uint64_t msm_chunk = 0;
  int window_g1 = 0, window_g2 = 0;
  uint64_t workspace_bytes = 0;     // compute.workspace
  uint64_t chunk_buffer_bytes = 0;  // each SRS chunk buffer (streamed: a ChunkLayout of msm_chunk
                                    // points) or, resident, the gather buffer
  // The dense H MSM's pieces. Resident: msm_chunk and window_g1. Streamed, the partition's own
  // stage b and c (contiguous, dead once the H step has run, released only after the H MSM) may
  // hold its workspace (h_workspace_in_stage), with pieces as large as a chunk buffer holds, or
  // its workspace and two point buffers (h_points_in_stage, HStageLayout): then the first piece
  // still comes through chunk buffer 0 (its copy overlaps the NTTs) and the rest, h_chunk points
  // each, through the stage. Else msm_chunk pieces in compute.workspace.
  uint64_t h_chunk = 0;
  int window_h = 0;
  // Copies of the H bases in srs.h (copy k = 2^(k·window_h)·H_i, gpu::precompute_bases at key
  // load): the H MSM runs over that fixed-base table in one piece. 1: the bases alone.
  int h_copies = 1;
  bool h_workspace_in_stage = false, h_points_in_stage = false;
  // ntt.tables holds a root per twist (gpu::twist_table_lg(lg, true): 2^lg roots, 4 GiB at 2^27), so
  // no NTT pass multiplies two table entries for its twist.
  bool ntt_full_twist = false;
  // Streamed SRS, batched split MSMs: the L, A, B_G1 and B_G2 chunks cross PCIe once for
  // split_batch partitions (1: once per partition, packed without their 0-scalar points). Each
  // chunk of batch_chunk points travels as it is in the host SRS, with every partition's bitmaps
  // and tail scalars beside it (gpu::BatchChunkLayout, within chunk_buffer_bytes). The prover runs
  // a batch's four query passes after the H MSMs of the partitions that follow it, one pass (k = 4)
  // or two (k = 2) after each, so they fill the time the single stage slot is being refilled: a
  // batch needs 2 · split_batch msm slots (partitions in flight).
  int split_batch = 1;
  uint64_t batch_chunk = 0;
  uint64_t arena_bytes = 0;         // what to allocate: the end of the last region
  uint64_t resident_minimum = 0;    // smallest budget with a resident SRS
  uint64_t streamed_minimum = 0;    // smallest budget with a streamed SRS
  double msm_cost_ratio = 1.0;      // estimated MSM work relative to one default pass per MSM
  std::vector<Region> regions;      // in offset order

  const Region* find(std::string_view name) const;
  uint64_t group_bytes(RegionGroup g, int slot = -1) const;  // slot -1: every slot of the group
  // Pinned host memory the plan assumes (informational): the host SRS copy, pinned at load.
  uint64_t pinned_srs_bytes() const { return shape.srs_bytes(); }
  // Streamed: the pinned host buffers each SRS chunk of a split MSM is packed into before it
  // crosses (gpu::pack_chunk: only the points whose scalar is not 0), one per chunk buffer and of
  // its size. 0 when resident.
  static constexpr int kPackBuffers = 2;
  uint64_t pinned_pack_bytes() const {
    return srs == SrsPlacement::streamed ? uint64_t(kPackBuffers) * chunk_buffer_bytes : 0;
  }
  // The scalars a stage slot's pinned staging buffer holds (gpu::ProverConfig::pinned_staging):
  // a and b, and the assignment z when the SRS is resident (its MSMs read z on the device).
  uint64_t staging_scalars() const {
    return 2 * shape.domain() + (srs == SrsPlacement::resident ? shape.num_variables() : 0);
  }
  uint64_t pinned_staging_bytes() const { return uint64_t(stage_slots) * staging_scalars() * kScalarBytes; }
  // Host memory a prover of this plan holds while it lives, what it charges against a host budget
  // (HostBudget::hold): its pinned staging (when it stages through pinned buffers) and pack
  // buffers and, streamed, the SRS host copy its chunks come from.
  uint64_t held_host_bytes(bool pinned_staging) const {
    return (pinned_staging ? pinned_staging_bytes() : 0) + pinned_pack_bytes() +
           (srs == SrsPlacement::streamed ? pinned_srs_bytes() : 0);
  }
  // The printable description: settings, then a table of regions with offsets and sizes.
  std::string describe() const;
};

// Infeasible budget (below the minimum for the circuit, or for the forced placement).
class PlanError : public std::runtime_error {
 public:
  PlanError(const std::string& what, uint64_t budget, uint64_t minimum)
      : std::runtime_error(what), budget_(budget), minimum_(minimum) {}
  uint64_t budget() const { return budget_; }
  uint64_t minimum() const { return minimum_; }

 private:
  uint64_t budget_, minimum_;
};

// The plan for `request`. Preferences, in order: a resident SRS; at gw >= 2 at least two msm
// slots (so staging overlaps compute); MSM pieces within 10 % of the estimated one-pass MSM work;
// more stage slots; more msm slots (both at most gw); less MSM work; a smaller arena.
// Throws std::invalid_argument for a bad request (shape, gw, budget above device - reserve) and
// PlanError when no plan fits the budget.
MemoryPlan plan_memory(const PlanRequest& request);
// Smallest budget for which plan_memory succeeds for this shape (any gw) with the placement
// (automatic: the smaller of the two).
uint64_t minimum_budget(const CircuitShape& shape, SrsPlacement srs = SrsPlacement::automatic);
// Independent re-check of a plan: regions in the arena, aligned, disjoint, arena <= budget <=
// device - reserve, slot counts in range, every region at least the size its contents need
// (recomputed from the shape, chunk and windows). Empty when the plan is sound.
std::vector<std::string> plan_violations(const MemoryPlan& plan);

// Bytes of the vectors of a witness (a, b, c, input, aux as 32-byte scalars, and the densities)
// from its counts alone (rows of a, b and c; inputs; aux), so that a caller can tell from a
// file's header whether a partition can ever fit a host budget (the daemon's Submit does).
uint64_t witness_bytes(uint64_t rows, uint64_t inputs, uint64_t aux);

// "16GiB", "141GB", "1.5 TiB", "4096", "512MiB": B, kB/KB, MB, GB, TB (powers of 1000),
// KiB, MiB, GiB, TiB (powers of 1024), case-insensitive; std::invalid_argument otherwise.
uint64_t parse_byte_size(std::string_view text);
// A device budget as users write it: "card" (the card less the reserve: 0 in PlanRequest and
// every config) or a byte size as parse_byte_size reads it, which must not be 0.
uint64_t parse_budget(std::string_view text);
// "12.00 GiB", "4.00 MiB", "256 B".
std::string format_bytes(uint64_t bytes);

}  // namespace pp::engine
