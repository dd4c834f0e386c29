# SPDX-License-Identifier: Apache-2.0 OR MIT
"""End to end: `proofpipe serve` and a Python gRPC client generated from prover.proto at test
time. Two jobs (witness paths and inline witnesses) are submitted, one watched, both awaited; their
proofs verify with `proofpipe verify`. Then malformed requests must get the right status codes
while the daemon stays up, a cancelled job must end CANCELLED, a clean SIGTERM must exit 0, and a
restarted daemon must still return the finished job."""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_common as c  # noqa: E402


def main():
    args = c.parse_args()
    pb, _ = c.stubs(args)
    import grpc
    S = grpc.StatusCode
    data, k, params, pub = c.example_key(args)
    c.setup(args, os.path.join(data, "small"), lg=8, partitions=1)
    # snarkjs: the committed multiplier circuit's key and witness (tests/data/snarkjs), over bls12381
    # and over bn128 (multiplier_bn128.*: circom2's default prime, snarkjs `wtns calculate` on
    # tests/circom/multiplier.input.json, `proofpipe zkey setup --seed 5`).
    snark = os.path.join(os.path.dirname(os.path.abspath(args.proto)), "tests", "data", "snarkjs")
    sdir = os.path.join(data, "s")
    os.makedirs(sdir)
    for name in ("multiplier.zkey", "multiplier.wtns", "multiplier_bn128.zkey", "multiplier_bn128.wtns"):
        shutil.copy(os.path.join(snark, name), sdir)
    shutil.copy(os.path.join(snark, "multiplier_setup.zkey"), os.path.join(sdir, "zkey-named.params"))
    wtns = open(os.path.join(sdir, "multiplier.wtns"), "rb").read()
    open(os.path.join(sdir, "fake.zkey"), "wb").write(b"zkey" + b"\0" * 60)
    # A witness of another circuit: one value more (nWitness at byte 60, section 2's size at 68).
    n, size2 = struct.unpack_from("<I", wtns, 60)[0], struct.unpack_from("<Q", wtns, 68)[0]
    long_wtns = bytearray(wtns) + bytes(32)
    struct.pack_into("<I", long_wtns, 60, n + 1)
    struct.pack_into("<Q", long_wtns, 68, size2 + 32)
    open(os.path.join(sdir, "long.wtns"), "wb").write(long_wtns)
    w = ["k/witness-0.ppw", "k/witness-1.ppw"]
    inline = [open(os.path.join(k, f"witness-{i}.ppw"), "rb").read() for i in (1, 0)]
    state = os.path.join(args.work, "state")
    # Beyond loopback is refused (no token or TLS yet), before any state is written.
    r = c.run([args.proofpipe, "serve", "--listen", "0.0.0.0:0", "--data-root", data, "--state",
               os.path.join(args.work, "refused")], check=False)
    assert r.returncode != 0 and "--listen 0.0.0.0:0: only loopback" in r.stdout, r.stdout
    assert not os.path.exists(os.path.join(args.work, "refused"))
    # A small message limit, so that "too large" is cheap to provoke.
    d = c.Daemon(args, data, state, extra=["--max-message", str(1 << 20), "--metrics", "127.0.0.1:0"])
    s = d.stub
    assert d.metrics_url, d.banner
    _, m0 = c.scrape(d.metrics_url)
    for series in ('proofpipe_jobs{state="queued"}', 'proofpipe_jobs_finished_total{state="succeeded"}',
                   "proofpipe_partitions_proved_total", "proofpipe_queue_depth", "proofpipe_jobs_running",
                   "proofpipe_keys_loaded", "proofpipe_keys_device_resident", "proofpipe_gpu_busy_ms_total",
                   "proofpipe_key_loads_total", "proofpipe_srs_streamed_bytes_total",
                   "proofpipe_host_rss_bytes", "proofpipe_host_budget_bytes",
                   'proofpipe_requests_total{rpc="Submit",code="OK"}'):
        assert series in m0, f"{series} missing from the scrape: {sorted(m0)}"
    assert m0["proofpipe_partitions_proved_total"] == 0 and m0["proofpipe_host_rss_bytes"] > 0, m0
    assert m0["proofpipe_srs_streamed_bytes_total"] == 0, m0  # nothing proved, nothing streamed
    # Device memory: one series per GPU and kind, as many GPUs as GetStatus lists (none on the CPU prover).
    st0 = s.GetStatus(pb.GetStatusRequest())
    assert len(st0.devices) == st0.gpus and m0["proofpipe_host_budget_bytes"] == st0.host_budget_bytes == 0, st0
    for g in st0.devices:
        assert g.memory_used_bytes <= g.memory_budget_bytes <= g.memory_total_bytes, g
        for kind in ("total", "budget", "used", "peak"):
            key = f'proofpipe_device_memory_bytes{{gpu="{g.device}",kind="{kind}"}}'
            assert key in m0, f"{key} missing from the scrape"
    assert sum(k.startswith("proofpipe_device_memory_bytes{") for k in m0) == 4 * st0.gpus, m0

    # ----- two jobs: paths (watched) and inline bytes (higher priority)
    a = s.Submit(pb.SubmitRequest(request_id="job-a", key_path="k/params", witness_paths=w))
    b = s.Submit(pb.SubmitRequest(request_id="job-b", key_path="k/params", witnesses=inline, priority=1))
    assert a.job_id and b.job_id and a.job_id != b.job_id and not a.duplicate and not b.duplicate
    seen = [(m.state, m.partitions_done) for m in s.Watch(pb.WatchRequest(job_id=a.job_id), timeout=120)]
    print(f"  Watch({a.job_id}): {[(pb.JobState.Name(st), n) for st, n in seen]}")
    assert seen and seen[-1] == (pb.JOB_STATE_SUCCEEDED, 2), seen
    assert [st for st, _ in seen] == sorted(st for st, _ in seen), "states must only move forward"
    ja = s.Await(pb.AwaitRequest(job_id=a.job_id), timeout=120)
    jb = s.Await(pb.AwaitRequest(job_id=b.job_id), timeout=120)
    for j in (ja, jb):
        assert j.state == pb.JOB_STATE_SUCCEEDED, j
        assert len(j.proofs) == 2 * 192 and j.partitions_done == 2 and j.partitions_total == 2 and j.attempts == 1
        assert j.timings.total_ms > 0
    _, m1 = c.scrape_when(d.metrics_url, lambda m: m['proofpipe_jobs_finished_total{state="succeeded"}'] == 2
                          and m["proofpipe_jobs_running"] == 0)
    moved = {k: m1[k] - m0.get(k, 0) for k in m1}
    print(f"  metrics after two jobs: { {k: v for k, v in moved.items() if v and 'uptime' not in k} }")
    assert moved["proofpipe_partitions_proved_total"] == 4, moved
    assert moved['proofpipe_jobs_finished_total{state="succeeded"}'] == 2, moved
    assert m1['proofpipe_jobs{state="succeeded"}'] == 2 and m1["proofpipe_queue_depth"] == 0, m1
    assert m1["proofpipe_keys_loaded"] == 1 and m1["proofpipe_jobs_running"] == 0, m1
    assert moved['proofpipe_requests_total{rpc="Submit",code="OK"}'] == 2, moved
    assert moved['proofpipe_requests_total{rpc="Await",code="OK"}'] == 2, moved
    print("  ok: the metrics moved with the jobs")
    assert c.verify(args, params, ja.proofs, pub, "a.bin"), "job a's proofs do not verify"
    assert c.verify(args, params, jb.proofs, pub[::-1], "b.bin"), "job b's proofs do not verify"
    # The check can fail: b's proofs against a's statement order must not verify.
    assert not c.verify(args, params, jb.proofs, pub, "b-swapped.bin"), "swapped publics verified"
    print("  ok: both jobs' proofs verify")

    # ----- snarkjs: a .zkey with its .wtns (path and inline), checked by `proofpipe verify`
    vk = os.path.join(args.work, "multiplier_vk.json")
    c.run([args.proofpipe, "zkey", "export-vk", os.path.join(sdir, "multiplier.zkey"), vk])
    for name, req in (("path", pb.SubmitRequest(key_path="s/multiplier.zkey", witness_paths=["s/multiplier.wtns"])),
                      ("inline", pb.SubmitRequest(key_path="s/multiplier.zkey", witnesses=[wtns]))):
        j = s.Prove(req, timeout=120)
        assert j.state == pb.JOB_STATE_SUCCEEDED and j.proof_json and j.public_json and not j.proofs, j
        assert j.partitions_done == 1 == j.partitions_total, j
        proof, public = (os.path.join(args.work, f"snarkjs-{name}-{x}.json") for x in ("proof", "public"))
        open(proof, "w").write(j.proof_json)
        open(public, "w").write(j.public_json)
        assert c.run([args.proofpipe, "verify", vk, public, proof], check=False).returncode == 0, "snarkjs proof"
        # The check can fail: another public signal must not verify.
        open(public, "w").write(j.public_json.replace('"33"', '"34"'))
        assert c.run([args.proofpipe, "verify", vk, public, proof], check=False).returncode != 0, "tampered"
    info = s.PreloadKey(pb.KeyRequest(key_path="s/multiplier.zkey"))
    assert info.loaded and not info.device_resident and info.num_inputs == 2, info
    print("  ok: snarkjs jobs (path and inline .wtns): proof.json verifies, a changed public.json does not")

    # ----- snarkjs bn128 (BN254): the same job on the runtime's BN254 engine (each curve's .wtns is
    # refused by the other curve's key: the cases below)
    vk_bn = os.path.join(args.work, "multiplier_bn128_vk.json")
    c.run([args.proofpipe, "zkey", "export-vk", os.path.join(sdir, "multiplier_bn128.zkey"), vk_bn])
    assert '"bn128"' in open(vk_bn).read()
    wtns_bn = open(os.path.join(sdir, "multiplier_bn128.wtns"), "rb").read()
    for name, req in (("path", pb.SubmitRequest(key_path="s/multiplier_bn128.zkey",
                                                witness_paths=["s/multiplier_bn128.wtns"])),
                      ("inline", pb.SubmitRequest(key_path="s/multiplier_bn128.zkey", witnesses=[wtns_bn]))):
        j = s.Prove(req, timeout=120)
        assert j.state == pb.JOB_STATE_SUCCEEDED and j.proof_json and j.public_json and not j.proofs, j
        proof, public = (os.path.join(args.work, f"bn128-{name}-{x}.json") for x in ("proof", "public"))
        open(proof, "w").write(j.proof_json)
        open(public, "w").write(j.public_json)
        assert json.loads(j.proof_json)["curve"] == "bn128", j.proof_json
        assert c.run([args.proofpipe, "verify", vk_bn, public, proof], check=False).returncode == 0, "bn128 proof"
        open(public, "w").write(j.public_json.replace('"33"', '"34"'))
        assert c.run([args.proofpipe, "verify", vk_bn, public, proof], check=False).returncode != 0, "bn128 tampered"
    info = s.PreloadKey(pb.KeyRequest(key_path="s/multiplier_bn128.zkey"))
    assert info.loaded and info.num_inputs == 2, info
    assert not s.EvictKey(pb.KeyRequest(key_path="s/multiplier_bn128.zkey")).loaded
    print("  ok: snarkjs bn128 jobs: proof.json verifies under the bn128 vk, a changed public.json does not; "
          "a .wtns of the other curve is refused")

    # ----- idempotency
    again = s.Submit(pb.SubmitRequest(request_id="job-a", key_path="k/params", witness_paths=w))
    assert again.job_id == a.job_id and again.duplicate, again
    c.expect_error(lambda: s.Submit(pb.SubmitRequest(request_id="job-a", key_path="k/params", witness_paths=w[:1])),
                   S.ALREADY_EXISTS, "request_id", "job-a")

    # ----- malformed requests: each a status code naming the field; the daemon stays up
    outside = os.path.join(args.work, "outside.params")
    open(outside, "wb").write(open(params, "rb").read())
    os.symlink(outside, os.path.join(data, "evil.params"))
    bad = [
        (pb.SubmitRequest(), S.INVALID_ARGUMENT, ["key_path"]),
        (pb.SubmitRequest(key_path="../outside.params", witness_paths=w), S.INVALID_ARGUMENT,
         ["key_path", "outside --data-root"]),
        (pb.SubmitRequest(key_path=outside, witness_paths=w), S.INVALID_ARGUMENT, ["key_path", "outside --data-root"]),
        (pb.SubmitRequest(key_path="evil.params", witness_paths=w), S.INVALID_ARGUMENT, ["key_path", "outside"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=[w[0], "/etc/passwd"]), S.INVALID_ARGUMENT,
         ["witness_paths[1]", "outside --data-root"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=[w[0], w[1], "../../x.ppw"]), S.INVALID_ARGUMENT,
         ["witness_paths[2]"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=["k/witness-9.ppw"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", "does not exist"]),
        (pb.SubmitRequest(key_path="k/nope.params", witness_paths=w), S.INVALID_ARGUMENT, ["key_path", "does not exist"]),
        (pb.SubmitRequest(key_path="k/params"), S.INVALID_ARGUMENT, ["witness"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=w, witnesses=inline), S.INVALID_ARGUMENT, ["not both"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=["k/public-0.json"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", "not a .ppw"]),
        (pb.SubmitRequest(key_path="k/params", witnesses=[inline[0], b"hello"]), S.INVALID_ARGUMENT,
         ["witnesses[1]"]),
        (pb.SubmitRequest(key_path="k/params", witnesses=[b"\0" * (2 << 20)]), S.RESOURCE_EXHAUSTED, []),
        (pb.SubmitRequest(request_id="x" * 300, key_path="k/params", witness_paths=w), S.INVALID_ARGUMENT,
         ["request_id"]),
    ]
    # Witnesses that do not fit their key are refused at Submit, before anything is journaled.
    bad += [
        (pb.SubmitRequest(key_path="k/params", witnesses=[inline[0][:100]]), S.INVALID_ARGUMENT,
         ["witnesses[0]", "truncated"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=[w[0], "small/witness-0.ppw"]), S.INVALID_ARGUMENT,
         ["witness_paths[1]", "do not match"]),
        (pb.SubmitRequest(key_path="small/params", witnesses=[inline[1]]), S.INVALID_ARGUMENT,
         ["witnesses[0]", "do not match"]),
        (pb.SubmitRequest(key_path="k/params", witness_paths=["s/multiplier.wtns"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", ".wtns"]),
        (pb.SubmitRequest(key_path="s/multiplier.zkey", witness_paths=[w[0]]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", ".ppw"]),
        (pb.SubmitRequest(key_path="s/multiplier.zkey", witness_paths=["s/multiplier.wtns"] * 2), S.INVALID_ARGUMENT,
         ["one .wtns"]),
        (pb.SubmitRequest(key_path="s/multiplier.zkey", witnesses=[wtns[:-8]]), S.INVALID_ARGUMENT, ["witnesses[0]"]),
        (pb.SubmitRequest(key_path="s/multiplier_bn128.zkey", witness_paths=["s/multiplier.wtns"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", "prime"]),
        (pb.SubmitRequest(key_path="s/multiplier.zkey", witness_paths=["s/multiplier_bn128.wtns"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", "prime"]),
        (pb.SubmitRequest(key_path="s/multiplier.zkey", witness_paths=["s/long.wtns"]), S.INVALID_ARGUMENT,
         ["witness_paths[0]", "nVars"]),
        (pb.SubmitRequest(key_path="s/fake.zkey", witness_paths=["s/multiplier.wtns"]), S.INVALID_ARGUMENT,
         ["key_path"]),
        (pb.SubmitRequest(key_path="s/zkey-named.params", witness_paths=["s/multiplier.wtns"]), S.INVALID_ARGUMENT,
         ["key_path", "name it *.zkey"]),
    ]
    for req, code, fragments in bad:
        c.expect_error(lambda: s.Submit(req, timeout=30), code, *fragments)
    for call in (lambda: s.Await(pb.AwaitRequest(job_id="0123456789abcdef"), timeout=30),
                 lambda: s.Cancel(pb.CancelRequest(job_id="nope"), timeout=30),
                 lambda: list(s.Watch(pb.WatchRequest(job_id="nope"), timeout=30))):
        c.expect_error(call, S.NOT_FOUND, "job_id")
    c.expect_error(lambda: s.PreloadKey(pb.KeyRequest(key_path="../outside.params")), S.INVALID_ARGUMENT, "key_path")
    _, m2 = c.scrape(d.metrics_url)
    invalid = sum(1 for _, code, _ in bad if code == S.INVALID_ARGUMENT)
    assert m2['proofpipe_requests_total{rpc="Submit",code="INVALID_ARGUMENT"}'] == invalid, (invalid, m2)
    assert m2['proofpipe_requests_total{rpc="Submit",code="ALREADY_EXISTS"}'] == 1, m2
    for rpc in ("Await", "Cancel", "Watch"):
        assert m2[f'proofpipe_requests_total{{rpc="{rpc}",code="NOT_FOUND"}}'] == 1, m2
    print("  ok: refused calls counted by RPC and status code")

    # Accepted but unprovable: a witness of the key's shape that does not satisfy the circuit
    # (c[0] changed). The job fails with an error naming the input; nothing else is affected.
    rows = int.from_bytes(inline[1][8:16], "little")
    at = 32 + 2 * rows * 32  # c[0]'s low byte (header 32 bytes, then a, b, c)
    broken = inline[1][:at] + bytes([inline[1][at] ^ 1]) + inline[1][at + 1:]
    j = s.Await(pb.AwaitRequest(job_id=s.Submit(pb.SubmitRequest(key_path="k/params", witnesses=[broken])).job_id),
                timeout=60)
    assert j.state == pb.JOB_STATE_FAILED and "witnesses" in j.error and "constraint 0" in j.error, j
    print(f"  ok: FAILED: {j.error}")

    # ----- cancel: a long job (40 partitions) cancelled right away
    long_job = s.Submit(pb.SubmitRequest(key_path="k/params", witness_paths=w * 20, priority=-1))
    s.Cancel(pb.CancelRequest(job_id=long_job.job_id))
    j = s.Await(pb.AwaitRequest(job_id=long_job.job_id), timeout=120)
    assert j.state == pb.JOB_STATE_CANCELLED and not j.proofs, j
    print(f"  ok: cancelled after {j.partitions_done}/{j.partitions_total} partitions")

    # Await with a timeout returns the job unfinished.
    slow = s.Submit(pb.SubmitRequest(key_path="k/params", witness_paths=w * 10))
    j = s.Await(pb.AwaitRequest(job_id=slow.job_id, timeout_ms=1), timeout=30)
    assert j.state in (pb.JOB_STATE_QUEUED, pb.JOB_STATE_RUNNING), j
    assert s.Await(pb.AwaitRequest(job_id=slow.job_id), timeout=120).state == pb.JOB_STATE_SUCCEEDED

    # ----- keys: preload, status, evict; a job after the eviction loads the key again
    info = s.PreloadKey(pb.KeyRequest(key_path="k/params"))
    assert info.loaded and info.num_inputs == 9 and info.key_path == "k/params", info
    # With a sample witness the key also goes to the GPUs (none here: the sample is still checked).
    info = s.PreloadKey(pb.KeyRequest(key_path="k/params", witness_path=w[0]))
    assert info.loaded, info
    c.expect_error(lambda: s.PreloadKey(pb.KeyRequest(key_path="k/params", witness_path="../x.ppw")),
                   S.INVALID_ARGUMENT, "witness_path")
    c.expect_error(lambda: s.PreloadKey(pb.KeyRequest(key_path="k/params", witness_path="k/params")),
                   S.INVALID_ARGUMENT, "witness_path")
    st = s.GetStatus(pb.GetStatusRequest())
    assert sorted(key.key_path for key in st.resident_keys) == ["k/params", "s/multiplier.zkey"], st
    assert st.jobs_succeeded >= 3 and st.jobs_failed >= 1 and st.jobs_cancelled >= 1, st
    assert not s.EvictKey(pb.KeyRequest(key_path="k/params")).loaded
    assert [key.key_path for key in s.GetStatus(pb.GetStatusRequest()).resident_keys] == ["s/multiplier.zkey"]
    j = s.Prove(pb.SubmitRequest(key_path="k/params", witness_paths=w), timeout=120)
    assert j.state == pb.JOB_STATE_SUCCEEDED and c.verify(args, params, j.proofs, pub, "p.bin"), j
    assert j.timings.key_load_ms > 0, j.timings
    print("  ok: Prove after EvictKey reloaded the key")

    # ----- the CLI client against the same daemon
    server = f"127.0.0.1:{d.port}"
    out = os.path.join(args.work, "cli.bin")
    c.run([args.proofpipe, "submit", "--server", server, "--key", "k/params", "--witness", w[0], "--witness", w[1],
           "--request-id", "cli-1", "--wait", "--out", out])
    assert c.verify(args, params, open(out, "rb").read(), pub, "cli-copy.bin")
    job_id = c.run([args.proofpipe, "submit", "--server", server, "--key", "k/params", "--witness",
                    os.path.join(k, "witness-0.ppw"), "--inline"]).stdout.strip().splitlines()[-1]
    c.run([args.proofpipe, "await", "--server", server, "--job", job_id, "--out", out])
    assert c.verify(args, params, open(out, "rb").read(), pub[:1], "cli-await.bin")
    assert '"queue_depth"' in c.run([args.proofpipe, "status", "--server", server]).stdout
    r = c.run([args.proofpipe, "submit", "--server", server, "--key", "../x", "--witness", w[0]], check=False)
    assert r.returncode != 0 and "INVALID_ARGUMENT" in r.stdout, r.stdout
    # snarkjs through the CLI: proof.json and public.json written, and they verify.
    sproof, spublic = os.path.join(args.work, "cli-proof.json"), os.path.join(args.work, "cli-public.json")
    c.run([args.proofpipe, "submit", "--server", server, "--key", "s/multiplier.zkey", "--witness", "s/multiplier.wtns",
           "--wait", "--out", sproof, "--public", spublic])
    assert c.run([args.proofpipe, "verify", vk, spublic, sproof], check=False).returncode == 0
    # On a terminal, --wait draws a progress bar redrawn in place (a pty stands in for one).
    master, slave = os.openpty()
    p = subprocess.Popen([args.proofpipe, "submit", "--server", server, "--key", "k/params", "--witness", w[0],
                          "--witness", w[1], "--wait"], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    assert p.wait() == 0, tty
    text = tty.decode(errors="replace")
    assert "\r" in text and "[" + "#" * 30 + "] 2/2 partitions SUCCEEDED" in text, repr(text)
    print(f"  ok: progress bar on a terminal: {text.strip().splitlines()[-1].split(chr(13))[-1].strip()!r}")
    print("  ok: the CLI's submit, await and status")

    assert d.alive(), "the daemon died"
    rc = d.stop()
    assert rc == 0, f"serve exited {rc} on SIGTERM"
    print("  ok: SIGTERM: clean exit")

    # ----- a restarted daemon still has the results
    d = c.Daemon(args, data, state)
    j = d.stub.Await(pb.AwaitRequest(job_id=a.job_id), timeout=30)
    assert j.state == pb.JOB_STATE_SUCCEEDED and j.proofs == ja.proofs, j
    assert d.stub.Submit(pb.SubmitRequest(request_id="job-a", key_path="k/params", witness_paths=w)).job_id == a.job_id
    assert d.stop() == 0

    # ----- a partition larger than the whole --host-budget could never run: refused at Submit
    d = c.Daemon(args, data, os.path.join(args.work, "state-budget"), extra=["--host-budget", "64KiB"])
    assert d.stub.GetStatus(pb.GetStatusRequest()).host_budget_bytes == 64 << 10
    c.expect_error(lambda: d.stub.Submit(pb.SubmitRequest(key_path="k/params", witness_paths=w)),
                   S.RESOURCE_EXHAUSTED, "witness_paths[0]", "--host-budget")
    assert d.stub.Prove(pb.SubmitRequest(key_path="small/params", witness_paths=["small/witness-0.ppw"]),
                        timeout=60).state == pb.JOB_STATE_SUCCEEDED  # 2^8 fits
    assert d.stop() == 0
    print("service_e2e: ok")


if __name__ == "__main__":
    main()
