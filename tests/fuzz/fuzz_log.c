/* HDF5 logs as the verbs read them. One source, one target per verb
 * (FUZZ_VERB); the log is run through the verb in-process, as the program
 * would run it:
 *   info    sensim info LOG, sensim info LOG --json
 *   inject  sensim inject RIG LOG -o OUT   (an IMU and a GNSS)
 *   allan   sensim allan --input LOG --sensor imu
 *   fit     sensim fit imu LOG --sensor imu -o OUT.yaml
 *   judge   sensim judge LOG -o OUT
 *   vepd    sensim_vepd_read_log (what `vepd --real DIR` reads per file)
 *
 * The input is an edit script applied, through the HDF5 API, to one of the
 * real logs in tests/fuzz/corpus/log (FUZZ_LOG_BASE overrides the folder):
 * objects and attributes deleted, datasets rewritten with another type
 * (narrower, big-endian), shape or rank, rows cut to none, NaN and Inf and
 * extreme values, timestamps out of order or repeated, extents declared far
 * beyond what is stored, attributes of the wrong type, length or value.
 * The file stays valid HDF5, so what breaks is sensim's reading, not
 * libhdf5's parser: raw byte mutations of HDF5 crash libhdf5 1.10 itself
 * within seconds (a known class of upstream bugs). SENSIM_FUZZ_RAW=1 takes
 * the input as the file's bytes instead, to fuzz that layer too. */
#include "fuzz.h"
#include "sensim/metrics.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- the base logs ---- */

#define MAXBASE 16
static struct {
    uint8_t *data;
    size_t size;
} base[MAXBASE];
static int nbase;

static void load_bases(void)
{
    const char *dir = getenv("FUZZ_LOG_BASE");
    if (!dir)
        dir = "tests/fuzz/corpus/log";
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) && nbase < MAXBASE;) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".h5") || !strncmp(e->d_name, "damaged", 7))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = sz > 0 ? malloc((size_t)sz) : NULL;
        if (buf && fread(buf, 1, (size_t)sz, f) == (size_t)sz) {
            base[nbase].data = buf;
            base[nbase++].size = (size_t)sz;
        } else
            free(buf);
        fclose(f);
    }
    if (d)
        closedir(d);
    if (!nbase) {
        fprintf(stderr, "fuzz_log: no base logs in %s (run from the source root or set FUZZ_LOG_BASE)\n", dir);
        abort();
    }
}

/* ---- the edit script ---- */

typedef struct {
    const uint8_t *p;
    size_t n, i;
} script;

static unsigned take(script *s, unsigned mod)
{
    unsigned v = s->i < s->n ? s->p[s->i++] : 0;
    return mod ? v % mod : v;
}

static uint64_t take64(script *s)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++)
        v = v << 8 | take(s, 0);
    return v;
}

#define MAXOBJ 128
typedef struct {
    char name[MAXOBJ][256];
    int dset[MAXOBJ];
    int n;
} objlist;

static herr_t visit_cb(hid_t o, const char *name, const H5O_info_t *info, void *ctx)
{
    (void)o;
    objlist *l = ctx;
    if (l->n < MAXOBJ && strlen(name) < 250) {
        snprintf(l->name[l->n], sizeof l->name[0], "/%s", strcmp(name, ".") ? name : "");
        l->dset[l->n++] = info->type == H5O_TYPE_DATASET;
    }
    return 0;
}

static double special(script *s)
{
    static const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 1e308, -1e308, 0, 5e-324, 1e20, -1, 400, 4e9};
    return v[take(s, sizeof v / sizeof v[0])];
}

static void set_attr(hid_t f, const char *obj, script *s)
{
    static const char *const names[] = {"rate_hz", "type", "units", "seed", "origin_lla", "format",
                                        "format_version", "model", "created_by"};
    const char *an = names[take(s, sizeof names / sizeof names[0])];
    if (H5Aexists_by_name(f, obj, an, H5P_DEFAULT) > 0)
        H5Adelete_by_name(f, obj, an, H5P_DEFAULT);
    unsigned kind = take(s, 5);
    hsize_t n = 1 + take(s, 4);
    hid_t sp = kind == 0 || kind == 3 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    if (kind <= 1) { /* variable-length string(s) */
        static const char *const texts[] = {"imu", "gnss", "sensim-log", "", "rad/s", "odometer", "x"};
        const char *t[4];
        for (int i = 0; i < 4; i++)
            t[i] = texts[take(s, sizeof texts / sizeof texts[0])];
        hid_t ty = H5Tcopy(H5T_C_S1);
        H5Tset_size(ty, H5T_VARIABLE);
        hid_t a = H5Acreate_by_name(f, obj, an, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, ty, t);
            H5Aclose(a);
        }
        H5Tclose(ty);
    } else if (kind == 2) { /* fixed-length string */
        hid_t ty = H5Tcopy(H5T_C_S1);
        H5Tset_size(ty, 1 + take(s, 16));
        char buf[4 * 17] = "imugnss400rad/s";
        hid_t a = H5Acreate_by_name(f, obj, an, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, ty, buf);
            H5Aclose(a);
        }
        H5Tclose(ty);
    } else { /* numbers, integer or floating */
        double v[4];
        for (int i = 0; i < 4; i++)
            v[i] = special(s);
        hid_t ty = kind == 3 ? H5T_IEEE_F64LE : H5T_STD_I32BE;
        hid_t a = H5Acreate_by_name(f, obj, an, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, H5T_NATIVE_DOUBLE, v);
            H5Aclose(a);
        }
    }
    H5Sclose(sp);
}

static void rewrite(hid_t f, const char *name, unsigned op, script *s)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return;
    hid_t sp = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[8] = {0};
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    if (rank >= 0 && rank <= 8)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    double *v = rank >= 1 && rank <= 4 && np > 0 && np <= 100000 ? malloc((size_t)np * sizeof *v + 8) : NULL;
    if (!v || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        H5Dclose(d);
        return;
    }
    H5Dclose(d);
    hid_t type = H5T_IEEE_F64LE;
    hsize_t nd[8], maxd[8], chunk[8];
    memcpy(nd, dims, sizeof nd);
    int nrank = rank;
    hsize_t extent0 = 0; /* > 0: declare this many rows after writing */
    if (op == 0) { /* another type */
        static const hid_t *const types[] = {&H5T_IEEE_F32LE_g, &H5T_STD_I32LE_g, &H5T_STD_U8LE_g,
                                             &H5T_STD_I64BE_g, &H5T_IEEE_F64BE_g, &H5T_STD_I8LE_g};
        type = *types[take(s, 6)];
    } else if (op == 1) { /* another shape */
        switch (take(s, 4)) {
        case 0: nd[0] = dims[0] ? take64(s) % (dims[0] + 1) : 0; break; /* rows cut, maybe to none */
        case 1: nrank = 1; nd[0] = (hsize_t)np; break;                      /* flattened */
        case 2: if (rank < 4) { nd[rank] = 1; nrank = rank + 1; } break;  /* a trailing 1 */
        default: if (rank >= 2 && nd[1] > 1) nd[1] -= 1; else nd[0] /= 2; /* a column less */
        }
    } else if (op == 2) { /* special values */
        for (int k = 0, m = 1 + (int)take(s, 4); k < m; k++)
            v[take64(s) % (uint64_t)np] = special(s);
    } else if (op == 3) { /* order */
        uint64_t i = take64(s) % (uint64_t)np, j = take64(s) % (uint64_t)np;
        if (take(s, 2)) {
            double t = v[i];
            v[i] = v[j];
            v[j] = t;
        } else
            v[i] = v[j];
    } else { /* an extent declared beyond what is written */
        extent0 = dims[0] + 1 + (take64(s) >> take(s, 64));
    }
    hsize_t np2 = 1;
    for (int i = 0; i < nrank; i++) {
        np2 *= nd[i];
        maxd[i] = i == 0 ? H5S_UNLIMITED : nd[i];
        chunk[i] = i == 0 ? (nd[0] ? (nd[0] < 64 ? nd[0] : 64) : 1) : (nd[i] ? nd[i] : 1);
    }
    if (np2 > (hsize_t)np) {
        free(v);
        return;
    }
    H5Ldelete(f, name, H5P_DEFAULT);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, nrank, chunk);
    hid_t nsp = H5Screate_simple(nrank, nd, maxd);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t nd_ = H5Dcreate2(f, name, type, nsp, lcpl, dcpl, H5P_DEFAULT);
    if (nd_ >= 0) {
        if (np2)
            H5Dwrite(nd_, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        if (extent0) {
            hsize_t e[8];
            memcpy(e, nd, sizeof e);
            e[0] = extent0;
            H5Dset_extent(nd_, e);
        }
        H5Dclose(nd_);
    }
    H5Pclose(lcpl);
    H5Sclose(nsp);
    H5Pclose(dcpl);
    free(v);
}

static void edit(const char *path, script *s)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return;
    static objlist l;
    l.n = 0;
    H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &l, H5O_INFO_BASIC);
    for (unsigned k = 0, nops = 1 + take(s, 4); k < nops && l.n > 0; k++) {
        int o = (int)take(s, (unsigned)l.n);
        const char *name = l.name[o];
        unsigned op = take(s, 8);
        if (op == 0 && name[1]) {
            H5Ldelete(f, name, H5P_DEFAULT);
            l.n = 0; /* names below it are gone: no more edits */
        } else if (op == 1) {
            hid_t obj = H5Oopen(f, name, H5P_DEFAULT);
            int na = obj >= 0 ? H5Aget_num_attrs(obj) : 0;
            if (na > 0)
                H5Adelete_by_idx(f, name, H5_INDEX_NAME, H5_ITER_INC, take(s, (unsigned)na), H5P_DEFAULT);
            if (obj >= 0)
                H5Oclose(obj);
        } else if (op == 2) {
            set_attr(f, name, s);
        } else if (l.dset[o]) {
            rewrite(f, name, op - 3, s);
        }
    }
    H5Fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *rigpath;
    static int raw = -1;
    if (raw < 0) {
        raw = getenv("SENSIM_FUZZ_RAW") != NULL;
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        if (!raw)
            load_bases();
    }
    if (!rigpath) {
        static char keep[512];
        strcpy(keep, fuzz_write("rig.yaml", (const uint8_t *)rig, sizeof rig - 1));
        rigpath = keep;
    }
    char in[512], out[512];
    if (raw) {
        strcpy(in, fuzz_write("in.h5", data, size));
    } else {
        script s = {data, size, 0};
        unsigned b = take(&s, (unsigned)nbase);
        strcpy(in, fuzz_write("in.h5", base[b].data, base[b].size));
        edit(in, &s);
    }
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
        sensim_vepd_series vs;
        if (sensim_vepd_read_log(in, NULL, &vs) == SENSIM_OK)
            sensim_vepd_series_free(&vs);
    }
    fuzz_clean("rig.yaml");
    return 0;
}
