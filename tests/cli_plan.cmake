# SPDX-License-Identifier: Apache-2.0 OR MIT
# `proofpipe info --plan` contract: resident on an H200 at 2^27, streamed at 16 GiB, a clear
# error (exit 1) below the minimum and for bad sizes; `info` without a FILE or --plan fails.
# Run as: cmake -DPROOFPIPE=<exe> -P cli_plan.cmake
function(expect_run rc_want regex)
  execute_process(COMMAND ${PROOFPIPE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(JOIN " " args ${ARGN})
  if(NOT rc EQUAL rc_want)
    message(FATAL_ERROR "proofpipe ${args}: exit ${rc}, expected ${rc_want}\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${regex}")
    message(FATAL_ERROR "proofpipe ${args}: output does not match '${regex}':\n${out}${err}")
  endif()
endfunction()

expect_run(0 "SRS +resident.*stage\\[1\\]\\.a.*msm\\[1\\]\\.scalars" info --plan --lg 27)
expect_run(0 "budget 130\\.82 GiB" info --plan --lg 27 --device-memory 141GB)
expect_run(0 "SRS +streamed.*compute\\.srs_chunk\\[1\\]" info --plan --lg 27 --vram-budget 16GiB --gw 2)
expect_run(0 "1 with a, b, c on the device" info --plan --lg 27 --vram-budget 16GiB --gw 4)
expect_run(0 "SRS +resident" info --plan --lg 10 --vram-budget 1073741824 --gw 1)
expect_run(1 "budget 8\\.00 GiB .* below the minimum .*a, b, c of one partition \\(12\\.00 GiB\\) do not fit"
           info --plan --lg 27 --vram-budget 8GiB)
expect_run(1 "resident SRS" info --plan --lg 27 --vram-budget 16GiB --srs resident)
expect_run(1 "exceeds the device memory" info --plan --lg 20 --vram-budget 200GiB)
expect_run(1 "unknown unit" info --plan --lg 20 --vram-budget 16G)
expect_run(1 "give a FILE to describe, or --plan" info)
expect_run(107 "--lg requires --plan" info --lg 20)  # CLI11 RequiresError
