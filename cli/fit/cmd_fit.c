/* sensim fit KIND: fit noise-model parameters from stationary data. Each
 * kind is one entry of the table below (fit imu here; camera, lidar and gnss
 * join the table from their own files). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_gt.h"
#include "progress.h"
#include "sensim/afile.h"
#include "fit.h"
#include "bagcli.h"
#include "cli_series.h"
#include "series_stream.h"
#include "sensim/allan.h"
#include "sensim/imufit.h"
#include "sensim/plot.h"
#include "sensim/rig.h"
#include "sensim/imu.h"
#include "sensim/log.h"
#include "sensim/stitch.h"

static const cli_opt cmd_fit_opts[] = {
    {'s', "sensor", "NAME", "the IMU group in the log (required for a log)"},
    {'t', "topic", "TOPIC", "a sensor_msgs/Imu topic of a ROS 1 bag or rosbag2\n"
                            "recording instead (header-stamp order, rate from the\n"
                            "median interval; the kalibr rostopic)"},
    {'o', "output", "FILE", "rig YAML with an imu sensor (gyro:/accel: blocks, SI)"},
    {'k', "kalibr", "FILE", "kalibr imu.yaml (noise densities and random walks, the\n"
                            "mean of the axes; an axis whose term is not\n"
                            "identified gives its upper bound, flagged in a comment)"},
    {CLI_NOSHORT('T'), "rostopic", "TOPIC", "the kalibr file's rostopic (default: --topic, else /imu0)"},
    {'p', "plot", "FILE.svg", "Allan-deviation plot with intervals and fitted terms\n"
                              "(FILE-gyro.svg and FILE-accel.svg when both exist)"},
    {'c', "confidence", "P", "two-sided level of the intervals (default 0.95)"},
    {'g', "gauss-markov", NULL, "also fit white noise + one Gauss-Markov bias and write\n"
                                "gauss_markov: {sigma, tau} instead of B and K"},
    {'r', "rate", "HZ", "sample rate (default: the sensor's rate_hz, checked\n"
                        "against its timestamps)"},
    {'n', "name", "NAME", "sensor name in the YAML (default: --sensor)"},
    {CLI_NOSHORT('J'), "json", NULL, "print the fit (values, intervals, flags, classic\n"
                                     "read-offs) as JSON; otherwise a table"},
    {CLI_NOSHORT('F'), "table", "FITS.h5", "fit every LOG given and write one row a log (/fits:\n"
                                           "log, rate, gyro and accel [logs,5,3] with _lo, _hi,\n"
                                           "_flag; terms Q N B K R, axes x y z)"},
    {CLI_NOSHORT('H'), "shard", "I/N", "with --table: only the I-th of N contiguous parts of\n"
                                       "the logs (I from 0); 'sensim stitch' joins the N\n"
                                       "tables into the table of all, bit for bit"},
    {'q', "quiet", NULL, "no progress (shown on stderr only on a terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_fit_spec = {
    .verb = "fit",
    .head = "usage: sensim fit KIND [options]\n"
            "\n"
            "Fits noise-model parameters to recorded stationary data. Kinds:\n"
            "  imu     Allan-variance fit of a static IMU log\n"
            "  camera  photon transfer (EMVA 1288) from a flat-field stack\n"
            "          (sensim fit camera --help)\n"
            "  lidar   range-noise line from repeated scans of a static scene, and the\n"
            "          angular sigma on labelled planar targets\n"
            "          (sensim fit lidar --help)\n"
            "  gnss    Ch:Gauss / Gauss-Markov / Chrono Ch:RW position noise and the\n"
            "          AirSim HDOP low-pass from a standstill GNSS log\n"
            "          (sensim fit gnss LOG.h5 --sensor NAME -o FITTED.yaml [--json];\n"
            "          sensim fit gnss --help)\n"
            "\n"
            "sensim fit imu LOG.h5 --sensor NAME -o FITTED.yaml [--kalibr IMU.yaml [--rostopic T]]\n"
            "sensim fit imu BAG --topic TOPIC [-o FITTED.yaml] [--kalibr IMU.yaml]\n"
            "               [--plot ADEV.svg] [--confidence P] [--gauss-markov] [--json]\n"
            "               [--rate HZ] [--name NAME]\n"
            "sensim fit imu LOG.h5... --sensor NAME --table FITS.h5 [--shard I/N]\n"
            "\n"
            "  Computes the overlapping Allan deviation (octave taus) of each gyro and\n"
            "  accelerometer axis of /sensors/NAME and fits the IEEE Std 952 terms\n"
            "  quantization Q, white noise N, bias instability B, rate random walk K and\n"
            "  rate ramp R by weighted least squares on the Allan variance, each with a\n"
            "  confidence interval; terms the data cannot identify are named, never NaN.\n"
            "\n",
    .opts = cmd_fit_opts,
    .column = 24,
    .tail = "\n"
            "Exit status: 0 success, 1 failure, 2 usage error (also for an unknown KIND).\n",
};

typedef struct fit_kind {
    const char *name;
    int (*run)(int argc, char **argv);
} fit_kind;

static int fit_imu(int argc, char **argv);

/* One line per kind. */
static const fit_kind kinds[] = {
    {"imu", fit_imu},
    {"camera", cli_fit_camera},
    {"lidar", cli_fit_lidar},
    {"gnss", cli_fit_gnss},
    {NULL, NULL},
};

int cmd_fit(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("fit", "which kind? (imu, camera, lidar, gnss)");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        cli_print_help("fit", stdout);
        return CLI_OK;
    }
    for (const fit_kind *k = kinds; k->name; k++)
        if (!strcmp(argv[1], k->name))
            return k->run(argc - 1, argv + 1);
    return cli_usage_error("fit", "unknown kind '%s' (known: imu, camera, lidar, gnss)", argv[1]);
}

int cli_fit_input(const char *verb, int argc, char **argv, const char *what, const char *out, const char **in)
{
    if (optind != argc - 1)
        return cli_usage_error(verb, "expected one %s", what);
    if (!out)
        return cli_usage_error(verb, "missing -o OUTPUT.yaml");
    *in = argv[optind];
    return cli_check_output(verb, out, *in, NULL);
}

/* ---- fit imu ---- */

enum { INSTR_GYRO, INSTR_ACCEL, NINSTR };
static const char *const instr_key[NINSTR] = {"gyro", "accel"};
static const char *const instr_quantity[NINSTR] = {"angular_velocity", "specific_force"};
static const char *const axis_names[3] = {"x", "y", "z"};
/* SI units of Q, N, B, K, R per instrument. */
static const char *const term_units[NINSTR][SENSIM_TERM_COUNT] = {
    {"rad", "rad/s/sqrt(Hz)", "rad/s", "rad/s^2/sqrt(Hz)", "rad/s^2"},
    {"m/s", "m/s^2/sqrt(Hz)", "m/s^2", "m/s^3/sqrt(Hz)", "m/s^3"}};

typedef struct instr_fit {
    int present;
    size_t n, nm;
    double rate;
    sensim_allan_point *pt; /* [3][nm] */
    sensim_imu_fit fit[3];
    sensim_gm_fit gm[3];
} instr_fit;

static const char *flag_name(sensim_fit_flag f)
{
    return f == SENSIM_FIT_OK ? "ok" : f == SENSIM_FIT_UPPER ? "upper_bound" : "unresolved";
}

/* Writes text produced by fn to path through a temporary file. */
static sensim_status write_atomic(const char *path, sensim_status (*fn)(FILE *, const void *), const void *ctx)
{
    sensim_afile *a = sensim_afile_open(path);
    if (!a)
        return sensim_last_status();
    sensim_status st = fn(sensim_afile_stream(a), ctx);
    if (st) {
        sensim_afile_abort(a);
        return sensim_error_prefix(st, "%s", path);
    }
    return sensim_afile_commit(a);
}

typedef struct out_ctx {
    const instr_fit *in;
    const char *name, *source, *sensor, *rostopic;
    int gm;
    double confidence;
    const char *topic; /* the recording's topic, or NULL */
} out_ctx;

static double mean3(const double v[3])
{
    return (v[0] + v[1] + v[2]) / 3;
}

/* The rig's quantization is the rate step q of the integrated output; the
 * model reads the integral to +-q dt / 2 (IEEE 952 angle quantization), so
 * the Allan Q (tau^-2 term) is q / (sqrt(12) f) and q = sqrt(12) Q f. */
static double term_yaml_value(int k, const sensim_fit_param *p, double rate)
{
    /* Only identified terms go into the simulation config: a term consistent
     * with zero would inject noise the data does not show. */
    if (p->flag != SENSIM_FIT_OK)
        return 0;
    return k == SENSIM_TERM_Q ? sqrt(12.0) * p->value * rate : p->value;
}

/* The fitted terms as the rig's fields of one instrument. */
static double *term_field(sensim_triax_params *t, int k)
{
    switch (k) {
    case SENSIM_TERM_Q: return t->quantization;
    case SENSIM_TERM_N: return t->noise_density;
    case SENSIM_TERM_B: return t->bias_instability;
    case SENSIM_TERM_K: return t->random_walk;
    default: return t->rate_ramp;
    }
}

static sensim_status write_rig_yaml(FILE *f, const void *vctx)
{
    const out_ctx *c = vctx;
    double rate = c->in[INSTR_GYRO].present ? c->in[INSTR_GYRO].rate : c->in[INSTR_ACCEL].rate;
    fprintf(f, "# Fitted by sensim fit imu from %s (sensor %s).\n", c->source, c->sensor);
    fprintf(f, "# Overlapping Allan deviation, octave taus; weighted least squares on the\n"
               "# Allan variance (IEEE Std 952 terms). Per axis, value [%.0f%% interval]:\n",
            100 * c->confidence);
    sensim_imu_params p = sensim_imu_default_params();
    for (int i = 0; i < NINSTR; i++) {
        const instr_fit *in = &c->in[i];
        if (!in->present)
            continue;
        for (int a = 0; a < 3; a++) {
            fprintf(f, "#   %s %s:", instr_key[i], axis_names[a]);
            for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
                const sensim_fit_param *fp = &in->fit[a].term[k];
                fprintf(f, " %s %.3g [%.3g, %.3g]%s", sensim_imu_term_symbol((sensim_imu_term)k), fp->value, fp->lo,
                        fp->hi, fp->flag == SENSIM_FIT_OK ? "" : fp->flag == SENSIM_FIT_UPPER ? "(ub)" : "(n/a)");
            }
            fputc('\n', f);
            if (*in->fit[a].note)
                fprintf(f, "#     %s\n", in->fit[a].note);
        }
    }
    fprintf(f, "#   (ub): consistent with zero, only the upper bound is known; (n/a): not identifiable.\n"
               "# Only identified terms are written below (others left out, 0); more data extends the tau range.\n");
    for (int i = 0; i < NINSTR; i++) {
        const instr_fit *in = &c->in[i];
        if (!in->present)
            continue;
        const int m = i == INSTR_GYRO ? SENSIM_GYRO : SENSIM_ACCEL;
        sensim_triax_params *t = &p.triax[m];
        p.present[m] = 1;
        fprintf(f, "# %s units (SI):", instr_key[i]);
        for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
            if (c->gm && (k == SENSIM_TERM_B || k == SENSIM_TERM_K))
                continue;
            double *v = term_field(t, k);
            for (int a = 0; a < 3; a++)
                v[a] = c->gm && k == SENSIM_TERM_N ? in->gm[a].white.value
                                                   : term_yaml_value(k, &in->fit[a].term[k], in->rate);
            if (k == SENSIM_TERM_Q)
                fprintf(f, " quantization %s (the rate step, = sqrt(12) Q rate_hz, Q in %s);",
                        term_units[i][SENSIM_TERM_B], term_units[i][SENSIM_TERM_Q]);
            else
                fprintf(f, " %s %s;", sensim_imu_term_key((sensim_imu_term)k), term_units[i][k]);
        }
        fputc('\n', f);
        if (c->gm) {
            double tau[3];
            for (int a = 0; a < 3; a++) {
                t->gm_sigma[a] = in->gm[a].sigma.value;
                tau[a] = in->gm[a].tau.value;
            }
            /* The model takes one correlation time: the geometric mean. */
            const double g = cbrt(tau[0] * tau[1] * tau[2]);
            for (int a = 0; a < 3; a++)
                t->gm_tau[a] = g;
            fprintf(f, "#   gauss_markov: sigma %s, tau s (the geometric mean of the axes' %.4g, %.4g, %.4g)\n",
                    term_units[i][SENSIM_TERM_B], tau[0], tau[1], tau[2]);
        }
    }
    sensim_ywriter *w = sensim_ywriter_create(f);
    if (!w)
        return sensim_last_status();
    sensim_sensor s;
    sensim_sensor_init(&s, c->name, rate);
    sensim_rig_write_yaml_begin(w, 1, NULL);
    sensim_imu_write_yaml(w, &s, &p);
    return sensim_ywriter_close(w);
}

/* kalibr takes one value per instrument, the mean over the axes. An axis
 * whose term the fit did not identify (flag upper_bound or unresolved)
 * contributes its upper bound, not its point estimate: kalibr uses these
 * as process noise, where too small a value makes the estimator
 * overconfident, so the file never states less than the data support; a
 * comment names the axes and says so. */
static double kalibr_term(FILE *f, const char *key, const instr_fit *in, int term, const char *unit, double confidence)
{
    double v[3];
    char axes[16] = "";
    for (int ax = 0; ax < 3; ax++) {
        const sensim_fit_param *p = &in->fit[ax].term[term];
        int ok = p->flag == SENSIM_FIT_OK || !isfinite(p->hi);
        v[ax] = ok ? p->value : p->hi;
        if (!ok) {
            size_t len = strlen(axes);
            snprintf(axes + len, sizeof axes - len, "%s%s", len ? "," : "", axis_names[ax]);
        }
    }
    fprintf(f, "#   %s: %s", key, unit);
    if (*axes)
        fprintf(f, "; not identified on axis %s: the %.0f%% upper bound used there (conservative)", axes,
                100 * confidence);
    fputc('\n', f);
    return mean3(v);
}

static sensim_status write_kalibr(FILE *f, const void *vctx)
{
    const out_ctx *c = vctx;
    const instr_fit *g = &c->in[INSTR_GYRO], *a = &c->in[INSTR_ACCEL];
    fprintf(f,
            "# kalibr IMU noise model, fitted by sensim fit imu from %s (sensor %s);\n"
            "# the mean of the three axes (continuous-time densities, SI). Where the fit\n"
            "# could not identify a term on an axis, that axis contributes its upper\n"
            "# bound (said below), never a point estimate the data do not support.\n",
            c->source, c->sensor);
    sensim_kalibr_imu k = {c->rostopic ? c->rostopic : c->topic ? c->topic : "/imu0",
                           g->present ? g->rate : a->rate, g->present, a->present, 0, 0, 0, 0};
    if (a->present) {
        k.accelerometer_noise_density = kalibr_term(f, "accelerometer_noise_density", a, SENSIM_TERM_N,
                                                    term_units[INSTR_ACCEL][SENSIM_TERM_N], c->confidence);
        k.accelerometer_random_walk = kalibr_term(f, "accelerometer_random_walk", a, SENSIM_TERM_K,
                                                  term_units[INSTR_ACCEL][SENSIM_TERM_K], c->confidence);
    }
    if (g->present) {
        k.gyroscope_noise_density = kalibr_term(f, "gyroscope_noise_density", g, SENSIM_TERM_N,
                                                term_units[INSTR_GYRO][SENSIM_TERM_N], c->confidence);
        k.gyroscope_random_walk = kalibr_term(f, "gyroscope_random_walk", g, SENSIM_TERM_K,
                                              term_units[INSTR_GYRO][SENSIM_TERM_K], c->confidence);
    }
    sensim_ywriter *w = sensim_ywriter_create(f);
    if (!w)
        return sensim_last_status();
    sensim_imu_write_kalibr(w, &k);
    return sensim_ywriter_close(w);
}

static void print_json(FILE *f, const out_ctx *c)
{
    fputs("{\"source\": ", f);
    cli_json_str(f, c->source);
    fputs(", \"sensor\": ", f);
    cli_json_str(f, c->sensor);
    fprintf(f, ", \"confidence\": %s, \"instruments\": {", CLI_JSON_G(c->confidence, 6));
    int first = 1;
    for (int i = 0; i < NINSTR; i++) {
        const instr_fit *in = &c->in[i];
        if (!in->present)
            continue;
        fprintf(f, "%s\"%s\": {\"samples\": %zu, \"rate_hz\": %s, \"axes\": [", first ? "" : ", ", instr_key[i], in->n,
                CLI_JSON_G(in->rate, 10));
        first = 0;
        for (int a = 0; a < 3; a++) {
            const sensim_imu_fit *ft = &in->fit[a];
            fprintf(f, "%s{\"axis\": \"%s\", \"chi2\": %s, \"dof\": %d, \"scale\": %s, \"note\": ", a ? ", " : "",
                    axis_names[a], CLI_JSON_G(ft->chi2, 6), ft->dof, CLI_JSON_G(ft->scale, 6));
            cli_json_str(f, ft->note);
            for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
                const sensim_fit_param *p = &ft->term[k];
                fprintf(f, ", \"%s\": {\"value\": %s, \"lo\": %s, \"hi\": %s, \"status\": \"%s\", \"classic\": %s}",
                        sensim_imu_term_key((sensim_imu_term)k), CLI_JSON_G(p->value, 8), CLI_JSON_G(p->lo, 8),
                        CLI_JSON_G(p->hi, 8), flag_name(p->flag), CLI_JSON_G(ft->classic[k], 8));
            }
            if (c->gm) {
                const sensim_gm_fit *g = &in->gm[a];
                fprintf(f,
                        ", \"gauss_markov\": {\"sigma\": [%s, %s, %s], \"tau\": [%s, %s, %s], "
                        "\"white\": [%s, %s, %s], \"note\": ",
                        CLI_JSON_G(g->sigma.value, 8), CLI_JSON_G(g->sigma.lo, 8), CLI_JSON_G(g->sigma.hi, 8),
                        CLI_JSON_G(g->tau.value, 8), CLI_JSON_G(g->tau.lo, 8), CLI_JSON_G(g->tau.hi, 8),
                        CLI_JSON_G(g->white.value, 8), CLI_JSON_G(g->white.lo, 8), CLI_JSON_G(g->white.hi, 8));
                cli_json_str(f, g->note);
                fputc('}', f);
            }
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("}}\n", f);
}

static void print_table(FILE *f, const out_ctx *c)
{
    for (int i = 0; i < NINSTR; i++) {
        const instr_fit *in = &c->in[i];
        if (!in->present)
            continue;
        fprintf(f, "%s: %zu samples at %g Hz, %.0f%% intervals\n", instr_key[i], in->n, in->rate, 100 * c->confidence);
        for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
            fprintf(f, "  %s %-16s", sensim_imu_term_symbol((sensim_imu_term)k), term_units[i][k]);
            for (int a = 0; a < 3; a++) {
                const sensim_fit_param *p = &in->fit[a].term[k];
                fprintf(f, "  %s %.3e [%.2e, %.2e]%-4s", axis_names[a], p->value, p->lo, p->hi,
                        p->flag == SENSIM_FIT_OK ? "" : p->flag == SENSIM_FIT_UPPER ? " ub" : " n/a");
            }
            fprintf(f, "   classic x %.3e\n", in->fit[0].classic[k]);
        }
        for (int a = 0; a < 3; a++)
            if (*in->fit[a].note)
                fprintf(f, "  %s: %s\n", axis_names[a], in->fit[a].note);
        if (c->gm)
            for (int a = 0; a < 3; a++)
                fprintf(f, "  %s Gauss-Markov: sigma %.3e [%.2e, %.2e], tau %.3g s [%.3g, %.3g], N %.3e%s%s\n",
                        axis_names[a], in->gm[a].sigma.value, in->gm[a].sigma.lo, in->gm[a].sigma.hi,
                        in->gm[a].tau.value, in->gm[a].tau.lo, in->gm[a].tau.hi, in->gm[a].white.value,
                        *in->gm[a].note ? "; " : "", in->gm[a].note);
    }
    fputs("classic: each term read off axis x's Allan deviation at the one tau where the\n"
          "local slope is nearest the term's own (-1 Q, -1/2 N, 0 B, +1/2 K, +1 R), the\n"
          "textbook way. It is a value only where that term dominates; for a term the fit\n"
          "marks ub or n/a, the slope matched at a tau another term or the long-tau\n"
          "scatter made, so the classic figure can be far off: use the fit's bound.\n",
          f);
}

static sensim_status plot_instr(const char *path, const instr_fit *in, int i, const char *sensor)
{
    char title[160], ylab[64];
    snprintf(title, sizeof title, "Allan deviation of %s %s", sensor, instr_key[i]);
    snprintf(ylab, sizeof ylab, "OADEV (%s)", i == INSTR_GYRO ? "rad/s" : "m/s^2");
    sensim_plot *pl = sensim_plot_create(title, "tau (s)", ylab);
    if (!pl)
        return sensim_last_status();
    size_t nm = in->nm, nf = 200;
    double *buf = malloc((4 * nm + 2 * nf) * sizeof *buf);
    sensim_status st = buf ? SENSIM_OK : sensim_error(SENSIM_ENOMEM, "out of memory");
    static const unsigned colors[3] = {0x0072B2, 0xD55E00, 0x009E73};
    for (int a = 0; a < 3 && !st; a++) {
        double *t = buf, *d = t + nm, *lo = d + nm, *hi = lo + nm, *ft = hi + nm, *fy = ft + nf;
        for (size_t k = 0; k < nm; k++) {
            const sensim_allan_point *q = &in->pt[a * nm + k];
            t[k] = q->tau;
            d[k] = q->dev;
            lo[k] = q->lo;
            hi[k] = q->hi;
        }
        char lab[32];
        snprintf(lab, sizeof lab, "%s", axis_names[a]);
        st = sensim_plot_add(pl, lab, t, d, lo, hi, nm, SENSIM_PLOT_POINTS | SENSIM_PLOT_ERRORBARS, colors[a]);
        /* Only the identified terms are drawn (their sum, and each alone):
         * a term with an upper bound only, or unresolved, is not a value to
         * plot. The table, JSON and YAML comments keep every term. */
        double par[SENSIM_TERM_COUNT];
        for (int k = 0; k < SENSIM_TERM_COUNT; k++)
            par[k] = in->fit[a].term[k].flag == SENSIM_FIT_OK ? in->fit[a].term[k].value : 0;
        for (size_t j = 0; j < nf; j++) {
            ft[j] = t[0] * pow(t[nm - 1] / t[0], (double)j / (nf - 1));
            fy[j] = sqrt(sensim_imu_avar(par, ft[j]));
        }
        snprintf(lab, sizeof lab, "%s fit (identified)", axis_names[a]);
        if (!st)
            st = sensim_plot_add(pl, lab, ft, fy, NULL, NULL, nf, SENSIM_PLOT_LINE, colors[a]);
        /* Each fitted term of this axis on its own, dashed. */
        for (int k = 0; k < SENSIM_TERM_COUNT && !st; k++) {
            if (!(par[k] > 0))
                continue;
            double one[SENSIM_TERM_COUNT] = {0};
            one[k] = par[k];
            for (size_t j = 0; j < nf; j++)
                fy[j] = sqrt(sensim_imu_avar(one, ft[j]));
            snprintf(lab, sizeof lab, "%s %s = %.3g", axis_names[a], sensim_imu_term_symbol((sensim_imu_term)k), par[k]);
            st = sensim_plot_add(pl, lab, ft, fy, NULL, NULL, nf, SENSIM_PLOT_DASHED, colors[a]);
        }
    }
    if (!st)
        st = sensim_plot_write_svg(pl, path, 900, 640);
    free(buf);
    sensim_plot_destroy(pl);
    return st;
}

static char *suffixed(const char *path, const char *suffix)
{
    size_t n = strlen(path);
    char *out = malloc(n + strlen(suffix) + 2);
    if (!out)
        return NULL;
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        dot = path + n;
    sprintf(out, "%.*s-%s%s", (int)(dot - path), path, suffix, dot);
    return out;
}

/* The Allan deviations and noise fits of each instrument the IMU has
 * (gyro, accelerometer), streamed from the log or recording. */
static sensim_status fit_instruments(instr_fit in[NINSTR], const char *input, const char *sensor, const char *topic,
                                     double rate, double confidence, int gm, int quiet)
{
    sensim_status st = SENSIM_OK;
    int any = 0;
    /* Progress by stage: each instrument read, its deviations, its fits. */
    cli_progress prog;
    cli_progress_init(&prog, "fit imu", quiet);
    for (int i = 0; i < NINSTR && !st; i++) {
        /* Streamed from the file: memory does not grow with the log. */
        cli_stream *s = NULL;
        cli_progress_update(&prog, instr_quantity[i], (double)i / NINSTR);
        st = topic ? cli_stream_open_bag(input, topic, &instr_quantity[i], 1, rate, &s)
                   : cli_stream_open_h5(input, sensor, &instr_quantity[i], 1, rate, &s);
        if (st == SENSIM_ENOTFOUND && strstr(sensim_last_error(), instr_quantity[i])) {
            st = SENSIM_OK; /* this IMU has no such instrument */
            continue;
        }
        if (st)
            break;
        sensim_allan_opts o = sensim_allan_default_opts();
        const size_t n = cli_stream_n(s);
        o.tau0 = 1 / cli_stream_rate(s);
        o.confidence = confidence;
        size_t *m = NULL, nm = 0;
        cli_progress_update(&prog, instr_quantity[i], (i + 0.3) / NINSTR);
        if (!(st = sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, n, &m, &nm))) {
            in[i].pt = malloc(3 * nm * sizeof *in[i].pt);
            sensim_allan_source src = cli_stream_source(s);
            st = in[i].pt ? sensim_allan_compute_stream(&src, &o, m, nm, cli_stream_budget(), in[i].pt)
                          : sensim_error(SENSIM_ENOMEM, "out of memory");
            if (st && !cli_stream_failed(s))
                sensim_error_prefix(st, "%s: /sensors/%s/%s", input, sensor, instr_quantity[i]);
        }
        in[i].present = 1;
        in[i].n = n;
        in[i].nm = nm;
        in[i].rate = cli_stream_rate(s);
        free(m);
        cli_stream_close(s);
        sensim_imu_fit_opts fo = sensim_imu_fit_default_opts();
        fo.confidence = confidence;
        cli_progress_update(&prog, instr_quantity[i], (i + 0.8) / NINSTR);
        for (int a = 0; a < 3 && !st; a++) {
            st = sensim_imu_fit_allan(in[i].pt + a * nm, nm, &fo, &in[i].fit[a]);
            if (!st && gm)
                st = sensim_gm_fit_allan(in[i].pt + a * nm, nm, confidence, &in[i].gm[a]);
            if (st)
                sensim_error_prefix(st, "%s: %s axis %s", input, instr_key[i], axis_names[a]);
        }
        any = 1;
    }
    cli_progress_done(&prog);
    if (!st && !any)
        st = topic ? sensim_error(SENSIM_ENOTFOUND, "%s: topic '%s' has neither angular_velocity nor specific_force",
                                  input, topic)
                   : sensim_error(SENSIM_ENOTFOUND, "%s: /sensors/%s has neither angular_velocity nor specific_force",
                                  input, sensor);
    return st;
}

/* The plots, the rig YAML, the kalibr YAML and the table or JSON. */
static sensim_status write_outputs(const out_ctx *c, const char *plot, const char *output, const char *kalibr,
                                   int json)
{
    const instr_fit *in = c->in;
    const char *sensor = c->sensor;
    sensim_status st = SENSIM_OK;
    if (plot) {
        int both = in[INSTR_GYRO].present && in[INSTR_ACCEL].present;
        for (int i = 0; i < NINSTR && !st; i++) {
            if (!in[i].present)
                continue;
            char *p = both ? suffixed(plot, instr_key[i]) : NULL;
            st = plot_instr(p ? p : plot, &in[i], i, sensor);
            free(p);
        }
    }
    if (!st && output)
        st = write_atomic(output, write_rig_yaml, c);
    if (!st && kalibr)
        st = write_atomic(kalibr, write_kalibr, c);
    if (!st) {
        if (json)
            print_json(stdout, c);
        else
            print_table(stdout, c);
    }
    return st;
}

/* --table: the fits of logs [first, end) of the n given, one row a log;
 * an instrument a log lacks has NaN values and flag 255. The whole list of
 * logs is an attribute, so that sensim stitch joins only parts of one job. */
typedef struct fit_table_job {
    const char *const *logs;
    int64_t n, index, count;
    int sharded;
    const char *sensor, *topic, *table, *created;
    double rate, confidence;
    int quiet;
} fit_table_job;

static sensim_status fit_table_write(const fit_table_job *j, int64_t first, int64_t end, const double *rate,
                                     double *const val[NINSTR][4])
{
    const size_t rows = (size_t)(end - first), tail[2] = {SENSIM_TERM_COUNT, 3};
    sensim_log *L = sensim_log_create(j->table, j->created);
    uint64_t *idx = malloc((rows ? rows : 1) * sizeof *idx);
    uint8_t *flag = malloc((rows ? rows : 1) * 15);
    size_t len = 1;
    for (int64_t k = 0; k < j->n; k++)
        len += strlen(j->logs[k]) + 1;
    char *all = malloc(len), path[64];
    sensim_status st =
        !L ? sensim_last_status() : !idx || !flag || !all ? sensim_error(SENSIM_ENOMEM, "out of memory") : SENSIM_OK;
    for (size_t r = 0; idx && r < rows; r++)
        idx[r] = (uint64_t)first + r;
    if (all) {
        all[0] = 0;
        for (int64_t k = 0; k < j->n; k++)
            strcat(strcat(all, j->logs[k]), "\n");
    }
    if (!st && !(st = sensim_log_group(L, "/fits")) &&
        !(st = sensim_log_write(L, "/fits/log", SENSIM_U64, rows, 0, NULL, idx, "")))
        st = sensim_log_write(L, "/fits/rate", SENSIM_F64, rows, 0, NULL, rate, "Hz");
    static const char *const part[4] = {"", "_lo", "_hi", "_flag"};
    for (int i = 0; i < NINSTR && !st; i++)
        for (int q = 0; q < 4 && !st; q++) {
            snprintf(path, sizeof path, "/fits/%s%s", instr_key[i], part[q]);
            if (q < 3) {
                st = sensim_log_write(L, path, SENSIM_F64, rows, 2, tail, val[i][q], "");
                continue;
            }
            for (size_t e = 0; e < rows * 15; e++)
                flag[e] = (uint8_t)val[i][3][e];
            st = sensim_log_write(L, path, SENSIM_U8, rows, 2, tail, flag, "");
        }
    const int64_t sh[2] = {j->index, j->count}, rg[2] = {first, end};
    if (!st && !(st = sensim_log_set_attr_string(L, "/fits", "logs", all)) &&
        !(st = sensim_log_set_attr_string(L, "/fits", "sensor", j->sensor)) &&
        !(st = sensim_log_set_attr_f64(L, "/fits", "confidence", &j->confidence, 1)) &&
        !(st = sensim_log_set_attr_string(L, "/fits", "terms", "Q,N,B,K,R")) &&
        !(st = sensim_log_set_attr_string(L, "/fits", "flags", "0 ok, 1 upper_bound, 2 unresolved, 255 no such "
                                                              "instrument")) &&
        j->sharded && !(st = sensim_log_set_attr_string(L, "/", "shard_kind", "rows")) &&
        !(st = sensim_log_set_attr_i64(L, "/", "shard", sh, 2)) &&
        !(st = sensim_log_set_attr_i64(L, "/", "shard_range", rg, 2)))
        st = sensim_log_set_attr_i64(L, "/", "shard_total", &j->n, 1);
    free(idx);
    free(flag);
    free(all);
    if (!st)
        return sensim_log_commit(L);
    sensim_log_close(L);
    return st;
}

static int fit_table(const fit_table_job *j)
{
    int64_t first, end;
    sensim_shard_split(j->n, j->count, j->index, &first, &end);
    if (first == end)
        return cli_fail("fit", "shard %lld of %lld: no log left for it (%lld logs)", (long long)j->index,
                        (long long)j->count, (long long)j->n);
    const size_t rows = (size_t)(end - first);
    double *buf = malloc(rows * (1 + NINSTR * 4 * 15) * sizeof *buf), *val[NINSTR][4];
    if (!buf)
        return cli_fail("fit", "out of memory");
    for (int i = 0; i < NINSTR; i++)
        for (int q = 0; q < 4; q++)
            val[i][q] = buf + rows * (1 + (size_t)(i * 4 + q) * 15);
    sensim_status st = SENSIM_OK;
    for (size_t r = 0; r < rows && !st; r++) {
        instr_fit in[NINSTR];
        memset(in, 0, sizeof in);
        const char *log = j->logs[first + (int64_t)r];
        st = fit_instruments(in, log, j->sensor, j->topic, j->rate, j->confidence, 0, j->quiet);
        buf[r] = in[INSTR_GYRO].present ? in[INSTR_GYRO].rate : in[INSTR_ACCEL].rate;
        for (int i = 0; i < NINSTR; i++)
            for (int t = 0; t < SENSIM_TERM_COUNT; t++)
                for (int a = 0; a < 3; a++) {
                    const sensim_fit_param *f = &in[i].fit[a].term[t];
                    const size_t e = r * 15 + (size_t)t * 3 + (size_t)a;
                    val[i][0][e] = in[i].present ? f->value : NAN;
                    val[i][1][e] = in[i].present ? f->lo : NAN;
                    val[i][2][e] = in[i].present ? f->hi : NAN;
                    val[i][3][e] = in[i].present ? (double)f->flag : 255;
                }
        for (int i = 0; i < NINSTR; i++)
            free(in[i].pt);
        if (!st)
            printf("%s: fitted (%s)\n", log, in[INSTR_GYRO].present && in[INSTR_ACCEL].present ? "gyro, accel"
                                                : in[INSTR_GYRO].present ? "gyro" : "accel");
    }
    if (!st)
        st = fit_table_write(j, first, end, buf, val);
    free(buf);
    return st ? cli_fail_lib("fit") : CLI_OK;
}

static int fit_table_run(fit_table_job *j, const char *const *logs, int n, const char *sensor, const char *topic,
                         double rate, double confidence, int quiet, int argc, char **argv)
{
    for (int k = 0; k < n; k++)
        if (cli_check_output("fit", j->table, logs[k], NULL))
            return CLI_FAIL;
    char *created = cli_join_args("sensim", argc, argv);
    j->logs = logs;
    j->n = n;
    j->sensor = sensor;
    j->topic = topic;
    j->rate = rate;
    j->confidence = confidence;
    j->quiet = quiet;
    j->created = created;
    int rc = fit_table(j);
    free(created);
    return rc;
}

static int fit_imu(int argc, char **argv)
{
    const char *sensor = NULL, *output = NULL, *kalibr = NULL, *plot = NULL, *name = NULL, *input = NULL,
               *topic = NULL, *rostopic = NULL;
    double confidence = 0.95, rate = 0;
    int gm = 0, json = 0, quiet = 0, c;
    fit_table_job tj = {.count = 1};
    const cli_to to[] = {CLI_STR("sensor", &sensor), CLI_STR("topic", &topic), CLI_STR("output", &output),
                         CLI_STR("kalibr", &kalibr), CLI_STR("plot", &plot), CLI_FLAG("gauss-markov", &gm),
                         CLI_STR("name", &name), CLI_FLAG("json", &json), CLI_STR("table", &tj.table),
                         CLI_FLAG("quiet", &quiet),
                         CLI_REAL("confidence", &confidence, 0, 1,
                                  "--confidence '%s': expected a number between 0 and 1"),
                         CLI_REAL("rate", &rate, 0, INFINITY, "--rate '%s': expected a positive number of Hz"), {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_fit_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'T':
            /* A ROS name: it goes into the YAML unquoted. */
            if (!*optarg ||
                strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/~") != strlen(optarg))
                return cli_usage_error("fit", "--rostopic '%s': expected a ROS topic name (letters, digits, _ and /)",
                                       optarg);
            rostopic = optarg;
            break;
        case 'H':
            if (sensim_shard_parse(optarg, &tj.index, &tj.count))
                return cli_usage_error("fit", "--shard: %s", sensim_last_error());
            tj.sharded = 1;
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind < argc)
        input = argv[optind++];
    if (optind < argc && !tj.table)
        return cli_usage_error("fit", "unexpected argument '%s' (several logs need --table FITS.h5)", argv[optind]);
    if (tj.sharded && !tj.table)
        return cli_usage_error("fit", "--shard needs --table FITS.h5");
    if (tj.table && (output || kalibr || plot || gm || json))
        return cli_usage_error("fit", "--table writes the fits of every log; -o, --kalibr, --plot, --gauss-markov "
                                      "and --json are for one log");
    if (!input)
        return cli_usage_error("fit", "fit imu needs a log file");
    if (sensor && topic)
        return cli_usage_error("fit", "--sensor (a log) and --topic (a recording) exclude each other");
    if (!sensor && !topic)
        return cli_usage_error("fit", cli_is_bag(input) ? "%s is a recording: name the Imu topic with --topic"
                                                        : "--sensor NAME is required (%s)", input);
    if (topic)
        sensor = topic;
    char tname[128];
    if (!name) {
        /* A YAML sensor name from the topic: "/imu0" -> "imu0". */
        const char *p = sensor + (sensor[0] == '/');
        size_t i = 0;
        for (; p[i] && i + 1 < sizeof tname; i++)
            tname[i] = p[i] == '/' ? '_' : p[i];
        tname[i] = '\0';
        name = topic ? tname : sensor;
    }
    if (cli_check_output("fit", output, input, NULL) || cli_check_output("fit", kalibr, input, NULL) ||
        cli_check_output("fit", plot, input, NULL) || cli_check_output("fit", tj.table, input, NULL))
        return CLI_FAIL;
    if (tj.table)
        return fit_table_run(&tj, (const char *const *)argv + optind - 1, argc - optind + 1, sensor, topic, rate,
                             confidence, quiet, argc, argv);

    instr_fit in[NINSTR];
    memset(in, 0, sizeof in);
    sensim_status st = fit_instruments(in, input, sensor, topic, rate, confidence, gm, quiet);
    out_ctx ctx = {in, name, input, sensor, rostopic, gm, confidence, topic};
    if (!st)
        st = write_outputs(&ctx, plot, output, kalibr, json);
    for (int i = 0; i < NINSTR; i++)
        free(in[i].pt);
    return st ? cli_fail_lib("fit") : CLI_OK;
}
