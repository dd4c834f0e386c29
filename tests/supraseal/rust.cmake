# Builds the patch crate contrib/supraseal-c2 (SupraSeal C2's Rust API over
# libproofpipe_supraseal.so) with plain rustc against a stand-in for its one dependency (sppark's
# error type; no crates registry here), then tests/supraseal/rust_caller.rs on top of it, runs it
# and compares its proofs with abi_caller's (RAW_C, 384-byte structs, same seed).
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
      -o ${WORK}/libsupraseal_c2.rlib ${SOURCE_DIR}/contrib/supraseal-c2/src/lib.rs)
# The link directives are what contrib/supraseal-c2/build.rs prints for cargo.
rustc(-L ${WORK} --extern supraseal_c2=${WORK}/libsupraseal_c2.rlib -L native=${LIBDIR} -l dylib=proofpipe_supraseal
      -C link-arg=-Wl,-rpath,${LIBDIR} -o ${WORK}/rust_caller ${SOURCE_DIR}/tests/supraseal/rust_caller.rs)
execute_process(COMMAND ${WORK}/rust_caller ${DATA}/params ${DATA}/witness-0.ppw ${DATA}/witness-1.ppw ${SEED}
                        ${WORK}/rust-proofs.raw
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rust_caller failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/rust-proofs.raw ${RAW_C} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Rust crate's proofs differ from abi_caller's (${WORK}/rust-proofs.raw vs ${RAW_C})")
endif()
message(STATUS "rust_caller's proofs equal abi_caller's byte for byte")
