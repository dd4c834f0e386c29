# SPDX-License-Identifier: Apache-2.0 OR MIT
"""Authentication of `proofpipe serve`: a bearer token (--token-file) and TLS (--tls-cert,
--tls-key, with a throw-away self-signed certificate made by the openssl CLI at test time).
Without the token, or with a wrong one, every RPC answers UNAUTHENTICATED without echoing what
was sent, and nothing is journaled; with it jobs run. A TLS daemon serves TLS clients only. Both
allow a non-loopback --listen; bad certificate options are refused at start."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svc_common as c  # noqa: E402

TOKEN = "pp-token-5f0c2e9a7b"


def main():
    args = c.parse_args()
    pb, pb_grpc = c.stubs(args)
    import grpc
    S = grpc.StatusCode
    data, k, params, pub = c.example_key(args, lg=8)
    w = ["k/witness-0.ppw", "k/witness-1.ppw"]
    token_file = os.path.join(args.work, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n# the rest of the file is ignored\n")
    good = [("authorization", f"Bearer {TOKEN}")]

    # ----- bearer token, listening on every address (allowed: a token is required)
    d = c.Daemon(args, data, os.path.join(args.work, "state-token"),
                 extra=["--token-file", token_file, "--metrics", "127.0.0.1:0"], listen="0.0.0.0:0")
    s = d.stub
    calls = {
        "Submit": lambda md: s.Submit(pb.SubmitRequest(key_path="k/params", witness_paths=w), metadata=md, timeout=30),
        "Prove": lambda md: s.Prove(pb.SubmitRequest(key_path="k/params", witness_paths=w), metadata=md, timeout=30),
        "Await": lambda md: s.Await(pb.AwaitRequest(job_id="x"), metadata=md, timeout=30),
        "Cancel": lambda md: s.Cancel(pb.CancelRequest(job_id="x"), metadata=md, timeout=30),
        "Watch": lambda md: list(s.Watch(pb.WatchRequest(job_id="x"), metadata=md, timeout=30)),
        "GetStatus": lambda md: s.GetStatus(pb.GetStatusRequest(), metadata=md, timeout=30),
        "PreloadKey": lambda md: s.PreloadKey(pb.KeyRequest(key_path="k/params"), metadata=md, timeout=30),
        "EvictKey": lambda md: s.EvictKey(pb.KeyRequest(key_path="k/params"), metadata=md, timeout=30),
    }
    wrong = "Bearer not-the-token-81d3"
    for name, call in calls.items():
        for md, fragment in ((None, "authorization"), ([("authorization", wrong)], "not the daemon's"),
                             ([("authorization", f"Basic {TOKEN}")], "Bearer <token>"),
                             ([("authorization", f"Bearer {TOKEN}x")], "not the daemon's"),
                             ([("authorization", "Bearer " + TOKEN[:-1])], "not the daemon's")):
            e = c.expect_error(lambda: call(md), S.UNAUTHENTICATED, fragment)
            assert "not-the-token" not in e.details() and TOKEN[:8] not in e.details(), e.details()
    st = s.GetStatus(pb.GetStatusRequest(), metadata=good)
    assert st.queue_depth == 0 and st.jobs_succeeded == 0 and not st.resident_keys, st
    _, m = c.scrape(d.metrics_url)  # the metrics endpoint (loopback) needs no token
    for name in calls:
        assert m[f'proofpipe_requests_total{{rpc="{name}",code="UNAUTHENTICATED"}}'] == 5, m
    print("  ok: every RPC refused without the token or with a wrong one; nothing was journaled or loaded")
    j = s.Prove(pb.SubmitRequest(key_path="k/params", witness_paths=w), metadata=good, timeout=120)
    assert j.state == pb.JOB_STATE_SUCCEEDED and c.verify(args, params, j.proofs, pub, "token.bin"), j
    print("  ok: with the token a job runs and its proofs verify")
    # The CLI clients: --token-file
    server = f"127.0.0.1:{d.port}"
    r = c.run([args.proofpipe, "status", "--server", server], check=False)
    assert r.returncode != 0 and "UNAUTHENTICATED" in r.stdout and TOKEN not in r.stdout, r.stdout
    assert '"jobs_succeeded": "1"' in c.run([args.proofpipe, "status", "--server", server, "--token-file",
                                             token_file]).stdout
    out = os.path.join(args.work, "cli-token.bin")
    c.run([args.proofpipe, "submit", "--server", server, "--token-file", token_file, "--key", "k/params",
           "--witness", w[0], "--witness", w[1], "--wait", "--out", out])
    assert c.verify(args, params, open(out, "rb").read(), pub, "cli-token-copy.bin")
    print("  ok: the CLI with and without --token-file")
    assert d.stop() == 0

    # ----- TLS: a throw-away self-signed certificate for localhost and 127.0.0.1
    openssl = shutil.which("openssl")
    assert openssl, "the openssl CLI is missing (Debian: openssl; scripts/install-deps installs it)"
    cert, key = os.path.join(args.work, "cert.pem"), os.path.join(args.work, "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = c.Daemon(args, data, os.path.join(args.work, "state-tls"), extra=["--tls-cert", cert, "--tls-key", key],
                 listen="0.0.0.0:0", tls_ca=cert)
    j = d.stub.Prove(pb.SubmitRequest(key_path="k/params", witness_paths=w), timeout=120)
    assert j.state == pb.JOB_STATE_SUCCEEDED and c.verify(args, params, j.proofs, pub, "tls.bin"), j
    print("  ok: over TLS a job runs and its proofs verify")
    plain = grpc.insecure_channel(f"127.0.0.1:{d.port}")
    c.expect_error(lambda: pb_grpc.ProverStub(plain).GetStatus(
        pb.GetStatusRequest(), timeout=5), S.UNAVAILABLE)
    plain.close()
    server = f"127.0.0.1:{d.port}"
    assert '"jobs_succeeded": "1"' in c.run([args.proofpipe, "status", "--server", server, "--tls-ca", cert]).stdout
    r = c.run([args.proofpipe, "status", "--server", server], check=False)
    assert r.returncode != 0 and "UNAVAILABLE" in r.stdout, r.stdout
    print("  ok: the CLI with --tls-ca; a plaintext client is refused")
    assert d.stop() == 0

    # ----- refused at start, before any state is written
    empty = os.path.join(args.work, "empty-token")
    open(empty, "w").write("\n\n")
    refused = os.path.join(args.work, "refused")
    for extra, message in (([], "only loopback"),
                           (["--token-file", empty], "the first line is empty"),
                           (["--tls-cert", cert], "--tls-cert and --tls-key: give both"),
                           (["--tls-cert", key, "--tls-key", key], "not a PEM certificate"),
                           (["--tls-cert", cert, "--tls-key", cert], "not a PEM private key")):
        r = c.run([args.proofpipe, "serve", "--listen", "0.0.0.0:0", "--data-root", data, "--state", refused, "--cpu"]
                  + extra, check=False)
        assert r.returncode != 0 and message in r.stdout, (extra, r.stdout)
        assert not os.path.exists(refused), extra
        print(f"  ok: refused: {r.stdout.strip().splitlines()[-1]}")
    print("service_auth: ok")


if __name__ == "__main__":
    main()
