/* `sensim export LOG -g GROUP --format euroc|tum`: an IMU group as EuRoC's
 * imu0/data.csv, ground truth as EuRoC's state_groundtruth_estimate0/data.csv
 * or a TUM trajectory (see export_text.h). */
#include "export_text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sensim/afile.h"
#include "sensim/log.h"

#define BLOCK 4096

static const char euroc_imu_header[] =
    "#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],a_RS_S_x [m s^-2],"
    "a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]\n";
static const char euroc_gt_header[] =
    "#timestamp, p_RS_R_x [m], p_RS_R_y [m], p_RS_R_z [m], q_RS_w [], q_RS_x [], q_RS_y [], q_RS_z [], "
    "v_RS_R_x [m s^-1], v_RS_R_y [m s^-1], v_RS_R_z [m s^-1], b_w_RS_S_x [rad s^-1], b_w_RS_S_y [rad s^-1], "
    "b_w_RS_S_z [rad s^-1], b_a_RS_S_x [m s^-2], b_a_RS_S_y [m s^-2], b_a_RS_S_z [m s^-2]\n";

/* The time origin the stamps count from: the group's time_epoch_ns, else the
 * root's, else 0 (a whole-second epoch is exact in a double). */
static int64_t epoch_of(const sensim_log *log, const char *group)
{
    double e = 0;
    const char *objs[2] = {group, "/"};
    for (int i = 0; i < 2; i++)
        if (sensim_log_has_attr(log, objs[i], "time_epoch_ns") &&
            !sensim_log_get_attr_f64(log, objs[i], "time_epoch_ns", &e, 1))
            return (int64_t)llround(e);
    sensim_error_clear();
    return 0;
}

/* Exact ns of a time t (s after the epoch). */
static int64_t stamp_ns(int64_t epoch, double t) { return epoch + (int64_t)llround(t * 1e9); }

static void put_num(FILE *f, double x) { fprintf(f, ",%.17g", x == 0 ? 0.0 : x); }

/* One ground-truth row: TUM ("s.nnnnnnnnn tx ty tz qx qy qz qw") or
 * EuRoC's state_groundtruth_estimate0 CSV. */
static void put_gt_row(FILE *f, int tum, int64_t ns, const double *p, const double *q, const double *v)
{
    if (tum) {
        /* Seconds with all nine decimals: the stamp stays exact. */
        int64_t s = ns / 1000000000, frac = ns % 1000000000;
        if (frac < 0) {
            s -= 1;
            frac += 1000000000;
        }
        fprintf(f, "%lld.%09lld %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", (long long)s, (long long)frac, p[0],
                p[1], p[2], q[1], q[2], q[3], q[0]);
        return;
    }
    fprintf(f, "%lld", (long long)ns);
    for (int k = 0; k < 3; k++)
        put_num(f, p[k]);
    for (int k = 0; k < 4; k++)
        put_num(f, q[k]);
    for (int k = 0; k < 3; k++)
        put_num(f, v[k]);
    fputs(",0,0,0,0,0,0\n", f); /* the biases are not ground truth sensim knows */
}

int export_text(const char *verb, const char *in, const char *group, const char *format, const char *out)
{
    int rc = CLI_FAIL;
    int tum = !strcmp(format, "tum");
    char target[4096];
    struct stat sb;
    /* A directory gets the file name the format's tools expect. */
    if (strcmp(out, "-") && stat(out, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(target, sizeof target, "%s/%s", out, tum ? "trajectory.txt" : "data.csv");
    else
        snprintf(target, sizeof target, "%s", out);
    sensim_log *log = sensim_log_open(in);
    sensim_afile *af = NULL;
    sensim_gt_block b = {0};
    double *t = malloc(BLOCK * sizeof *t), *w = malloc(BLOCK * 3 * sizeof *w), *a = malloc(BLOCK * 3 * sizeof *a);
    if (!log)
        goto lib_fail;
    if (!t || !w || !a) {
        cli_fail(verb, "out of memory");
        goto done;
    }
    int is_gt = !strcmp(group, "/ground_truth");
    if (!is_gt && tum) {
        cli_fail(verb, "%s: %s: --format tum writes ground truth only (-g /ground_truth)", in, group);
        goto done;
    }
    if (!sensim_log_exists(log, group)) {
        cli_fail(verb, "%s: group %s is missing", in, group);
        goto done;
    }
    int64_t epoch = epoch_of(log, group);
    FILE *f = stdout;
    if (strcmp(target, "-")) {
        if (!(af = sensim_afile_open(target)))
            goto lib_fail;
        f = sensim_afile_stream(af);
    }
    if (is_gt) {
        size_t n;
        double origin[3];
        if (sensim_gt_check(log, &n, origin) || sensim_gt_block_init(&b, BLOCK))
            goto lib_fail;
        fputs(tum ? "# timestamp tx ty tz qx qy qz qw\n" : euroc_gt_header, f);
        for (size_t r0 = 0; r0 < n; r0 += BLOCK) {
            size_t m = n - r0 < BLOCK ? n - r0 : BLOCK;
            if (sensim_gt_read(log, r0, m, &b))
                goto lib_fail;
            for (size_t i = 0; i < m; i++)
                put_gt_row(f, tum, stamp_ns(epoch, b.t[i]), b.position + 3 * i, b.orientation + 4 * i,
                           b.velocity + 3 * i);
        }
    } else {
        char pt[512], pw[512], pa[512], *type = NULL;
        snprintf(pt, sizeof pt, "%s/t", group);
        snprintf(pw, sizeof pw, "%s/angular_velocity", group);
        snprintf(pa, sizeof pa, "%s/specific_force", group);
        if (sensim_log_has_attr(log, group, "type") && !sensim_log_get_attr_string(log, group, "type", &type) &&
            strcmp(type, "imu")) {
            cli_fail(verb, "%s: %s is a %s group; --format euroc writes IMU groups and /ground_truth", in, group,
                     type);
            free(type);
            goto done;
        }
        free(type);
        size_t n, nw, na, three = 3;
        if (sensim_log_check_time(log, pt, &n) || sensim_log_check_shape(log, pw, 1, &three, &nw) ||
            sensim_log_check_shape(log, pa, 1, &three, &na))
            goto lib_fail;
        if (nw != n || na != n) {
            cli_fail(verb, "%s: %s: t has %zu rows, angular_velocity %zu, specific_force %zu", in, group, n, nw, na);
            goto done;
        }
        fputs(euroc_imu_header, f);
        for (size_t r0 = 0; r0 < n; r0 += BLOCK) {
            size_t m = n - r0 < BLOCK ? n - r0 : BLOCK;
            if (sensim_log_read_f64(log, pt, r0, m, t) || sensim_log_read_f64(log, pw, r0, m, w) ||
                sensim_log_read_f64(log, pa, r0, m, a))
                goto lib_fail;
            for (size_t i = 0; i < m; i++) {
                fprintf(f, "%lld", (long long)stamp_ns(epoch, t[i]));
                for (int k = 0; k < 3; k++)
                    put_num(f, w[3 * i + k]);
                for (int k = 0; k < 3; k++)
                    put_num(f, a[3 * i + k]);
                fputc('\n', f);
            }
        }
    }
    if (af) {
        sensim_status st = sensim_afile_commit(af);
        af = NULL;
        if (st)
            goto lib_fail;
    } else if (fflush(stdout)) {
        cli_fail(verb, "standard output: write error");
        goto done;
    }
    rc = CLI_OK;
    goto done;
lib_fail:
    cli_fail_lib(verb);
done:
    sensim_afile_abort(af);
    sensim_gt_block_free(&b);
    sensim_log_close(log);
    free(t);
    free(w);
    free(a);
    return rc;
}
