# SPDX-License-Identifier: Apache-2.0 OR MIT
"""kill -9 of `proofpipe serve` while a job runs, then a restart on the same journal: every job
succeeds exactly once (one journal row per request, the same job id for a retried Submit), its
proofs verify, and the job that was running is run again (attempts 2). --repeat times, each with a
random moment of the kill."""
import os
import random
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_common as c  # noqa: E402

JOBS = 4        # jobs per repetition
PARTITIONS = 16 # partitions per job (the two witnesses alternating)


def journal_rows(state):
    db = sqlite3.connect(os.path.join(state, "jobs.sqlite3"))
    try:
        return {r[0]: r[1:] for r in db.execute("SELECT request_id, job_id, state, attempts FROM jobs")}
    finally:
        db.close()


def main():
    args = c.parse_args()
    pb, _ = c.stubs(args)
    data, k, params, pubs = c.example_key(args)
    w = ["k/witness-0.ppw", "k/witness-1.ppw"] * (PARTITIONS // 2)
    pub = pubs * (PARTITIONS // 2)
    seed = int(os.environ.get("PROOFPIPE_KILL9_SEED", str(time.time_ns())))
    print(f"  PROOFPIPE_KILL9_SEED={seed} (set it to replay these moments)")
    rng = random.Random(seed)
    killed_while_running = 0
    for rep in range(args.repeat):
        state = os.path.join(args.work, f"state-{rep}")
        d = c.Daemon(args, data, state, extra=["--jobs", "2"])
        reqs = [pb.SubmitRequest(request_id=f"rep{rep}-job{i}", key_path="k/params", witness_paths=w)
                for i in range(JOBS)]
        ids = [d.stub.Submit(r).job_id for r in reqs]
        # Wait until a job runs, then kill at a random moment within the next partitions.
        deadline = time.time() + 60
        while d.stub.GetStatus(pb.GetStatusRequest()).running == 0:
            assert time.time() < deadline, "no job started"
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.5))
        d.kill9()
        at_kill = journal_rows(state)
        running = [rid for rid, (_, st, _) in at_kill.items() if st == pb.JOB_STATE_RUNNING]
        print(f"  rep {rep}: killed with {len(running)} job(s) running: "
              f"{sorted((rid, pb.JobState.Name(st)) for rid, (_, st, _) in at_kill.items())}")
        killed_while_running += len(running)

        d = c.Daemon(args, data, state, extra=["--jobs", "2"])
        for r, job_id in zip(reqs, ids):  # a client retrying its Submit gets the same job back
            again = d.stub.Submit(r)
            assert again.job_id == job_id and again.duplicate, (again, job_id)
        for r, job_id in zip(reqs, ids):
            j = d.stub.Await(pb.AwaitRequest(job_id=job_id), timeout=60)
            assert j.state == pb.JOB_STATE_SUCCEEDED, j
            assert len(j.proofs) == PARTITIONS * 192
            assert c.verify(args, params, j.proofs, pub, f"rep{rep}-{job_id}.bin"), f"{job_id}: proofs do not verify"
        rows = journal_rows(state)
        assert sorted(rows) == sorted(r.request_id for r in reqs), f"journal rows: {sorted(rows)}"
        for rid, (job_id, st, attempts) in rows.items():
            assert st == pb.JOB_STATE_SUCCEEDED, (rid, st)
            if rid in running:
                assert attempts == 2, f"{rid} was running at the kill: {attempts} attempt(s)"
            elif at_kill[rid][1] == pb.JOB_STATE_SUCCEEDED:
                assert attempts == 1, f"{rid} had succeeded before the kill but ran again ({attempts})"
        assert d.stop() == 0
    assert killed_while_running > 0, "no repetition killed the daemon while a job was running"
    print(f"service_kill9: ok ({args.repeat} repetitions, {killed_while_running} job(s) interrupted and re-run)")


if __name__ == "__main__":
    main()
