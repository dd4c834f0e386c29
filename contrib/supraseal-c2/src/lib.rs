// SPDX-License-Identifier: Apache-2.0 OR MIT
//! SupraSeal C2's public Rust API — `SRS`, `Assignment`, `generate_groth16_proof` and
//! `generate_groth16_proofs` — over `libproofpipe_supraseal.so`, proofpipe's implementation of
//! the same C ABI. The signatures are those of the upstream crate `supraseal-c2` 0.1.0, so that a
//! `[patch.crates-io]` entry swaps the prover under bellperson without touching its code.
//!
//! What differs is behind the ABI (docs/SUPRASEAL.md): calls run in parallel instead of behind
//! one process-wide lock, a machine without a GPU proves on the CPU instead of failing, and
//! inconsistent sizes come back as an error (this crate then panics with its message, as upstream
//! panics on any error) instead of tripping an assertion inside the library.

use std::ffi::{c_void, CString};
use std::os::raw::c_char;
use std::mem::size_of;
use std::path::PathBuf;

/// The error the C functions return: `code` (0 = success, else an errno value) and a message
/// the library allocated, freed when the value is dropped. Upstream names it `cuda::Error`.
mod cuda {
    pub type Error = sppark::Error;
}

extern "C" {
    fn create_SRS(ret: &mut SRS, srs_path: *const c_char, cache: bool) -> cuda::Error;
    fn evict_SRS(by_ref: &SRS);
    fn drop_SRS(by_ref: &SRS);
    fn clone_SRS(by_ref: &SRS) -> SRS;
    fn generate_groth16_proofs_c(
        provers: *const c_void,
        num_circuits: usize,
        r_s: *const c_void,
        s_s: *const c_void,
        proofs: *mut c_void,
        srs: &SRS,
    ) -> cuda::Error;
}

/// A proving key (a bellperson `.params` file) loaded by the library. Clones share the key; it
/// is freed when the last one is dropped.
#[repr(C)]
pub struct SRS {
    ptr: *const c_void,
}

impl Default for SRS {
    /// No key: valid to drop, an error to prove with.
    fn default() -> Self {
        SRS { ptr: std::ptr::null() }
    }
}

impl SRS {
    /// Loads `srs_path`. With `cache`, keys are shared per path through a small process-wide
    /// cache, so that loading the same file again is free.
    ///
    /// Panics, like upstream, when the path is not UTF-8 or holds a NUL byte.
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, cuda::Error> {
        let path = srs_path.to_str().expect("SRS path must be valid UTF-8");
        let path = CString::new(path).expect("SRS path must not contain a NUL byte");
        let mut srs = SRS::default();
        let status = unsafe { create_SRS(&mut srs, path.as_ptr(), cache) };
        if status.code == 0 {
            Ok(srs)
        } else {
            Err(status)
        }
    }

    /// Drops the cache's hold on this key and its GPU copies; this handle stays usable.
    pub fn evict(&self) {
        unsafe { evict_SRS(self) }
    }
}

impl Drop for SRS {
    fn drop(&mut self) {
        unsafe { drop_SRS(self) };
        self.ptr = std::ptr::null();
    }
}

impl Clone for SRS {
    fn clone(&self) -> Self {
        unsafe { clone_SRS(self) }
    }
}

// The library's key handles are reference-counted atomically and immutable once loaded.
unsafe impl Send for SRS {}
unsafe impl Sync for SRS {}

/// One circuit in bellperson's layout; the C side reads it as a struct of 17 eight-byte fields.
/// Densities are bit vectors of 64-bit words (bit i in word i / 64, least significant first);
/// scalars are in Montgomery form (what `blstrs::Scalar` holds).
#[repr(C)]
pub struct Assignment<Scalar> {
    pub a_aux_density: *const usize,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,

    pub b_inp_density: *const usize,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,

    pub b_aux_density: *const usize,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,

    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_size: usize,

    pub inp_assignment_data: *const Scalar,
    pub inp_assignment_size: usize,

    pub aux_assignment_data: *const Scalar,
    pub aux_assignment_size: usize,
}

// The layout the library's checks assume: 32-byte scalars and 384-byte proofs (A, B, C affine).
fn check_element_sizes<S, PR>() {
    assert_eq!(size_of::<S>(), 32, "scalars must be 32-byte BLS12-381 Fr elements");
    assert_eq!(size_of::<PR>(), 384, "proofs must be 384-byte affine (A, B, C) triples");
}

/// Proves `provers.len()` circuits with randomisers `r_s[i]`, `s_s[i]` into `proofs[i]`.
/// Panics on a length mismatch or when the library reports an error (with its message).
pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    let n = provers.len();
    assert_eq!(r_s.len(), n, "one r per circuit");
    assert_eq!(s_s.len(), n, "one s per circuit");
    assert_eq!(proofs.len(), n, "one proof per circuit");
    check_element_sizes::<S, PR>();
    let status = unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr().cast(),
            n,
            r_s.as_ptr().cast(),
            s_s.as_ptr().cast(),
            proofs.as_mut_ptr().cast(),
            srs,
        )
    };
    if status.code != 0 {
        panic!("{}", String::from(status));
    }
}

/// The older entry point (bellperson 0.26): one pointer per circuit for each vector, the sizes
/// and density bit vectors shared by every circuit. Builds the `Assignment`s and calls
/// `generate_groth16_proofs`.
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    for (what, len) in [
        ("ntt_a_scalars", ntt_a_scalars.len()),
        ("ntt_b_scalars", ntt_b_scalars.len()),
        ("ntt_c_scalars", ntt_c_scalars.len()),
        ("input_assignments", input_assignments.len()),
        ("aux_assignments", aux_assignments.len()),
        ("r_s", r_s.len()),
        ("s_s", s_s.len()),
        ("proofs", proofs.len()),
    ] {
        assert_eq!(len, num_circuits, "{what} must hold num_circuits entries");
    }
    assert_eq!(size_of::<D>(), 8, "density bit vectors must be made of 64-bit words");
    let bits = |words: &[D]| words.len() * 64;
    assert!(bits(a_aux_density_bv) >= aux_assignments_size, "a_aux_density_bv is too short");
    assert!(bits(b_g1_aux_density_bv) >= aux_assignments_size, "b_g1_aux_density_bv is too short");
    assert!(bits(b_g1_input_density_bv) >= input_assignments_size, "b_g1_input_density_bv is too short");

    let provers: Vec<Assignment<S>> = (0..num_circuits)
        .map(|i| Assignment {
            a_aux_density: a_aux_density_bv.as_ptr().cast(),
            a_aux_bit_len: aux_assignments_size,
            a_aux_popcount: a_aux_total_density,
            b_inp_density: b_g1_input_density_bv.as_ptr().cast(),
            b_inp_bit_len: input_assignments_size,
            b_inp_popcount: b_g1_input_total_density,
            b_aux_density: b_g1_aux_density_bv.as_ptr().cast(),
            b_aux_bit_len: aux_assignments_size,
            b_aux_popcount: b_g1_aux_total_density,
            a: ntt_a_scalars[i],
            b: ntt_b_scalars[i],
            c: ntt_c_scalars[i],
            abc_size: ntt_scalars_actual_size,
            inp_assignment_data: input_assignments[i],
            inp_assignment_size: input_assignments_size,
            aux_assignment_data: aux_assignments[i],
            aux_assignment_size: aux_assignments_size,
        })
        .collect();
    generate_groth16_proofs(&provers, r_s, s_s, proofs, srs);
}
