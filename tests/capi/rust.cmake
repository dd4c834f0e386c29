# SPDX-License-Identifier: Apache-2.0 OR MIT
# Compiles tests/capi/test_capi.rs with plain rustc (no cargo, no crates) against
# libproofpipe.so and runs it on the C API test data.
if(NOT RUSTC OR NOT EXISTS "${RUSTC}")
  message(FATAL_ERROR "rustc not found (${RUSTC}): install Debian's rustc (scripts/install-deps does) or "
                      "configure with -DPROOFPIPE_RUST_TEST=OFF to leave the Rust FFI test out")
endif()
execute_process(COMMAND ${RUSTC} --edition 2021 -O -L ${LIBDIR} -C link-arg=-Wl,-rpath,${LIBDIR} -o ${OUT} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rustc failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${OUT} ${DATA} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "test_capi_rust failed (${rc})")
endif()
