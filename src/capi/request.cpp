// SPDX-License-Identifier: Apache-2.0 OR MIT
// Proving a request on the engine (request.hpp).
#include "request.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "proofpipe/engine/engine.hpp"
#include "proofpipe/io/witness.hpp"

namespace pp::capi {
namespace {

// Keeps the storage busy when the page cache is cold: the files after the one being read are
// read into the page cache (prefetch_witness: one sequential stream per file, as `cat` reads) by
// threads of their own, so the storage never waits for the CPU work of reading, checking and
// staging a partition, and the reader then finds the pages in the cache. Several streams at
// once: a virtual or networked disk delivers more to a few sequential streams than to one
// (measured on the H200 host's virtio disk). At most `depth` files past the one being read
// are requested, which bounds the page cache this takes.
class Prefetcher {
 public:
  Prefetcher(const Request& req, std::size_t streams, std::size_t depth) : depth_(depth) {
    for (const PendingInput& in : req.inputs) files_.push_back(in.witness || in.borrowed ? std::string() : in.file);
    const auto n = std::size_t(std::count_if(files_.begin(), files_.end(), [](const std::string& f) { return !f.empty(); }));
    for (std::size_t t = 0; t < std::min(streams, n); ++t) threads_.emplace_back([this] { run(); });
  }
  ~Prefetcher() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  // Input k is being read now.
  void reading(std::size_t k) {
    {
      std::lock_guard lock(mu_);
      reading_ = k;
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      std::size_t k;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || next_ >= files_.size() || next_ <= reading_ + depth_; });
        if (stop_ || next_ >= files_.size()) return;
        k = next_++;
      }
      if (!files_[k].empty()) prefetch_witness(files_[k]);
    }
  }
  std::vector<std::string> files_;
  std::size_t depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t reading_ = 0, next_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// PP_BORROW_ASSIGNMENT: the a, b, c of every copy_abc input copied in input order by a thread of
// its own, ahead of the submissions (which wait for them, take(k)), so that the caller gets its
// arrays back (`released`) once the last copy is made while the first partitions already prove.
// At most `ahead` copies exist beyond the partitions that ended (ended()), so a request of many
// large partitions holds a bounded number of copies. A failed copy ends the copying; take()
// rethrows it for its input.
class AbcCopier {
 public:
  AbcCopier(const Request& req, std::function<void()> released, std::size_t ahead)
      : slots_(req.inputs.size()), ahead_(ahead) {
    const bool any = std::any_of(req.inputs.begin(), req.inputs.end(), [](const PendingInput& in) { return in.copy_abc; });
    if (!any) {
      if (released) released();
      return;
    }
    thread_ = std::thread([this, &req, released = std::move(released)] {
      std::size_t copies = 0;
      for (std::size_t k = 0; k < req.inputs.size(); ++k) {
        const PendingInput& in = req.inputs[k];
        if (!in.copy_abc) continue;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return stop_ || copies < ended_ + ahead_; });
          if (stop_) break;
        }
        ++copies;
        Slot slot;
        try {
          slot.witness = std::make_shared<const Witness>(witness_copying_abc(*in.borrowed, k));
        } catch (...) {
          slot.error = std::current_exception();
        }
        const bool failed = slot.error != nullptr;
        {
          std::lock_guard lock(mu_);
          slots_[k] = std::move(slot);
          slots_[k].ready = true;
        }
        cv_.notify_all();
        if (failed) break;
      }
      if (released) released();  // nothing of the caller's a, b, c is read after this
    });
  }
  ~AbcCopier() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // A partition of the request ended (proved, failed or cancelled): one more copy may be made.
  void ended() {
    {
      std::lock_guard lock(mu_);
      ++ended_;
    }
    cv_.notify_all();
  }
  AbcCopier(const AbcCopier&) = delete;
  AbcCopier& operator=(const AbcCopier&) = delete;

  // Input k's witness once its copy is made; its copy's failure rethrown; Cancelled when
  // `cancelled()` turns true first.
  template <class Cancelled_>
  std::shared_ptr<const Witness> take(std::size_t k, Cancelled_&& cancelled) {
    std::unique_lock lock(mu_);
    while (!slots_[k].ready) {
      if (cancelled()) throw Cancelled();
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    if (slots_[k].error) std::rethrow_exception(slots_[k].error);
    return std::move(slots_[k].witness);
  }

 private:
  struct Slot {
    bool ready = false;
    std::shared_ptr<const Witness> witness;
    std::exception_ptr error;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  std::size_t ahead_, ended_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// Proves a request on the engine: each partition is its own engine job, submitted as soon as its
// witness is in memory, so that reading partition k+1 overlaps proving partition k; at most a few
// partitions are read ahead of the engine (host memory). The first failure, in input order,
// cancels the rest and is rethrown as it was thrown (status_of maps it).
std::vector<Proof> run_request(EngineImpl& engine, const KeyImpl& key, Request& req, const Progress& progress) {
  runtime::Runtime& rt = *engine.runtime;
  const std::size_t n = req.inputs.size();
  const std::size_t ahead = std::size_t(std::max(1, rt.gpu_count()) * rt.config().gw + 1);
  std::vector<engine::JobHandle> jobs;
  jobs.reserve(n);
  auto cancelled = [&] { return progress.cancel && progress.cancel->load(std::memory_order_relaxed); };
  auto cancel_all = [&] {
    for (const auto& j : jobs) rt.cancel(j.id());
  };
  // 4 streams, 4 files ahead: with a cold cache this reads faster than one stream, and faster than
  // cat, on the GPU host's disk (docs/perf-history/engine-and-entry-points.md).
  Prefetcher prefetcher(req, /*streams=*/4, /*depth=*/4);
  AbcCopier copier(req, progress.abc_released, ahead + 1);  // joined before `jobs` go: declared after them
  try {
    std::size_t oldest = 0;  // jobs before this one are done
    for (std::size_t k = 0; k < n; ++k) {
      for (;;) {  // bounded read-ahead
        while (oldest < jobs.size() && jobs[oldest].done()) ++oldest;
        if (cancelled() || jobs.size() - oldest < ahead) break;
        jobs[oldest].wait_for(std::chrono::milliseconds(20));
      }
      if (cancelled()) throw Cancelled();
      PendingInput& in = req.inputs[k];
      prefetcher.reading(k);
      if (!in.witness && in.copy_abc) {
        in.witness = copier.take(k, cancelled);
      } else if (!in.witness && in.borrowed) {
        in.witness = engine.readers.execute(
            [&] { return std::make_shared<const Witness>(witness_from_input(*in.borrowed, k, key, /*borrow=*/true)); });
      } else if (!in.witness) {
        in.witness = as_witness_error(input_name(k), [&] {
          return engine.readers.execute([&] { return std::make_shared<const Witness>(read_witness(in.file)); });
        });
      }
      engine::JobSpec spec;
      spec.key = key.pk;
      spec.witnesses = {in.witness};
      spec.randomizers = {req.randomizers[k]};
      spec.partition_base = k;
      spec.backend = req.backend;
      spec.on_partition = [done = progress.partitions_done, &copier](uint64_t, std::size_t,
                                                                     const engine::PartitionResult& r) {
        if (done && r.status == engine::JobStatus::ok) done->fetch_add(1, std::memory_order_relaxed);
        copier.ended();
      };
      jobs.push_back(rt.submit(std::move(spec)));
      in.witness.reset();  // the engine holds it while it is needed
      if (progress.jobs) {
        std::lock_guard lock(*progress.jobs_mu);
        progress.jobs->push_back(jobs.back().id());
      }
    }
    std::vector<Proof> proofs;
    proofs.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      const engine::JobResult r = jobs[k].wait();
      if (r.status == engine::JobStatus::ok) {
        proofs.push_back(r.proofs.at(0));
        continue;
      }
      if (r.status == engine::JobStatus::cancelled || cancelled()) throw Cancelled();
      const engine::PartitionResult& part = r.partitions.at(0);
      if (part.exception) {
        try {
          std::rethrow_exception(part.exception);
        } catch (const ScalarRangeError& e) {  // a borrowed array's value, found while proving
          throw_unreduced(input_name(k) + ".assignment." + e.vector(), e.index());
        }
      }
      throw std::runtime_error(input_name(k) + ": " + r.error);
    }
    return proofs;
  } catch (...) {
    cancel_all();
    for (const auto& j : jobs) j.wait();  // nothing of this request outlives the call
    throw;
  }
}

// A BN254 key's request (its witnesses computed at start): one engine job of every partition on
// the runtime's BN254 engine. The first failed partition, in input order, decides the error.
std::vector<bn254::Proof> run_bn254_request(EngineImpl& engine, const KeyImpl& key, Request& req,
                                            const Progress& progress) {
  runtime::Runtime& rt = *engine.runtime;
  if (progress.cancel && progress.cancel->load(std::memory_order_relaxed)) throw Cancelled();
  engine::JobSpecOf<bn254::Bn254> spec;
  spec.key = key.pk_bn254;
  spec.witnesses = std::move(req.bn254_witnesses);
  spec.randomizers = req.bn254_randomizers;
  spec.backend = req.backend;
  spec.on_partition = [done = progress.partitions_done](uint64_t, std::size_t,
                                                        const engine::PartitionResultOf<bn254::Bn254>& r) {
    if (done && r.status == engine::JobStatus::ok) done->fetch_add(1, std::memory_order_relaxed);
  };
  const auto job = rt.submit(std::move(spec));
  if (progress.jobs) {
    std::lock_guard lock(*progress.jobs_mu);
    progress.jobs->push_back(job.id());
  }
  if (progress.cancel && progress.cancel->load(std::memory_order_relaxed)) rt.cancel(job.id());  // cancelled meanwhile
  const auto r = job.wait();
  if (r.status == engine::JobStatus::ok) return r.proofs;
  if (r.status == engine::JobStatus::cancelled) throw Cancelled();
  for (std::size_t k = 0; k < r.partitions.size(); ++k) {
    const auto& part = r.partitions[k];
    if (part.status != engine::JobStatus::failed) continue;
    if (part.exception) {
      try {
        std::rethrow_exception(part.exception);
      } catch (const WitnessError& e) {
        throw WitnessError(input_name(k) + ": " + e.what());
      }
    }
    throw std::runtime_error(input_name(k) + ": " + part.error);
  }
  throw std::runtime_error("the engine failed the request: " + r.error);
}

// The proofs' bytes, in input order.
template <class P>
std::vector<uint8_t> proof_bytes_of(const std::vector<P>& proofs) {
  std::vector<uint8_t> out;
  out.reserve(proofs.size() * P::kBytes);
  for (const P& p : proofs) {
    const auto b = p.to_bytes();
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

}  // namespace

// Proves a request and books the outcome in the engine's call counters.
std::vector<uint8_t> run_batch(const std::shared_ptr<EngineImpl>& engine, const KeyImpl& key, Request& req,
                               const Progress& progress) {
  key.add_user(engine);
  try {
    std::vector<uint8_t> proofs = key.curve == PP_CURVE_BN254
                                      ? proof_bytes_of(run_bn254_request(*engine, key, req, progress))
                                      : proof_bytes_of(run_request(*engine, key, req, progress));
    engine->calls_succeeded.fetch_add(1);
    return proofs;
  } catch (const Cancelled&) {
    engine->calls_cancelled.fetch_add(1);
    throw;
  } catch (...) {
    engine->calls_failed.fetch_add(1);
    throw;
  }
}

}  // namespace pp::capi
