// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The public Rust API of Curio's fork of SupraSeal C2 (`supraseal-c2` 0.1.2, the GPU engine of
//! the cuzk proving daemon) over `libproofpipe_cuzk.so`, proofpipe's implementation of the fork's
//! C ABI: `SRS`, `Assignment`, `generate_groth16_proof` (with `gpu_mtx` and `gpu_index`),
//! `generate_groth16_proofs`, `alloc_gpu_mutex` / `free_gpu_mutex` and the split calls
//! `start_groth16_proof` / `finish_groth16_proof` / `drop_pending_proof`. The signatures are the
//! fork's, so that cuzk's `[patch.crates-io]` entry swaps the prover under its bellperson without
//! touching either.
//!
//! What differs is behind the ABI (docs/CUZK.md): `gpu_mtx` is accepted and never locked (the
//! engine interleaves callers on a GPU itself), `gpu_index` pins a call's circuits to that CUDA
//! ordinal (-1: wherever the engine finds room), a machine without a GPU proves on the CPU, and
//! inconsistent sizes or an unknown pending handle come back as an error (this crate then panics
//! with the library's message, as the fork panics on any error) instead of undefined behaviour.
//!
//! # Lifetimes of the split calls
//!
//! The fork's contract: `r_s`, `s_s`, the `Assignment` structs and the `a`, `b`, `c` vectors may
//! go as soon as `start_groth16_proof` returns (the library has copied them; Curio's bellperson
//! releases `a`, `b`, `c` right there). The input and aux assignment vectors and the three density
//! bit vectors are read in place: they must stay alive and unchanged until the
//! `finish_groth16_proof` (or `drop_pending_proof`) of the handle returns.

use core::ffi::c_void;
use std::ffi::CString;
use std::mem::size_of;
use std::os::raw::c_char;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The error the C functions return: `code` (0 = success, else an errno value) and a message
/// the library allocated, freed when the value is dropped. The fork names it `cuda::Error`
/// (sppark's `cuda_error!` makes it an alias of `sppark::Error`).
mod cuda {
    pub type Error = sppark::Error;
}

extern "C" {
    fn create_SRS(ret: &mut SRS, srs_path: *const c_char, cache: bool) -> cuda::Error;
    fn evict_SRS(by_ref: &SRS);
    fn drop_SRS(by_ref: &SRS);
    fn clone_SRS(by_ref: &SRS) -> SRS;

    fn create_gpu_mutex() -> *mut c_void;
    fn destroy_gpu_mutex(mtx: *mut c_void);

    fn generate_groth16_proofs_c(
        provers: *const c_void,
        num_circuits: usize,
        r_s: *const c_void,
        s_s: *const c_void,
        proofs: *mut c_void,
        srs: &SRS,
        gpu_mtx: *mut c_void,
        gpu_index: i32,
    ) -> cuda::Error;
    fn generate_groth16_proofs_start_c(
        provers: *const c_void,
        num_circuits: usize,
        r_s: *const c_void,
        s_s: *const c_void,
        srs: &SRS,
        gpu_mtx: *mut c_void,
        gpu_index: i32,
        pending_out: *mut *mut c_void,
    ) -> cuda::Error;
    fn finalize_groth16_proof_c(pending: *mut c_void, proofs: *mut c_void) -> cuda::Error;
    fn destroy_pending_proof(pending: *mut c_void);
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
    /// Panics, like the fork, when the path is not UTF-8 or holds a NUL byte.
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

const SCALAR_BYTES: usize = 32;
const PROOF_BYTES: usize = 384;

// The layout the library assumes: 32-byte scalars and 384-byte proofs (A, B, C affine).
fn check_scalar_size<S>() {
    assert_eq!(size_of::<S>(), SCALAR_BYTES, "scalars must be 32-byte BLS12-381 Fr elements");
}

fn check_proof_size<PR>() {
    assert_eq!(size_of::<PR>(), PROOF_BYTES, "proofs must be 384-byte affine (A, B, C) triples");
}

// Panics with the library's message when `status` is an error.
fn check_status(status: cuda::Error) {
    if status.code != 0 {
        panic!("{}", String::from(status));
    }
}

/// Returns a handle to pass as `gpu_mtx`. The fork allocates a `std::mutex` it locks around its
/// kernels; proofpipe's engine interleaves callers without one, so the handle is accepted and
/// never locked (NULL, returned when out of memory, is a valid `gpu_mtx` too).
///
/// Release it with `free_gpu_mutex` when done.
pub fn alloc_gpu_mutex() -> *mut c_void {
    unsafe { create_gpu_mutex() }
}

/// Releases a handle from `alloc_gpu_mutex`.
///
/// # Safety
///
/// As in the fork: `ptr` comes from `alloc_gpu_mutex` and is freed once, after the last call
/// that was given it returned. (The library ignores NULL and a handle it has freed already.)
pub unsafe fn free_gpu_mutex(ptr: *mut c_void) {
    destroy_gpu_mutex(ptr)
}

// The per-circuit Assignments of the fork's older entry points, where every circuit has the same
// sizes and density bit vectors and its own vectors. Checks what the library cannot see.
#[allow(clippy::too_many_arguments)]
fn shared_assignments<S, D>(
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
) -> Vec<Assignment<S>> {
    for (what, len) in [
        ("ntt_a_scalars", ntt_a_scalars.len()),
        ("ntt_b_scalars", ntt_b_scalars.len()),
        ("ntt_c_scalars", ntt_c_scalars.len()),
        ("input_assignments", input_assignments.len()),
        ("aux_assignments", aux_assignments.len()),
        ("r_s", r_s.len()),
        ("s_s", s_s.len()),
    ] {
        assert_eq!(len, num_circuits, "{what} must hold num_circuits entries");
    }
    check_scalar_size::<S>();
    assert_eq!(size_of::<D>(), 8, "density bit vectors must be made of 64-bit words");
    let bits = |words: &[D]| words.len() * 64;
    assert!(bits(a_aux_density_bv) >= aux_assignments_size, "a_aux_density_bv is too short");
    assert!(bits(b_g1_aux_density_bv) >= aux_assignments_size, "b_g1_aux_density_bv is too short");
    assert!(bits(b_g1_input_density_bv) >= input_assignments_size, "b_g1_input_density_bv is too short");

    (0..num_circuits)
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
        .collect()
}

// One blocking prove call: checks the lengths and sizes the library cannot see, then calls it.
fn prove<S, PR>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: i32,
) {
    let n = provers.len();
    assert_eq!(r_s.len(), n, "r_s must hold one scalar per circuit");
    assert_eq!(s_s.len(), n, "s_s must hold one scalar per circuit");
    assert_eq!(proofs.len(), n, "proofs must hold one proof per circuit");
    check_scalar_size::<S>();
    check_proof_size::<PR>();
    let status = unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr().cast(),
            n,
            r_s.as_ptr().cast(),
            s_s.as_ptr().cast(),
            proofs.as_mut_ptr().cast(),
            srs,
            gpu_mtx,
            gpu_index,
        )
    };
    check_status(status);
}

/// Proves `provers.len()` circuits with randomisers `r_s[i]`, `s_s[i]` into `proofs[i]`, with no
/// `gpu_mtx` and wherever the engine finds room (`gpu_index` -1), as the fork does.
///
/// Panics on a length mismatch or when the library reports an error (with its message).
pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    prove(provers, r_s, s_s, proofs, srs, std::ptr::null_mut(), -1);
}

/// The entry point cuzk's bellperson calls: one pointer per circuit for each vector, the sizes
/// and density bit vectors shared by every circuit. `gpu_mtx` (from `alloc_gpu_mutex`, or NULL)
/// is accepted and never locked; `gpu_index` is the CUDA ordinal every circuit of the call is
/// proved on, or -1 for wherever the engine finds room.
///
/// Panics on a length mismatch or when the library reports an error (with its message).
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
    gpu_mtx: *mut c_void,
    gpu_index: i32,
) {
    assert_eq!(proofs.len(), num_circuits, "proofs must hold num_circuits entries");
    let provers = shared_assignments(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
    );
    prove(&provers, r_s, s_s, proofs, srs, gpu_mtx, gpu_index);
}

// The pending proofs this crate started and has not finished or dropped yet, as (handle, number
// of circuits): finalize_groth16_proof_c takes no count, so finish_groth16_proof checks the
// length of `proofs` against this. The library never reuses a handle.
static PENDING: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn pending_table() -> MutexGuard<'static, Vec<(usize, usize)>> {
    // The table holds plain numbers: a panic elsewhere while it was locked leaves it consistent.
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

// Removes `handle` from the table: its number of circuits, None for a handle it does not hold.
fn forget_pending(handle: *mut c_void) -> Option<usize> {
    let mut table = pending_table();
    let at = table.iter().position(|&(h, _)| h == handle as usize)?;
    Some(table.swap_remove(at).1)
}

/// Checks every argument, queues the circuits and returns a pending proof at once; the same
/// arguments as `generate_groth16_proof` less `proofs`. Pass the handle to exactly one of
/// `finish_groth16_proof` (the proofs) or `drop_pending_proof` (abandon it). The handle is an
/// opaque value (a raw pointer, so neither `Send` nor `Sync`; wrap it to move it to another
/// thread, which may finish it).
///
/// Lifetimes: the library copies `r_s`, `s_s`, the `Assignment` structs this function builds and
/// each circuit's `a`, `b`, `c` (while the first circuits already prove; this function returns
/// once the last is copied), so those and the slices of pointers may go when it returns, as with
/// the fork. The input and aux assignment vectors and the three density bit vectors are read in
/// place and must stay alive and unchanged until `finish_groth16_proof` or `drop_pending_proof`
/// of the handle returns.
///
/// Panics on a length mismatch or when the library reports an error (with its message); no
/// handle is left behind then.
// gpu_mtx is a raw pointer the library accepts and never dereferences (it never locks it).
#[allow(clippy::too_many_arguments, clippy::not_unsafe_ptr_arg_deref)]
pub fn start_groth16_proof<S, D>(
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
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: i32,
) -> *mut c_void {
    let provers = shared_assignments(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
    );
    let mut pending: *mut c_void = std::ptr::null_mut();
    let status = unsafe {
        generate_groth16_proofs_start_c(
            provers.as_ptr().cast(),
            num_circuits,
            r_s.as_ptr().cast(),
            s_s.as_ptr().cast(),
            srs,
            gpu_mtx,
            gpu_index,
            &mut pending,
        )
    };
    check_status(status);
    pending_table().push((pending as usize, num_circuits));
    pending
}

/// Waits for the pending proof `handle` and writes its proofs into `proofs`, which must hold
/// exactly as many 384-byte proofs as the start call had circuits.
///
/// Consumes the handle whatever happens — on success, on the library's error and on a wrong
/// `proofs` length (the proof is then cancelled) — so it must not be finished or dropped again.
/// An unknown handle (never returned by `start_groth16_proof`, or finished or dropped already)
/// is an error, not undefined behaviour: the library reports it and nothing else happens.
///
/// Panics when the library reports an error (with its message, naming the unknown handle in that
/// case) or when `proofs` has the wrong length.
// The handle is a raw pointer only in type: the library looks it up in its table of pending
// proofs and never dereferences it, so this safe signature (the fork's) is sound.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn finish_groth16_proof<PR>(handle: *mut c_void, proofs: &mut [PR]) {
    let circuits = forget_pending(handle);
    let wrong = if size_of::<PR>() != PROOF_BYTES {
        Some(format!("proofs must be {PROOF_BYTES}-byte affine (A, B, C) triples, not {} bytes", size_of::<PR>()))
    } else {
        match circuits {
            Some(n) if n != proofs.len() => {
                Some(format!("proofs holds {} entries, the pending proof has {n} circuits", proofs.len()))
            }
            _ => None,
        }
    };
    if let Some(why) = wrong {
        unsafe { destroy_pending_proof(handle) };
        panic!("finish_groth16_proof: {why} (the pending proof is cancelled and freed)");
    }
    let status = unsafe { finalize_groth16_proof_c(handle, proofs.as_mut_ptr().cast()) };
    check_status(status);
}

/// Abandons a pending proof that will not be finished: cancels it, waits until the arrays it
/// borrowed are no longer read (they may be freed once this returns) and frees the handle.
///
/// # Safety
///
/// Unsafe to keep the fork's signature, which requires `handle` to be a live handle from
/// `start_groth16_proof`. With this library nothing is required: NULL, an unknown handle and
/// one finished or dropped already are ignored.
pub unsafe fn drop_pending_proof(handle: *mut c_void) {
    forget_pending(handle);
    destroy_pending_proof(handle)
}
