// SPDX-License-Identifier: Apache-2.0 OR MIT
// Links libproofpipe_supraseal.so in place of compiling SupraSeal C2.
//
// The library is looked for in $PROOFPIPE_SUPRASEAL_LIB_DIR, else in the proofpipe build tree
// this crate sits in (<repo>/build/release). The program that ends up linked must find it at run
// time too: install it where the dynamic loader looks, set LD_LIBRARY_PATH, or build with
// RUSTFLAGS="-C link-arg=-Wl,-rpath,<dir>" (a dependency's build script cannot set an rpath).
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=PROOFPIPE_SUPRASEAL_LIB_DIR");
    let dir = match env::var_os("PROOFPIPE_SUPRASEAL_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../build/release"),
    };
    let lib = dir.join("libproofpipe_supraseal.so");
    if !lib.is_file() {
        panic!(
            "{} not found: build it in proofpipe (cmake --preset release && cmake --build build/release \
             --target proofpipe_supraseal) or set PROOFPIPE_SUPRASEAL_LIB_DIR to the folder holding it",
            lib.display()
        );
    }
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=proofpipe_supraseal");
    // For dependents' build scripts (DEP_PROOFPIPE_SUPRASEAL_LIB_DIR).
    println!("cargo:lib_dir={}", dir.display());
}
