// SPDX-License-Identifier: Apache-2.0 OR MIT
// The C API from Rust: plain rustc, no crates; proves two synthetic partitions and verifies them.
// Built by tests/capi/rust.cmake: rustc --edition 2021 -L <build dir> test_capi.rs (Rust >= 1.63).

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::process::exit;
use std::ptr::{null, null_mut};

const PP_OK: c_int = 0;
const PP_ERR_INVALID_ARGUMENT: c_int = 2;
const PP_ERR_BUFFER_TOO_SMALL: c_int = 3;
const PP_PROOF_BYTES: usize = 192;
const PP_FR_BYTES: usize = 32;
const PP_INPUT_ASSIGNMENT: c_int = 0;

#[repr(C)]
struct PpError {
    code: c_int,
    message: [c_char; 1024],
}

#[repr(C)]
struct PpEngineConfig {
    num_gpus: c_int,
    gpus: [c_int; 16],
    gpu_workers: c_int,
    device_memory_budget: u64,
    host_memory_budget: u64,
    cpu_fallback: c_int,
    threads: c_int,
}

#[repr(C)]
struct PpSource {
    path: *const c_char,
    data: *const u8,
    size: usize,
}

#[repr(C)]
struct PpAssignment {
    a: *const u8,
    b: *const u8,
    c: *const u8,
    num_rows: usize,
    input: *const u8,
    num_inputs: usize,
    aux: *const u8,
    num_aux: usize,
    a_aux_density: *const u64,
    a_aux_density_words: usize,
    b_input_density: *const u64,
    b_input_density_words: usize,
    b_aux_density: *const u64,
    b_aux_density_words: usize,
}

#[repr(C)]
struct PpInput {
    kind: c_int,
    assignment: PpAssignment,
    ppw: PpSource,
    r1cs: PpSource,
    wtns: PpSource,
    r: *const u8,
    s: *const u8,
}

// pp_gpu_info as of 0.9, every field: the library writes the whole struct.
#[repr(C)]
struct PpGpuInfo {
    device: i32,
    resident_keys: u32,
    memory_total: u64,
    memory_budget: u64,
    memory_used: u64,
    memory_peak: u64,
    proofs_checked: u64,
    proofs_rejected: u64,
    healthy: u32,
    reserved: u32,
    partitions: u64,
    partitions_handed_off: u64,
    ms_busy: f64,
}

enum PpEngine {}
enum PpKey {}

#[link(name = "proofpipe")]
extern "C" {
    fn pp_version() -> u32;
    fn pp_engine_config_default(config: *mut PpEngineConfig);
    fn pp_engine_create(config: *const PpEngineConfig, out: *mut *mut PpEngine, err: *mut PpError) -> c_int;
    fn pp_engine_free(engine: *mut PpEngine);
    fn pp_engine_gpu_info_get(engine: *const PpEngine, index: u32, out: *mut PpGpuInfo, err: *mut PpError) -> c_int;
    fn pp_key_load(path: *const c_char, subgroup_check: c_int, out: *mut *mut PpKey, err: *mut PpError) -> c_int;
    fn pp_key_release(key: *mut PpKey);
    fn pp_fr_from_canonical(out: *mut u8, input: *const u8, n: usize, err: *mut PpError) -> c_int;
    fn pp_prove(
        engine: *mut PpEngine,
        key: *const PpKey,
        inputs: *const PpInput,
        num_inputs: usize,
        seed: *const u64,
        proofs: *mut u8,
        proofs_size: *mut usize,
        err: *mut PpError,
    ) -> c_int;
    fn pp_verify(
        key: *const PpKey,
        public_inputs: *const u8,
        num_public: usize,
        proof: *const u8,
        proof_size: usize,
        valid: *mut c_int,
        err: *mut PpError,
    ) -> c_int;
}

fn new_error() -> PpError {
    PpError { code: 0, message: [0; 1024] }
}

fn check(status: c_int, err: &PpError, what: &str) {
    if status != PP_OK {
        let msg = unsafe { CStr::from_ptr(err.message.as_ptr()) };
        eprintln!("{}: status {}: {}", what, status, msg.to_string_lossy());
        exit(1);
    }
}

// One partition in bellperson's layout, read from a .ppw file (docs/FORMATS.md).
struct Witness {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    input: Vec<u8>,
    aux: Vec<u8>,
    a_aux: Vec<u64>,
    b_input: Vec<u64>,
    b_aux: Vec<u64>,
    rows: usize,
    inputs: usize,
    aux_n: usize,
}

fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

fn read_ppw(path: &str) -> Witness {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {}", path, e));
    assert!(bytes.len() >= 32 && &bytes[..8] == b"PPWITNS1", "{}: not a .ppw file", path);
    let rows = le64(&bytes[8..]) as usize;
    let inputs = le64(&bytes[16..]) as usize;
    let aux_n = le64(&bytes[24..]) as usize;
    let mut pos = 32;
    let mut scalars = |n: usize| -> Vec<u8> {
        let mut out = vec![0u8; n * PP_FR_BYTES];
        let mut err = new_error();
        let st = unsafe { pp_fr_from_canonical(out.as_mut_ptr(), bytes[pos..].as_ptr(), n, &mut err) };
        check(st, &err, "pp_fr_from_canonical");
        pos += n * PP_FR_BYTES;
        out
    };
    let a = scalars(rows);
    let b = scalars(rows);
    let c = scalars(rows);
    let input = scalars(inputs);
    let aux = scalars(aux_n);
    let words = |pos: &mut usize, n: usize| -> Vec<u64> {
        let v = (0..n).map(|i| le64(&bytes[*pos + 8 * i..])).collect();
        *pos += 8 * n;
        v
    };
    let a_aux = words(&mut pos, (aux_n + 63) / 64);
    let b_input = words(&mut pos, (inputs + 63) / 64);
    let b_aux = words(&mut pos, (aux_n + 63) / 64);
    assert_eq!(pos, bytes.len(), "{}: size mismatch", path);
    Witness { a, b, c, input, aux, a_aux, b_input, b_aux, rows, inputs, aux_n }
}

fn input_of(w: &Witness) -> PpInput {
    let none = || PpSource { path: null(), data: null(), size: 0 };
    PpInput {
        kind: PP_INPUT_ASSIGNMENT,
        assignment: PpAssignment {
            a: w.a.as_ptr(),
            b: w.b.as_ptr(),
            c: w.c.as_ptr(),
            num_rows: w.rows,
            input: w.input.as_ptr(),
            num_inputs: w.inputs,
            aux: w.aux.as_ptr(),
            num_aux: w.aux_n,
            a_aux_density: w.a_aux.as_ptr(),
            a_aux_density_words: w.a_aux.len(),
            b_input_density: w.b_input.as_ptr(),
            b_input_density_words: w.b_input.len(),
            b_aux_density: w.b_aux.as_ptr(),
            b_aux_density_words: w.b_aux.len(),
        },
        ppw: none(),
        r1cs: none(),
        wtns: none(),
        r: null(),
        s: null(),
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: test_capi_rust DATA_DIR");
    unsafe {
        assert_eq!(pp_version() >> 16, 0, "major version");
        assert!((pp_version() >> 8 & 0xff) >= 4, "minor version: pp_engine_gpu_info_get is 0.4");
        let mut err = new_error();
        let mut config: PpEngineConfig = std::mem::zeroed();
        pp_engine_config_default(&mut config);
        config.threads = 2;
        let mut engine: *mut PpEngine = null_mut();
        check(pp_engine_create(&config, &mut engine, &mut err), &err, "pp_engine_create");

        let params = CString::new(format!("{}/params", dir)).unwrap();
        let mut key: *mut PpKey = null_mut();
        check(pp_key_load(params.as_ptr(), 0, &mut key, &mut err), &err, "pp_key_load");

        let w = [read_ppw(&format!("{}/witness-0.ppw", dir)), read_ppw(&format!("{}/witness-1.ppw", dir))];
        let inputs = [input_of(&w[0]), input_of(&w[1])];

        // Ask for the size first, as an FFI caller that does not know it would.
        let mut size: usize = 0;
        let seed: u64 = 7;
        let st = pp_prove(engine, key, inputs.as_ptr(), 2, &seed, null_mut(), &mut size, &mut err);
        assert_eq!(st, PP_ERR_BUFFER_TOO_SMALL);
        assert_eq!(size, 2 * PP_PROOF_BYTES);
        let mut proofs = vec![0u8; size];
        check(pp_prove(engine, key, inputs.as_ptr(), 2, &seed, proofs.as_mut_ptr(), &mut size, &mut err), &err,
              "pp_prove");
        assert_eq!(size, 2 * PP_PROOF_BYTES);

        for (k, wk) in w.iter().enumerate() {
            let mut valid: c_int = -1;
            let proof = proofs[k * PP_PROOF_BYTES..].as_ptr();
            let public = wk.input[PP_FR_BYTES..].as_ptr();
            check(pp_verify(key, public, wk.inputs - 1, proof, PP_PROOF_BYTES, &mut valid, &mut err), &err,
                  "pp_verify");
            assert_eq!(valid, 1, "proof {} must verify", k);
            // Against the other partition's public inputs it must not.
            let other = w[1 - k].input[PP_FR_BYTES..].as_ptr();
            check(pp_verify(key, other, wk.inputs - 1, proof, PP_PROOF_BYTES, &mut valid, &mut err), &err,
                  "pp_verify");
            assert_eq!(valid, 0, "proof {} with the other public inputs must not verify", k);
        }
        // Every GPU of the engine (none on a CPU-only machine), then an index past the last.
        let mut gpus: u32 = 0;
        loop {
            let mut gi: PpGpuInfo = std::mem::zeroed();
            let st = pp_engine_gpu_info_get(engine, gpus, &mut gi, &mut err);
            if st != PP_OK {
                assert_eq!(st, PP_ERR_INVALID_ARGUMENT, "an index past the last GPU");
                break;
            }
            assert!(gi.memory_used <= gi.memory_budget && gi.memory_budget <= gi.memory_total, "GPU {} memory", gpus);
            assert!(gi.memory_peak >= gi.memory_used && gi.resident_keys >= 1, "GPU {} after a proof", gpus);
            assert!(gi.healthy == 1 && gi.reserved == 0 && gi.partitions_handed_off == 0, "GPU {} health", gpus);
            assert!(gi.proofs_rejected <= gi.proofs_checked && gi.ms_busy >= 0.0,
                    "GPU {} counts", gpus);
            gpus += 1;
        }
        pp_key_release(key);
        pp_engine_free(engine);
    }
    println!("rust: 2 proofs made through libproofpipe.so and verified; a wrong statement was rejected");
}
