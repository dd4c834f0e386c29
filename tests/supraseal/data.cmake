# Inputs of the SupraSeal ABI tests: a synthetic PoRep-shaped key (2^12 rows) with two witnesses
# and their public inputs, made by the CLI (a test key, not a ceremony).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${PROOFPIPE} setup --synthetic porep --lg 12 --partitions 2 --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "proofpipe setup failed (${rc}):\n${out}\n${err}")
endif()
