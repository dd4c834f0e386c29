# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Load on loopback: 8 client threads submit --jobs small jobs (2^10 constraints, one partition
each, the CPU prover) to one `proofpipe serve`, each thread awaiting its job before submitting
the next. Every job must succeed and none may be lost: the daemon's GetStatus and the journal
itself must count exactly the jobs submitted, each once. Prints the throughput and the p50/p99
submit-to-done latency (client side: from the Submit call to Await's answer)."""
import os
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_common as c  # noqa: E402

THREADS = 8


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(round(q * (len(sorted_values) - 1))))]


def main():
    args = c.parse_args()
    pb, _ = c.stubs(args)
    n = args.jobs
    assert n >= THREADS, "--jobs: at least one job per thread"
    data, k, params, _ = c.example_key(args)
    witnesses = ["k/witness-0.ppw", "k/witness-1.ppw"]
    state = os.path.join(args.work, "state")
    d = c.Daemon(args, data, state, extra=["--jobs", "2", "--metrics", "127.0.0.1:0"])
    stub = d.stub
    # The key is loaded by a first job, outside the measurement.
    warm = stub.Prove(pb.SubmitRequest(request_id="warm-up", key_path="k/params", witness_paths=witnesses[:1]),
                      timeout=120)
    assert warm.state == pb.JOB_STATE_SUCCEEDED, warm

    results = [None] * n  # (job id, Job, seconds from Submit to done)
    failures = []

    def client(t):
        try:
            for i in range(t, n, THREADS):
                req = pb.SubmitRequest(request_id=f"load-{i}", key_path="k/params", witness_paths=[witnesses[i % 2]])
                t0 = time.perf_counter()
                job_id = stub.Submit(req, timeout=120).job_id
                job = stub.Await(pb.AwaitRequest(job_id=job_id), timeout=600)
                results[i] = (job_id, job, time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 (reported below; the thread must not die silently)
            failures.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=client, args=(t,)) for t in range(THREADS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    assert not failures, failures

    # Every job came back, succeeded, with one proof, under its own id.
    assert all(r is not None for r in results), f"{sum(r is None for r in results)} job(s) never answered"
    bad = [(i, pb.JobState.Name(j.state), j.error) for i, (_, j, _) in enumerate(results)
           if j.state != pb.JOB_STATE_SUCCEEDED or len(j.proofs) != 192]
    assert not bad, f"{len(bad)} job(s) did not succeed: {bad[:5]}"
    ids = [job_id for job_id, _, _ in results]
    assert len(set(ids)) == n, f"{n - len(set(ids))} duplicate job id(s)"
    # None lost: the daemon and its journal hold exactly these jobs (and the warm-up), each once.
    # (A worker lets go of its job just after committing it: `running` follows within moments.)
    st, deadline = stub.GetStatus(pb.GetStatusRequest()), time.monotonic() + 10
    while st.running and time.monotonic() < deadline:
        time.sleep(0.02)
        st = stub.GetStatus(pb.GetStatusRequest())
    assert st.jobs_succeeded == n + 1 and st.jobs_failed == 0 and st.jobs_cancelled == 0, st
    assert st.queue_depth == 0 and st.running == 0, st
    sim = int(os.environ.get("PROOFPIPE_TEST_SIM_GPUS", "0"))
    assert st.gpus == sim, f"the daemon proves on {st.gpus} GPU(s); PROOFPIPE_TEST_SIM_GPUS={sim}"
    db = sqlite3.connect(os.path.join(state, "jobs.sqlite3"))
    rows = dict(db.execute("SELECT request_id, job_id FROM jobs WHERE request_id LIKE 'load-%' AND state = ?",
                           (pb.JOB_STATE_SUCCEEDED,)).fetchall())
    total = db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
    db.close()
    assert total == n + 1, f"the journal has {total} rows, expected {n + 1}"
    assert rows == {f"load-{i}": ids[i] for i in range(n)}, "journal rows differ from the jobs answered"
    _, m = c.scrape_when(d.metrics_url, lambda m: m['proofpipe_jobs_finished_total{state="succeeded"}'] == n + 1)
    assert m['proofpipe_jobs_finished_total{state="succeeded"}'] == n + 1, m
    assert m["proofpipe_partitions_proved_total"] == n + 1, m
    if sim:
        # Every GPU is listed, in GetStatus and in the scrape; the one PROOFPIPE_TEST_LOSE_GPU names
        # (DEVICE@N) is reported lost with the partition it handed over, and the partitions add up.
        lost = int(os.environ["PROOFPIPE_TEST_LOSE_GPU"].split("@")[0]) if os.environ.get("PROOFPIPE_TEST_LOSE_GPU") else -1
        assert [g.device for g in st.devices] == list(range(sim)), st
        assert sum(g.partitions for g in st.devices) == n + 1, st
        for g in st.devices:
            gpu = f'{{gpu="{g.device}"}}'
            assert g.healthy == (g.device != lost) and m["proofpipe_gpu_healthy" + gpu] == int(g.healthy), (g, m)
            assert (g.partitions_handed_off >= 1) == (g.device == lost), g
            assert m["proofpipe_gpu_handed_off_total" + gpu] == g.partitions_handed_off, (g, m)
            assert m["proofpipe_gpu_partitions_total" + gpu] == g.partitions, (g, m)
            assert "proofpipe_gpu_compute_ms_total" + gpu in m, m
    # A sample of the proofs verifies (both witnesses).
    for i in (0, 1, n - 1):
        pub = [os.path.join(k, f"public-{i % 2}.json")]
        assert c.verify(args, params, results[i][1].proofs, pub, f"load-{i}.bin"), f"job {i}: proofs do not verify"
    assert d.stop() == 0

    latencies = sorted(r[2] * 1000 for r in results)
    server_total = sorted(r[1].timings.total_ms for r in results)
    print(f"service_load: ok: {n} jobs (2^10, 1 partition, CPU prover, --jobs 2) from {THREADS} client threads "
          f"in {wall:.1f} s: {n / wall:.1f} jobs/s; submit-to-done latency p50 {percentile(latencies, 0.5):.0f} ms, "
          f"p99 {percentile(latencies, 0.99):.0f} ms, max {latencies[-1]:.0f} ms "
          f"(daemon's total_ms p50 {percentile(server_total, 0.5):.0f}, p99 {percentile(server_total, 0.99):.0f})")


if __name__ == "__main__":
    main()
