// SPDX-License-Identifier: Apache-2.0 OR MIT
// The patch crate contrib/supraseal-c2-cuzk (the Rust API of Curio's SupraSeal C2 fork) from a
// Rust program, over libproofpipe_cuzk.so: what cuzk's bellperson does with it, without cargo or
// crates (built by tests/cuzk/rust.cmake with plain rustc, Rust >= 1.63).
//
// Usage: rust_caller PARAMS WITNESS0 WITNESS1 SEED RAW_OUT
// Proves the two .ppw witnesses with abi_caller's (and cuzk_caller's) randomisers for SEED
// (a) through generate_groth16_proofs, (b) through the 21-argument generate_groth16_proof with a
// gpu_mtx from alloc_gpu_mutex and gpu_index -1, (c) through start_groth16_proof from two threads
// at once, finished by finish_groth16_proof on the main thread; all must agree byte for byte.
// (d) A started proof is dropped with drop_pending_proof. Writes (a)'s 384-byte proofs to RAW_OUT
// (the test compares them with cuzk_caller's --raw-out). Also: a missing file is Err(ENOENT), a
// wrong size or an empty SRS is a panic whose message names the field, a finished or dropped
// handle is unknown (a panic, not undefined behaviour), and a wrong `proofs` length in finish is
// a panic that still consumes the handle.
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::exit;
use std::sync::Barrier;

use supraseal_c2::{
    alloc_gpu_mutex, drop_pending_proof, finish_groth16_proof, free_gpu_mutex, generate_groth16_proof,
    generate_groth16_proofs, start_groth16_proof, Assignment, SRS,
};

#[path = "../supraseal/rust_common.rs"]
mod rust_common;
use rust_common::*;

fn pointers(w: &[Witness]) -> [Vec<*const Scalar>; 5] {
    let of = |f: fn(&Witness) -> *const Scalar| w.iter().map(f).collect::<Vec<_>>();
    [of(|w| w.a.as_ptr()), of(|w| w.b.as_ptr()), of(|w| w.c.as_ptr()), of(|w| w.input.as_ptr()), of(|w| w.aux.as_ptr())]
}

// The 21-argument generate_groth16_proof over every witness of `w`.
fn prove_shared(w: &[Witness], r_s: &[Scalar], s_s: &[Scalar], proofs: &mut [Proof], srs: &SRS, gpu_mtx: *mut c_void) {
    let [a, b, c, input, aux] = pointers(w);
    let first = assignment(&w[0]);
    generate_groth16_proof(
        &a,
        &b,
        &c,
        w[0].rows,
        &input,
        &aux,
        w[0].input.len(),
        w[0].aux.len(),
        &w[0].a_aux,
        &w[0].b_inp,
        &w[0].b_aux,
        first.a_aux_popcount,
        first.b_inp_popcount,
        first.b_aux_popcount,
        w.len(),
        r_s,
        s_s,
        proofs,
        srs,
        gpu_mtx,
        -1,
    );
}

// start_groth16_proof over every witness of `w`, with `abc_size` rows. The pointer vectors and the
// Assignments built from them are gone when this returns: the library keeps its own copies.
fn start(w: &[Witness], abc_size: usize, r_s: &[Scalar], s_s: &[Scalar], srs: &SRS, gpu_mtx: *mut c_void) -> *mut c_void {
    let [a, b, c, input, aux] = pointers(w);
    let first = assignment(&w[0]);
    start_groth16_proof(
        &a,
        &b,
        &c,
        abc_size,
        &input,
        &aux,
        w[0].input.len(),
        w[0].aux.len(),
        &w[0].a_aux,
        &w[0].b_inp,
        &w[0].b_aux,
        first.a_aux_popcount,
        first.b_inp_popcount,
        first.b_aux_popcount,
        w.len(),
        r_s,
        s_s,
        srs,
        gpu_mtx,
        -1,
    )
}

fn contains(m: &Option<String>, what: &str) -> bool {
    matches!(m.as_deref(), Some(m) if m.contains(what))
}

const UNKNOWN: &str = "is not a pending proof";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: rust_caller PARAMS WITNESS0 WITNESS1 SEED RAW_OUT");
        exit(2);
    }
    let mut failures = 0;
    let mut check = |ok: bool, what: &str| {
        println!("rust_caller {} {what}", if ok { "ok:" } else { "FAILED:" });
        if !ok {
            failures += 1;
        }
    };

    let missing = SRS::try_new(PathBuf::from("/nonexistent/rust_caller.params"), false);
    match &missing {
        Err(e) => check(e.code == 2 && e.to_string().contains("/nonexistent/rust_caller.params"),
                        &format!("a missing file is Err(ENOENT): {e}")),
        Ok(_) => check(false, "a missing file is an error"),
    }

    let srs = SRS::try_new(PathBuf::from(&args[1]), true).unwrap_or_else(|e| panic!("SRS::try_new: {e}"));
    let witnesses = [read_witness(&args[2]), read_witness(&args[3])];
    let w = &witnesses;
    assert!(w[0].rows == w[1].rows && w[0].a_aux == w[1].a_aux && w[0].b_inp == w[1].b_inp && w[0].b_aux == w[1].b_aux,
            "the witnesses must share their sizes and densities (one circuit, two assignments)");
    let seed: u64 = args[4].parse().expect("SEED is a number");
    let (r_s, s_s) = randomisers(seed, 2);
    let provers: Vec<Assignment<Scalar>> = witnesses.iter().map(assignment).collect();

    // (a) The Assignment form, no gpu_mtx, gpu_index -1.
    let mut proofs: Vec<Proof> = vec![[0u8; 384]; 2];
    let shared = srs.clone();
    generate_groth16_proofs(&provers, &r_s, &s_s, &mut proofs, &shared);

    // (b) cuzk's bellperson entry point with a gpu_mtx.
    let mtx = alloc_gpu_mutex();
    let mut old: Vec<Proof> = vec![[0xa5u8; 384]; 2];
    prove_shared(w, &r_s, &s_s, &mut old, &srs, mtx);
    check(old == proofs, "generate_groth16_proof (21 arguments, gpu_mtx, gpu_index -1) equals generate_groth16_proofs");

    // (c) Two starts at once from two threads (one with the gpu_mtx, one without), both pending
    // together, finished on this thread in the other order.
    let barrier = Barrier::new(2);
    let mtx_bits = mtx as usize; // a raw pointer is not Send
    let handles: Vec<usize> = std::thread::scope(|scope| {
        let joins: Vec<_> = (0..2)
            .map(|t| {
                let (barrier, r_s, s_s, srs) = (&barrier, &r_s, &s_s, &srs);
                scope.spawn(move || {
                    barrier.wait();
                    let gpu_mtx = if t == 0 { mtx_bits as *mut c_void } else { std::ptr::null_mut() };
                    start(w, w[0].rows, r_s, s_s, srs, gpu_mtx) as usize
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().expect("a starting thread panicked")).collect()
    });
    check(handles[0] != handles[1] && handles.iter().all(|&h| h != 0), "two starts give two handles");
    for &h in handles.iter().rev() {
        let mut out: Vec<Proof> = vec![[0x5au8; 384]; 2];
        finish_groth16_proof(h as *mut c_void, &mut out);
        check(out == proofs, "a proof started on another thread and finished here equals generate_groth16_proofs");
    }
    let mut scratch: Vec<Proof> = vec![[0u8; 384]; 2];
    let m = panic_message(|| finish_groth16_proof(handles[0] as *mut c_void, &mut scratch));
    check(contains(&m, UNKNOWN), &format!("finishing a finished handle panics (unknown handle): {m:?}"));

    // (d) Start one and drop it; dropping again is a no-op, finishing it an unknown handle.
    let dropped = start(w, w[0].rows, &r_s, &s_s, &srs, mtx);
    unsafe { drop_pending_proof(dropped) };
    unsafe { drop_pending_proof(dropped) };
    let m = panic_message(|| finish_groth16_proof(dropped, &mut scratch));
    check(contains(&m, UNKNOWN), &format!("finishing a dropped handle panics (unknown handle): {m:?}"));

    // finish with room for one proof of two: a panic naming `proofs`, and the handle is consumed.
    let short = start(w, w[0].rows, &r_s, &s_s, &srs, std::ptr::null_mut());
    let m = panic_message(|| finish_groth16_proof(short, &mut scratch[..1]));
    check(contains(&m, "proofs holds 1 entries"), &format!("a short proofs slice panics naming it: {m:?}"));
    let m = panic_message(|| finish_groth16_proof(short, &mut scratch));
    check(contains(&m, UNKNOWN), &format!("... and consumed the handle: {m:?}"));

    // Errors become panics carrying the library's message, in both forms.
    let mut bad: Vec<Assignment<Scalar>> = witnesses.iter().map(assignment).collect();
    bad[1].aux_assignment_size += 1;
    let m = panic_message(|| generate_groth16_proofs(&bad, &r_s, &s_s, &mut scratch, &srs));
    check(contains(&m, "provers[1].aux_assignment_size"), &format!("a wrong aux size panics naming it: {m:?}"));
    let m = panic_message(|| {
        start(w, 0, &r_s, &s_s, &srs, mtx);
    });
    check(contains(&m, "provers[0].abc_size"), &format!("start with abc_size 0 panics naming it: {m:?}"));
    let none = SRS::default();
    let m = panic_message(|| generate_groth16_proofs(&provers, &r_s, &s_s, &mut scratch, &none));
    check(contains(&m, "srs"), &format!("an empty SRS panics: {m:?}"));
    let m = panic_message(|| {
        start(w, w[0].rows, &r_s, &s_s, &none, std::ptr::null_mut());
    });
    check(contains(&m, "srs"), &format!("start with an empty SRS panics: {m:?}"));

    std::fs::write(&args[5], proofs.concat()).expect("writing RAW_OUT");
    unsafe { free_gpu_mutex(mtx) };
    srs.evict();
    drop(shared);
    drop(srs);
    drop(none);
    if failures > 0 {
        println!("rust_caller FAILED ({failures})");
        exit(1);
    }
    println!("rust_caller ok");
}
