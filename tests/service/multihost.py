# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Three `proofpipe serve --queue postgresql://...` daemons on one PostgreSQL database (the test
cluster of scripts/pg-test-cluster), 30 jobs submitted round-robin to them, one daemon killed
with SIGKILL while it holds a job: every job ends SUCCEEDED exactly once (one row per request,
attempts 1, or 2 for the jobs the killed daemon held, each finished by one daemon: the database's
finished_by matches every survivor's finished-jobs counter), every proof verifies, any daemon
answers Await for a job another one ran, and the password of the URI shows in no output. Start-up
refusals: a wrong password, no server, a URI that is not postgresql://."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_common as c  # noqa: E402

JOBS = 30
PARTITIONS = 8     # per job (the two witnesses alternating)
LEASE_MS = 1500    # short: the killed daemon's jobs come back within ~1.5 s
AWAIT_MS = 120000  # per Await: the whole run takes ~10 s here (release)


def psql(uri, sql):
    """Rows of a query, as lists of strings (psql of the postgresql-client package)."""
    r = subprocess.run(["psql", uri, "-X", "-q", "-At", "-F", "|", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise AssertionError(f"psql failed: {r.stderr}")
    return [line.split("|") for line in r.stdout.splitlines() if line]


def with_database(uri, db):
    m = re.match(r"^(postgres(?:ql)?://[^/?]*)(/[^?]*)?(\?.*)?$", uri)
    assert m, "the cluster's URI is not postgresql://"
    return f"{m.group(1)}/{db}{m.group(3) or ''}"


def rows(uri):
    return {r[0]: {"job_id": r[1], "state": int(r[2]), "attempts": int(r[3]), "owner": r[4], "finished_by": r[5]}
            for r in psql(uri, "SELECT request_id, job_id, state, attempts, coalesce(owner, ''), "
                               "coalesce(finished_by, '') FROM proofpipe_jobs")}


def refused(args, data, extra, *fragments, secret=None):
    """`serve` with these options must exit non-zero at start, its message holding each fragment."""
    r = c.run([args.proofpipe, "serve", "--listen", "127.0.0.1:0", "--data-root", data, "--cpu"] + extra, check=False)
    assert r.returncode != 0, f"serve {extra} started:\n{r.stdout}"
    for f in fragments:
        assert f in r.stdout, f"'{f}' not in: {r.stdout}"
    if secret:
        assert secret not in r.stdout, f"the password shows: {r.stdout}"
    print(f"  ok: refused: {r.stdout.strip().splitlines()[-1]}")


def main():
    args = c.parse_args()
    if not args.pg_uri_file:
        sys.exit("--pg-uri-file: the test cluster's URI file (ctest's fixture service_pg writes it)")
    base = open(args.pg_uri_file).read().strip()
    password = re.match(r"^postgres(?:ql)?://[^:/@]*:([^@/]*)@", base).group(1)
    pb, _ = c.stubs(args)
    db = f"pp_multihost_{os.getpid()}"
    psql(base, f"DROP DATABASE IF EXISTS {db}")
    psql(base, f"CREATE DATABASE {db}")
    uri = with_database(base, db)
    try:
        run(args, pb, uri, password)
    finally:
        c.Daemon.kill_all()
        psql(base, f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def run(args, pb, uri, password):
    data, k, params, pubs = c.example_key(args)  # data: storage every "host" sees, one --data-root
    w = ["k/witness-0.ppw", "k/witness-1.ppw"] * (PARTITIONS // 2)
    pub = pubs * (PARTITIONS // 2)

    print("start-up refusals:")
    wrong = uri.replace(f":{password}@", ":not-the-password-31337@")
    refused(args, data, ["--queue", wrong], "--queue postgresql://proofpipe:***@", secret="not-the-password-31337")
    no_server = re.sub(r"@127\.0\.0\.1:\d+/", "@127.0.0.1:1/", uri)
    refused(args, data, ["--queue", no_server], "--queue postgresql://proofpipe:***@127.0.0.1:1/", secret=password)
    refused(args, data, ["--queue", f"mysql://proofpipe:{password}@127.0.0.1/x"], "--queue", secret=password)
    refused(args, data, ["--queue", uri, "--lease-ms", "5"], "--lease-ms", secret=password)

    t0 = time.time()
    daemons = []
    for i in range(3):
        d = c.Daemon(args, data, os.path.join(args.work, f"state-{i}"),
                     extra=["--queue", uri, "--lease-ms", str(LEASE_MS), "--jobs", "2", "--metrics", "127.0.0.1:0"])
        assert password not in d.banner, f"the password shows in the banner: {d.banner}"
        m = re.search(r"queued in --queue (\S+); owner (\S+)\)", d.banner)
        assert m, f"no store/owner in the banner: {d.banner}"
        assert m.group(1).startswith("postgresql://proofpipe:***@"), m.group(1)
        d.owner = m.group(2)
        daemons.append(d)
    print(f"3 daemons up in {time.time() - t0:.1f} s: {[d.owner for d in daemons]}")
    victim, survivors = daemons[2], daemons[:2]

    t0 = time.time()
    reqs = [pb.SubmitRequest(request_id=f"mh-{i}", key_path="k/params", witness_paths=w) for i in range(JOBS)]
    ids = [daemons[i % 3].stub.Submit(r).job_id for i, r in enumerate(reqs)]
    assert len(set(ids)) == JOBS

    # Mid-run: some jobs done, and the victim holding at least one running job.
    deadline = time.time() + 120
    while True:
        r = rows(uri)
        done = sum(1 for x in r.values() if x["state"] == pb.JOB_STATE_SUCCEEDED)
        held = [rid for rid, x in r.items() if x["state"] == pb.JOB_STATE_RUNNING and x["owner"] == victim.owner]
        if done >= 3 and held:
            break
        assert time.time() < deadline, f"the victim never held a job mid-run: {r}"
        time.sleep(0.02)
    victim.kill9()
    killed_at = time.time()
    at_kill = rows(uri)
    interrupted = sorted(rid for rid, x in at_kill.items()
                         if x["state"] == pb.JOB_STATE_RUNNING and x["owner"] == victim.owner)
    done_by_victim = sorted(rid for rid, x in at_kill.items() if x["finished_by"] == victim.owner)
    print(f"killed {victim.owner} (-9) {killed_at - t0:.1f} s in, with {len(interrupted)} job(s) running "
          f"{interrupted} and {len(done_by_victim)} finished by it; "
          f"{sum(1 for x in at_kill.values() if x['state'] == pb.JOB_STATE_SUCCEEDED)} of {JOBS} done")
    assert interrupted, "the victim held no job at the kill"

    # Clients of the dead daemon retry their Submits elsewhere: the same jobs.
    for i, (rq, job_id) in enumerate(zip(reqs, ids)):
        again = survivors[i % 2].stub.Submit(rq)
        assert again.job_id == job_id and again.duplicate, (again, job_id)

    for i, (rq, job_id) in enumerate(zip(reqs, ids)):
        j = survivors[i % 2].stub.Await(pb.AwaitRequest(job_id=job_id, timeout_ms=AWAIT_MS),
                                        timeout=AWAIT_MS / 1000 + 30)
        assert j.state == pb.JOB_STATE_SUCCEEDED, \
            f"{rq.request_id} ({job_id}) is {pb.JobState.Name(j.state)} after {AWAIT_MS / 1000:.0f} s: " \
            f"{rows(uri)[rq.request_id]} (the killed daemon was {victim.owner})"
    wall = time.time() - t0
    print(f"all {JOBS} jobs SUCCEEDED {wall:.1f} s after the first Submit "
          f"({time.time() - killed_at:.1f} s after the kill)")

    final = rows(uri)
    assert sorted(final) == sorted(r.request_id for r in reqs), f"rows: {sorted(final)}"
    owners = {d.owner: d for d in daemons}
    for rid, x in final.items():
        assert x["state"] == pb.JOB_STATE_SUCCEEDED, (rid, x)
        assert x["finished_by"] in owners, (rid, x)
        if rid in interrupted:
            assert x["attempts"] == 2, f"{rid} was running on the killed daemon: {x}"
            assert x["finished_by"] != victim.owner, (rid, x)
        else:
            assert x["attempts"] == 1, f"{rid} ran more than once: {x}"
    # Each job finished by exactly one daemon: the survivors' own counters agree with the rows.
    by_owner = {o: sum(1 for x in final.values() if x["finished_by"] == o) for o in owners}
    assert by_owner[victim.owner] == len(done_by_victim), (by_owner, done_by_victim)
    counted = 0
    for d in survivors:
        _, samples = c.scrape_when(
            d.metrics_url, lambda m: m['proofpipe_jobs_finished_total{state="succeeded"}'] == by_owner[d.owner])
        n = samples['proofpipe_jobs_finished_total{state="succeeded"}']
        assert n == by_owner[d.owner], f"{d.owner}: finished {n}, the database says {by_owner[d.owner]}"
        assert samples['proofpipe_jobs{state="succeeded"}'] == JOBS, samples
        counted += n
    assert counted + by_owner[victim.owner] == JOBS, (counted, by_owner)
    print(f"finished per daemon: {by_owner}")

    # Any daemon answers Await for a job another one ran (results live in the database).
    for i, (rq, job_id) in enumerate(zip(reqs, ids)):
        ran = final[rq.request_id]["finished_by"]
        d = next(s for s in survivors if s.owner != ran)
        j = d.stub.Await(pb.AwaitRequest(job_id=job_id), timeout=30)
        assert j.state == pb.JOB_STATE_SUCCEEDED and j.attempts == final[rq.request_id]["attempts"], j
        assert len(j.proofs) == PARTITIONS * 192
        assert c.verify(args, params, j.proofs, pub, f"{job_id}.bin"), f"{job_id}: proofs do not verify"
    print(f"every job's proofs verify, each awaited on a daemon that did not run it")

    reaped = sum(open(d.log_path).read().count("whose daemon's lease expired") for d in survivors)
    assert reaped >= 1, "no survivor logged re-queueing the dead daemon's jobs"
    for d in survivors:
        assert d.stop() == 0
    for d in daemons:
        log = open(d.log_path).read()
        assert password not in log, f"the password shows in {d.log_path}"
    assert psql(uri, "SELECT count(*) FROM proofpipe_jobs WHERE state <> 3") == [["0"]]
    print(f"service_multihost: ok ({JOBS} jobs x {PARTITIONS} partitions on 3 daemons, one killed with "
          f"{len(interrupted)} job(s) running, re-run elsewhere; {wall:.1f} s)")


if __name__ == "__main__":
    main()
