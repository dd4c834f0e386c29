# SPDX-License-Identifier: Apache-2.0 OR MIT
# Inputs of the SupraSeal and cuzk ABI tests: a synthetic PoRep-shaped key (2^LG rows, default
# 2^12) with two witnesses and their public inputs, made by the CLI (a test key, not a ceremony).
if(NOT DEFINED LG)
  set(LG 12)
endif()
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${PROOFPIPE} setup --synthetic porep --lg ${LG} --partitions 2 --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "proofpipe setup failed (${rc}):\n${out}\n${err}")
endif()
