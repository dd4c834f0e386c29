# SPDX-License-Identifier: Apache-2.0 OR MIT
# Inputs of the C API tests: a synthetic PoRep-shaped key with two witnesses (2^8 rows, 3 public
# inputs) with the CLI's proofs of them (--seed 7), and the circom multiplier with a key in
# bellman's row order.
file(REMOVE_RECURSE ${WORK})
foreach(cmd
    "setup;--synthetic;porep;--lg;8;--partitions;2;--inputs;3;--out;${WORK}"
    "prove;--params;${WORK}/params;--witness;${WORK}/witness-0.ppw;--witness;${WORK}/witness-1.ppw;--out;${WORK}/cli-proofs.bin;--seed;7"
    "zkey;setup;${SNARKJS_DATA}/multiplier.r1cs;${WORK}/multiplier.zkey;--seed;3;--via-params;${WORK}/multiplier.params")
  execute_process(COMMAND ${PROOFPIPE} ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "proofpipe ${cmd} failed (${rc}):\n${out}\n${err}")
  endif()
endforeach()
