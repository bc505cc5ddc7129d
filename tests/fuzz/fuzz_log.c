/* HDF5 logs as the verbs read them. One source, one target per verb
 * (FUZZ_VERB): the input is written as a .h5 file and the verb run on it
 * in-process, as the program would:
 *   info    sensim info LOG [--json]
 *   inject  sensim inject RIG LOG -o OUT   (an IMU and a GNSS)
 *   allan   sensim allan --input LOG --sensor imu
 *   fit     sensim fit imu LOG --sensor imu -o OUT.yaml
 *   judge   sensim judge LOG -o OUT
 *   vepd    sensim_vepd_read_log (what `vepd --real DIR` reads per file) */
#include "fuzz.h"
#include "sensim/metrics.h"

#include <string.h>

#ifndef FUZZ_VERB
#error "build with -DFUZZ_VERB=\"info\" (or inject, allan, fit, judge, vepd)"
#endif

static const char rig[] = "seed: 3\n"
                          "sensors:\n"
                          "  - name: imu\n"
                          "    type: imu\n"
                          "    rate_hz: 100\n"
                          "    gyro: { noise_density: 1.0e-3, random_walk: 1.0e-5 }\n"
                          "    accel: { noise_density: 2.0e-3 }\n"
                          "  - name: gnss\n"
                          "    type: gnss\n"
                          "    rate_hz: 5\n"
                          "    origin_lla: [43.0731, -89.4012, 260.0]\n"
                          "    position_noise: { model: gaussian, sigma: 0.3 }\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *rigpath;
    if (!rigpath) {
        static char keep[512];
        strcpy(keep, fuzz_write("rig.yaml", (const uint8_t *)rig, sizeof rig - 1));
        rigpath = keep;
    }
    char in[512], out[512];
    strcpy(in, fuzz_write("in.h5", data, size));
    strcpy(out, fuzz_path("out"));
    const char *verb = FUZZ_VERB;
    if (!strcmp(verb, "info")) {
        fuzz_cli("info", in, NULL);
        fuzz_cli("info", in, "--json", NULL);
    } else if (!strcmp(verb, "inject")) {
        fuzz_cli("inject", rigpath, in, "-o", out, NULL);
    } else if (!strcmp(verb, "allan")) {
        fuzz_cli("allan", "--input", in, "--sensor", "imu", NULL);
    } else if (!strcmp(verb, "fit")) {
        fuzz_cli("fit", "imu", in, "--sensor", "imu", "-o", out, NULL);
    } else if (!strcmp(verb, "judge")) {
        fuzz_cli("judge", in, "-o", out, NULL);
    } else {
        sensim_vepd_series s;
        if (sensim_vepd_read_log(in, NULL, &s) == SENSIM_OK)
            sensim_vepd_series_free(&s);
    }
    fuzz_clean("rig.yaml");
    return 0;
}
