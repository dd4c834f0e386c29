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
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::exit;

use supraseal_c2::{generate_groth16_proof, generate_groth16_proofs, Assignment, SRS};

type Scalar = [u64; 4];
type Proof = [u8; 384];

const R: Scalar = [0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];

fn geq(a: &Scalar, b: &Scalar) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

fn sub(a: &mut Scalar, b: &Scalar) {
    let mut borrow = 0u64;
    for i in 0..4 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow);
        a[i] = d;
        borrow = (b1 | b2) as u64;
    }
}

// x * 2^256 mod r by 256 modular doublings (x < r < 2^255, so 2x fits in 256 bits).
fn to_montgomery(mut x: Scalar) -> Scalar {
    for _ in 0..256 {
        for i in (1..4).rev() {
            x[i] = (x[i] << 1) | (x[i - 1] >> 63);
        }
        x[0] <<= 1;
        if geq(&x, &R) {
            sub(&mut x, &R);
        }
    }
    x
}

struct Witness {
    rows: usize,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    a_aux: Vec<usize>,
    b_inp: Vec<usize>,
    b_aux: Vec<usize>,
}

fn read_witness(path: &str) -> Witness {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(bytes.len() >= 32 && &bytes[..8] == b"PPWITNS1", "{path} is not a .ppw file");
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let (rows, inputs, aux) = (u64_at(8) as usize, u64_at(16) as usize, u64_at(24) as usize);
    let mut at = 32;
    let mut scalars = |n: usize| -> Vec<Scalar> {
        let v = (0..n)
            .map(|i| {
                let base = at + 32 * i;
                let limbs: Scalar = [0, 1, 2, 3].map(|j| u64_at(base + 8 * j));
                assert!(!geq(&limbs, &R), "{path}: scalar not below r");
                to_montgomery(limbs)
            })
            .collect();
        at += 32 * n;
        v
    };
    let (a, b, c) = (scalars(rows), scalars(rows), scalars(rows));
    let (input, auxv) = (scalars(inputs), scalars(aux));
    let mut words = |bits: usize| -> Vec<usize> {
        let n = (bits + 63) / 64;
        let v = (0..n).map(|i| u64_at(at + 8 * i) as usize).collect();
        at += 8 * n;
        v
    };
    let (a_aux, b_inp, b_aux) = (words(aux), words(inputs), words(aux));
    Witness { rows, a, b, c, input, aux: auxv, a_aux, b_inp, b_aux }
}

fn popcount(words: &[usize], bits: usize) -> usize {
    (0..bits).filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1).count()
}

fn assignment(w: &Witness) -> Assignment<Scalar> {
    Assignment {
        a_aux_density: w.a_aux.as_ptr(),
        a_aux_bit_len: w.aux.len(),
        a_aux_popcount: popcount(&w.a_aux, w.aux.len()),
        b_inp_density: w.b_inp.as_ptr(),
        b_inp_bit_len: w.input.len(),
        b_inp_popcount: popcount(&w.b_inp, w.input.len()),
        b_aux_density: w.b_aux.as_ptr(),
        b_aux_bit_len: w.aux.len(),
        b_aux_popcount: popcount(&w.b_aux, w.aux.len()),
        a: w.a.as_ptr(),
        b: w.b.as_ptr(),
        c: w.c.as_ptr(),
        abc_size: w.rows,
        inp_assignment_data: w.input.as_ptr(),
        inp_assignment_size: w.input.len(),
        aux_assignment_data: w.aux.as_ptr(),
        aux_assignment_size: w.aux.len(),
    }
}

// abi_caller's randomisers: splitmix64 from the seed, r then s per circuit, below r, Montgomery.
fn randomisers(seed: u64, n: usize) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut scalar = || loop {
        let mut x: Scalar = [next(), next(), next(), next()];
        x[3] &= 0x7fffffffffffffff;
        if !geq(&x, &R) {
            return to_montgomery(x);
        }
    };
    let (mut r, mut s) = (Vec::new(), Vec::new());
    for _ in 0..n {
        r.push(scalar());
        s.push(scalar());
    }
    (r, s)
}

// The panic message of f, or None when it does not panic.
fn panic_message(f: impl FnOnce()) -> Option<String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // an expected panic: no report on stderr
    let result = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    let e = result.err()?;
    Some(e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default())
}

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
