// SPDX-License-Identifier: Apache-2.0 OR MIT
// What the Rust test callers of both drop-ins share (tests/supraseal/rust_caller.rs and
// tests/cuzk/rust_caller.rs include it with #[path]): .ppw witnesses read into bellperson's form
// (Montgomery-form scalars), abi_caller's randomisers for a seed, and a panic's message.
#![allow(dead_code)] // each caller uses what it needs

use std::panic::{catch_unwind, AssertUnwindSafe};

use supraseal_c2::Assignment;

pub type Scalar = [u64; 4];
pub type Proof = [u8; 384];

pub const R: Scalar = [0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];

pub fn geq(a: &Scalar, b: &Scalar) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

pub fn sub(a: &mut Scalar, b: &Scalar) {
    let mut borrow = 0u64;
    for i in 0..4 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow);
        a[i] = d;
        borrow = (b1 | b2) as u64;
    }
}

// x * 2^256 mod r by 256 modular doublings (x < r < 2^255, so 2x fits in 256 bits).
pub fn to_montgomery(mut x: Scalar) -> Scalar {
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

pub struct Witness {
    pub rows: usize,
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    pub input: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    pub a_aux: Vec<usize>,
    pub b_inp: Vec<usize>,
    pub b_aux: Vec<usize>,
}

pub fn read_witness(path: &str) -> Witness {
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

pub fn popcount(words: &[usize], bits: usize) -> usize {
    (0..bits).filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1).count()
}

pub fn assignment(w: &Witness) -> Assignment<Scalar> {
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
pub fn randomisers(seed: u64, n: usize) -> (Vec<Scalar>, Vec<Scalar>) {
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
pub fn panic_message(f: impl FnOnce()) -> Option<String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // an expected panic: no report on stderr
    let result = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    let e = result.err()?;
    Some(e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default())
}

