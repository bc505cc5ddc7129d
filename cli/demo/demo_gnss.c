/* Demo step: one GNSS track per bundled model on the demo circle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "demo.h"
#include "sensim/gt.h"
#include "sensim/log.h"

/* Step 4: one GNSS track per bundled model on the same circle, and its
 * horizontal error against the ground truth at each delivered stamp. */
int demo_gnss(const char *data, const char *dir, const char *gt)
{
    static const char *const models[][2] = {
        {"gnss-chrono-gauss", "Ch:Gauss, sigma 0.03 m (seed 004)"},
        {"gnss-chrono-rw", "Ch:RW, seed 004's parameters"},
        {"gnss-airsim", "AirSim HDOP low-pass (no position noise)"},
        {"gnss-zed-f9p", "u-blox ZED-F9P RTK datasheet"},
        {"gnss-standalone", "u-blox NEO-M8N standalone datasheet"},
    };
    char rig[1024], out[1024];
    double err_rms[5], err_max[5], hdop_last[5];
    size_t count[5];
    for (int m = 0; m < 5; m++) {
        snprintf(rig, sizeof rig, "%s/%s.yaml", data, models[m][0]);
        snprintf(out, sizeof out, "%s/%s.h5", dir, models[m][0]);
        if (demo_run(cmd_inject, "inject", rig, gt, "-o", out, NULL))
            return -1;
        sensim_log *truth = sensim_log_open(gt), *log = sensim_log_open(out);
        sensim_gt_cursor *cur = truth ? sensim_gt_cursor_create(truth, 65536) : NULL;
        size_t n = 0, nh = 0;
        /* The true time of each fix (t is its delivery, after the lag). */
        double *t = log ? demo_read_col(log, "/sensors/gps/t_sample", &n) : NULL;
        double *enu = log ? demo_read_col(log, "/sensors/gps/enu", &n) : NULL;
        double *hdop = log ? demo_read_col(log, "/sensors/gps/hdop", &nh) : NULL;
        int ok = cur && t && enu && n > 0;
        double s2 = 0, mx = 0;
        size_t used = 0;
        for (size_t k = 0; ok && k < n; k++) {
            sensim_gt_state g;
            if (sensim_gt_cursor_at(cur, t[k], &g)) {
                ok = 0;
                break;
            }
            double de = enu[3 * k] - g.position[0], dn = enu[3 * k + 1] - g.position[1];
            double e = sqrt(de * de + dn * dn);
            s2 += e * e;
            mx = e > mx ? e : mx;
            used++;
        }
        err_rms[m] = used ? sqrt(s2 / used) : NAN;
        err_max[m] = mx;
        hdop_last[m] = hdop && nh ? hdop[nh - 1] : NAN;
        count[m] = n;
        free(t);
        free(enu);
        free(hdop);
        sensim_gt_cursor_destroy(cur);
        sensim_log_close(truth);
        sensim_log_close(log);
        if (!ok)
            return cli_fail_lib("demo");
    }
    printf("\n   %-44s %8s %14s %14s %10s\n", "model", "epochs", "horiz. RMS (m)", "horiz. max (m)",
           "final HDOP");
    for (int m = 0; m < 5; m++)
        printf("   %-44s %8zu %14.4f %14.4f %10.3g\n", models[m][1], count[m], err_rms[m], err_max[m], hdop_last[m]);
    printf("\n   Errors are against the truth when each fix was taken (t_sample;\n"
           "   t is its delivery, after the receiver's latency), in metres before\n"
           "   conversion to WGS84 (lla in the files). The AirSim model adds no\n"
           "   position noise and reports its HDOP instead.\n");
    return 0;
}
