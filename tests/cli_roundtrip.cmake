# SPDX-License-Identifier: Apache-2.0 OR MIT
# CLI round trip: setup -> prove -> verify, then a tampered public input and proof must fail.
file(REMOVE_RECURSE ${WORK})
function(run expect_success)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_success AND NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  elseif(NOT expect_success AND rc EQUAL 0)
    message(FATAL_ERROR "succeeded but should have failed: ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${ARGN}: exit ${rc}")
endfunction()

run(TRUE ${PROOFPIPE} setup --synthetic porep --lg 8 --partitions 2 --inputs 3 --out ${WORK})
run(TRUE ${PROOFPIPE} info ${WORK}/params)
run(TRUE ${PROOFPIPE} info ${WORK}/witness-0.ppw)
run(TRUE ${PROOFPIPE} prove --params ${WORK}/params --witness ${WORK}/witness-0.ppw --witness ${WORK}/witness-1.ppw
    --out ${WORK}/proofs.bin --json ${WORK}/proofs.json --seed 7)
file(READ ${WORK}/proofs.json proofs_json)
string(JSON n_proofs LENGTH "${proofs_json}")
string(JSON curve GET "${proofs_json}" 1 curve)
if(NOT n_proofs EQUAL 2 OR NOT curve STREQUAL "bls12381")
  message(FATAL_ERROR "proofs.json: ${n_proofs} proofs, curve ${curve}")
endif()
file(SIZE ${WORK}/proofs.bin proofs_size)
if(NOT proofs_size EQUAL 384)
  message(FATAL_ERROR "proofs.bin has ${proofs_size} bytes, expected 2 x 192")
endif()
run(TRUE ${PROOFPIPE} verify --params ${WORK}/params --proofs ${WORK}/proofs.bin
    --public ${WORK}/public-0.json --public ${WORK}/public-1.json)
# The key as a key cache: prove and verify take it where they take the .params, with the same
# proof bytes (same seed); a cache that is not one fails.
run(TRUE ${PROOFPIPE} key cache ${WORK}/params ${WORK}/key.ppk)
run(TRUE ${PROOFPIPE} info ${WORK}/key.ppk)
run(TRUE ${PROOFPIPE} prove --params ${WORK}/key.ppk --witness ${WORK}/witness-0.ppw --witness ${WORK}/witness-1.ppw
    --out ${WORK}/proofs_cache.bin --seed 7)
file(SHA256 ${WORK}/proofs.bin proofs_hash)
file(SHA256 ${WORK}/proofs_cache.bin proofs_cache_hash)
if(NOT proofs_hash STREQUAL proofs_cache_hash)
  message(FATAL_ERROR "the proofs from the key cache differ from those from the .params")
endif()
run(TRUE ${PROOFPIPE} verify --params ${WORK}/key.ppk --proofs ${WORK}/proofs_cache.bin
    --public ${WORK}/public-0.json --public ${WORK}/public-1.json)
# Two simulated GPUs (PROOFPIPE_TEST_SIM_GPUS, docs/ENGINE.md), GPU 1 lost at its first
# partition: --devices picks among them, the proofs are the same bytes; a GPU past them is refused.
set(ENV{PROOFPIPE_TEST_SIM_GPUS} 2)
set(ENV{PROOFPIPE_TEST_LOSE_GPU} 1@1)
execute_process(COMMAND ${PROOFPIPE} prove --params ${WORK}/params --witness ${WORK}/witness-0.ppw
                        --witness ${WORK}/witness-1.ppw --out ${WORK}/proofs_sim.bin --seed 7 --devices 0,1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" MATCHES "proved on 2 GPU\\(s\\)[^\n]* 0 partition\\(s\\) on the CPU")
  message(FATAL_ERROR "prove on two simulated GPUs, GPU 1 lost (exit ${rc}): expected both GPUs and no CPU proof\n${out}\n${err}")
endif()
file(SHA256 ${WORK}/proofs_sim.bin proofs_sim_hash)
if(NOT proofs_hash STREQUAL proofs_sim_hash)
  message(FATAL_ERROR "the proofs made on two simulated GPUs, one of them lost, differ from the CPU's")
endif()
run(FALSE ${PROOFPIPE} prove --params ${WORK}/params --witness ${WORK}/witness-0.ppw --out ${WORK}/bad.bin --devices 2)
unset(ENV{PROOFPIPE_TEST_LOSE_GPU})
# bench calls --compare-gpus: calls in flight on GPU 0 alone, then on both; issue 48's line.
execute_process(COMMAND ${PROOFPIPE} bench calls --params ${WORK}/params --witness ${WORK}/witness-0.ppw
                        --witness ${WORK}/witness-1.ppw --calls 3 --rounds 1 --compare-gpus
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "op=calls entry=capi gpus=1 calls=3 partitions=2 rounds=1 "
   OR NOT out MATCHES "op=multi-gpu entry=capi gpus=2 speedup=[0-9.]+ min_gpu_busy=[0-9.]+ ")
  message(FATAL_ERROR "bench calls --compare-gpus on two simulated GPUs (exit ${rc}):\n${out}\n${err}")
endif()
unset(ENV{PROOFPIPE_TEST_SIM_GPUS})
file(WRITE ${WORK}/not_a_cache.ppk "PPKCACHE but nothing else")
run(FALSE ${PROOFPIPE} prove --params ${WORK}/not_a_cache.ppk --witness ${WORK}/witness-0.ppw --out ${WORK}/bad.bin)
# Swapped public inputs: both proofs are then checked against the wrong statement.
run(FALSE ${PROOFPIPE} verify --params ${WORK}/params --proofs ${WORK}/proofs.bin
    --public ${WORK}/public-1.json --public ${WORK}/public-0.json)
# Wrong count of public input files.
run(FALSE ${PROOFPIPE} verify --params ${WORK}/params --proofs ${WORK}/proofs.bin --public ${WORK}/public-0.json)
# A witness for the wrong key size.
run(TRUE ${PROOFPIPE} setup --synthetic porep --lg 7 --partitions 1 --inputs 3 --out ${WORK}/small)
run(FALSE ${PROOFPIPE} prove --params ${WORK}/params --witness ${WORK}/small/witness-0.ppw --out ${WORK}/bad.bin)
