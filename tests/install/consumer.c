/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A program of a proofpipe user, built against an installed tree only (tests/install/run.sh):
 * the header's version must be the loaded library's and the one the build system reported
 * (PROOFPIPE_EXPECTED_VERSION: the CMake package's proofpipe_VERSION, or pkg-config's
 * --modversion), and a CPU engine must be created and freed. */
#include <proofpipe/proofpipe.h>

#include <stdio.h>
#include <string.h>

#ifndef PROOFPIPE_EXPECTED_VERSION
#error "build with -DPROOFPIPE_EXPECTED_VERSION=\"x.y.z\""
#endif

int main(void) {
  char header[32];
  snprintf(header, sizeof header, "%d.%d.%d", PP_VERSION_MAJOR, PP_VERSION_MINOR, PP_VERSION_PATCH);
  if (strcmp(header, PROOFPIPE_EXPECTED_VERSION) != 0) {
    fprintf(stderr, "consumer: the header says %s, the package %s\n", header, PROOFPIPE_EXPECTED_VERSION);
    return 1;
  }
  uint32_t loaded = pp_version();
  if (loaded != PP_VERSION) {
    fprintf(stderr, "consumer: the header says 0x%06x, the loaded library 0x%06x\n", (unsigned)PP_VERSION,
            (unsigned)loaded);
    return 1;
  }

  pp_engine_config config;
  pp_engine_config_default(&config);
  config.num_gpus = 0; /* the CPU prover: this runs on machines without a GPU */
  config.threads = 1;
  pp_engine* engine = NULL;
  pp_error err;
  if (pp_engine_create(&config, &engine, &err) != PP_OK || engine == NULL) {
    fprintf(stderr, "consumer: pp_engine_create: %s: %s\n", pp_status_name(err.code), err.message);
    return 1;
  }
  pp_engine_free(engine);
  printf("consumer: proofpipe %s, a CPU engine created and freed\n", header);
  return 0;
}
