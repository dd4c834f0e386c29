// SPDX-License-Identifier: Apache-2.0 OR MIT
// The patch crate contrib/supraseal-c2 (SupraSeal C2's Rust API) from a Rust program, over
// libproofpipe_supraseal.so: what bellperson does with it, without cargo or crates (built by
// tests/supraseal/rust.cmake with plain rustc, Rust >= 1.63).
//
// Usage: rust_caller PARAMS WITNESS0 WITNESS1 SEED RAW_OUT
// Proves the two .ppw witnesses with abi_caller's randomisers for SEED through
// generate_groth16_proofs and through the older 19-argument generate_groth16_proof (both must
// agree), from two threads at once, and writes the 384-byte proofs to RAW_OUT (the test compares
// them with abi_caller's --raw-out). Also: a missing file is Err(ENOENT), and a wrong size or an
// empty SRS is a panic whose message names the field.
use std::path::PathBuf;
use std::process::exit;

use supraseal_c2::{generate_groth16_proof, generate_groth16_proofs, Assignment, SRS};

#[path = "rust_common.rs"]
mod rust_common;
use rust_common::*;

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
    let seed: u64 = args[4].parse().expect("SEED is a number");
    let (r_s, s_s) = randomisers(seed, 2);
    let provers: Vec<Assignment<Scalar>> = witnesses.iter().map(assignment).collect();

    let mut proofs: Vec<Proof> = vec![[0u8; 384]; 2];
    let shared = srs.clone();
    generate_groth16_proofs(&provers, &r_s, &s_s, &mut proofs, &shared);
    std::fs::write(&args[5], proofs.concat()).expect("writing RAW_OUT");

    // bellperson 0.26's entry point: one set of densities for every circuit (these witnesses share
    // theirs), per-circuit vector pointers.
    let w = &witnesses;
    let ptrs = |f: fn(&Witness) -> *const Scalar| vec![f(&w[0]), f(&w[1])];
    let mut old: Vec<Proof> = vec![[0xa5u8; 384]; 2];
    generate_groth16_proof(
        &ptrs(|w| w.a.as_ptr()),
        &ptrs(|w| w.b.as_ptr()),
        &ptrs(|w| w.c.as_ptr()),
        w[0].rows,
        &ptrs(|w| w.input.as_ptr()),
        &ptrs(|w| w.aux.as_ptr()),
        w[0].input.len(),
        w[0].aux.len(),
        &w[0].a_aux,
        &w[0].b_inp,
        &w[0].b_aux,
        provers[0].a_aux_popcount,
        provers[0].b_inp_popcount,
        provers[0].b_aux_popcount,
        2,
        &r_s,
        &s_s,
        &mut old,
        &srs,
    );
    check(old == proofs, "generate_groth16_proof (19 arguments) equals generate_groth16_proofs");

    // Two threads at once on one key.
    let results: Vec<Vec<Proof>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    // Assignment holds raw pointers (not Sync, as upstream): each thread makes its own.
                    let mine: Vec<Assignment<Scalar>> = witnesses.iter().map(assignment).collect();
                    let mut out: Vec<Proof> = vec![[0x5au8; 384]; 2];
                    generate_groth16_proofs(&mine, &r_s, &s_s, &mut out, &srs);
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a proving thread panicked")).collect()
    });
    check(results.iter().all(|p| *p == proofs), "two threads at once give the same proofs");

    // Errors become panics carrying the library's message.
    let mut bad: Vec<Assignment<Scalar>> = witnesses.iter().map(assignment).collect();
    bad[1].aux_assignment_size += 1;
    let mut scratch: Vec<Proof> = vec![[0u8; 384]; 2];
    let m = panic_message(|| generate_groth16_proofs(&bad, &r_s, &s_s, &mut scratch, &srs));
    check(m.as_deref().map_or(false, |m| m.contains("provers[1].aux_assignment_size")),
          &format!("a wrong aux size panics naming it: {m:?}"));
    let none = SRS::default();
    let m = panic_message(|| generate_groth16_proofs(&provers, &r_s, &s_s, &mut scratch, &none));
    check(m.as_deref().map_or(false, |m| m.contains("srs")), &format!("an empty SRS panics: {m:?}"));

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
