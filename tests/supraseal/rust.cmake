# SPDX-License-Identifier: Apache-2.0 OR MIT
# Builds a patch crate — CRATE, default contrib/supraseal-c2 (SupraSeal C2's Rust API over
# libproofpipe_supraseal.so), or contrib/supraseal-c2-cuzk (the API of Curio's fork over
# libproofpipe_cuzk.so) — with plain rustc against a stand-in for its one dependency (sppark's
# error type; no crates registry here), then CALLER (default tests/supraseal/rust_caller.rs) on
# top of it linked with LIB (default proofpipe_supraseal), runs it and compares its proofs with the
# C caller's (RAW_C, 384-byte structs, same seed).
if(NOT DEFINED CRATE)
  set(CRATE contrib/supraseal-c2)
endif()
if(NOT DEFINED LIB)
  set(LIB proofpipe_supraseal)
endif()
if(NOT DEFINED CALLER)
  set(CALLER tests/supraseal/rust_caller.rs)
endif()
if(NOT RUSTC OR NOT EXISTS "${RUSTC}")
  message(FATAL_ERROR "rustc not found (${RUSTC}): install Debian's rustc (scripts/install-deps does) or "
                      "configure with -DPROOFPIPE_RUST_TEST=OFF to leave the Rust tests out")
endif()
file(MAKE_DIRECTORY ${WORK})
function(rustc)
  execute_process(COMMAND ${RUSTC} --edition 2021 -O ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rustc ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()
rustc(--crate-type rlib --crate-name sppark -o ${WORK}/libsppark.rlib ${SOURCE_DIR}/tests/supraseal/sppark_stub.rs)
rustc(--crate-type rlib --crate-name supraseal_c2 -L ${WORK} --extern sppark=${WORK}/libsppark.rlib
      -o ${WORK}/libsupraseal_c2.rlib ${SOURCE_DIR}/${CRATE}/src/lib.rs)
# The link directives are what the crate's build.rs prints for cargo.
rustc(-L ${WORK} --extern supraseal_c2=${WORK}/libsupraseal_c2.rlib -L native=${LIBDIR} -l dylib=${LIB}
      -C link-arg=-Wl,-rpath,${LIBDIR} -o ${WORK}/rust_caller ${SOURCE_DIR}/${CALLER})
execute_process(COMMAND ${WORK}/rust_caller ${DATA}/params ${DATA}/witness-0.ppw ${DATA}/witness-1.ppw ${SEED}
                        ${WORK}/rust-proofs.raw
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rust_caller failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/rust-proofs.raw ${RAW_C} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Rust crate's proofs differ from the C caller's (${WORK}/rust-proofs.raw vs ${RAW_C})")
endif()
message(STATUS "rust_caller's proofs equal the C caller's byte for byte")
