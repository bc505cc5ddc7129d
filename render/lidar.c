/* Scanning lidar on Embree.
 *
 * Geometry: a column of `channels` beams is fired every column period; beam
 * (c, k) fires at c * period + time_offset[k] after the scan start and points
 * at azimuth azimuth0 + direction * 2 pi rate * t + azimuth_offset[k],
 * elevation elevation[k] (per-channel tables for real sensors, uniform
 * otherwise). Each beam is cast from the sensor pose at its own firing time
 * (seed 000 sec. 3.1 and Fig. 5: motion distortion), the pose being a pure
 * function of time evaluated inside the parallel loop (tabulated at the
 * firing times for the CUDA backend). The rays are made by
 * render/gpu/sg_raygen.h, the code the CUDA kernels run too.
 *
 * Beam divergence (seeds 000, 001, 002): a beam is N rays over its
 * footprint, weighted by the Gaussian beam profile; N is counted by the loop
 * that makes the rays (HELIOS++ counted them twice, two ways). Sub-ray hits
 * closer than echo_separation merge into one echo (range = intensity-weighted
 * mean, intensity = weighted sum); returns are chosen among echoes.
 *
 * Intensity of a sub-ray: rho cos(theta) (Lambertian, seed 002 eq. 4, scaled
 * by pi so that a white target seen head-on gives rho) or rho
 * (retroreflector), times the range falloff (none, inverse square, or the
 * detected power of a Gaussian beam, seed 002 eq. 21), times the two-way
 * Beer-Lambert transmittance exp(-2 alpha r) (seed 002 eq. 13). The
 * two-layer surface material gives pi f(l, l) cos(theta) with l the
 * direction back to the sensor (seed 002 eq. 12; pi f cos = rho cos for
 * Lambert). Atmospheric returns (seed 002 eq. 14) add one echo per beam at a
 * gamma-distributed range with the scene's probability, only from air the
 * beam lights: in front of the first hit of at least one of its sub-rays.
 * Rain and snow particles in the beam (weather.c) add echoes the same way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_loader.h"
#include "gpu/sg_raygen.h"
#include "render_internal.h"
#include "sensim/rng.h"
#include "../lib/base_internal.h"

#define GROUP_RAYS 1024 /* sub-rays traced per group (stack buffers) */

typedef struct {
    sensim_falloff kind;
    double ref, tan_half, waist, kr, ko, norm;
} lidar_falloff;

static lidar_falloff falloff_make(const sensim_render_lidar_params *p);

struct sensim_render_lidar {
    sensim_render_lidar_params p;
    int nrays;          /* rays per beam */
    double ra[SENSIM_RENDER_LIDAR_MAX_RAYS], rb[SENSIM_RENDER_LIDAR_MAX_RAYS], rw[SENSIM_RENDER_LIDAR_MAX_RAYS];
    double rn[SENSIM_RENDER_LIDAR_MAX_RAYS]; /* 1 / sqrt(1 + a^2 + b^2): unit sub-ray directions */
    int nret;           /* returns per beam slot */
    double period;      /* s per column */
    unsigned long long serial; /* unique per lidar made */
    int same_time;      /* all channels of a column fire at once */
    float *dir;         /* [columns*channels*3] sensor-frame beam axes (SPIN) */
    float *az;          /* [columns*channels] (SPIN) */
    lidar_falloff fall; /* falloff constants */
};

/* A unique number per lidar made (the CUDA backend's cache of its tables). */
static _Atomic unsigned long long lidar_serial;

/* The rosette's constants of sg_lidar. */
static void lidar_rosette_constants(const sensim_render_lidar_params *p, sg_lidar *L)
{
    L->w1 = 2 * M_PI * p->rosette_hz[0];
    L->w2 = 2 * M_PI * p->rosette_hz[1];
    L->rq = 0.25 * p->rosette_fov;
}

/* What the shared ray generation (render/gpu/sg_raygen.h) needs of lidar l
 * for scan `scan` from t_start in scene s: host pointers, no pose table. */
static void lidar_sg(const sensim_render_lidar *l, const sensim_scene *s, double t_start, uint64_t scan, sg_lidar *L)
{
    memset(L, 0, sizeof *L);
    L->dir = l->dir;
    L->toff = l->p.time_offset;
    L->ra = l->ra;
    L->rb = l->rb;
    L->rn = l->rn;
    L->channels = (uint32_t)l->p.channels;
    L->columns = (uint32_t)l->p.columns;
    L->nrays = (uint32_t)l->nrays;
    L->rosette = l->p.scan == SENSIM_SCAN_ROSETTE;
    L->same_time = (uint32_t)l->same_time;
    L->has_motion = (uint32_t)s->has_motion;
    L->period = l->period;
    L->t_start = t_start;
    L->scan_t = (double)scan / l->p.rate_hz;
    lidar_rosette_constants(&l->p, L);
    L->t0 = s->t0;
    L->t1 = s->t1;
    L->tfar = (float)l->p.max_range;
}

sensim_render_lidar_params sensim_render_lidar_default_params(void)
{
    sensim_render_lidar_params p;
    memset(&p, 0, sizeof p);
    p.channels = 32;
    p.vfov_min = -15 * M_PI / 180;
    p.vfov_max = 15 * M_PI / 180;
    p.columns = 1024;
    p.rate_hz = 10;
    p.hfov = 2 * M_PI;
    p.direction = 1;
    p.min_range = 0.5;
    p.max_range = 120;
    p.pattern = SENSIM_BEAM_GRID;
    p.pattern_n = 1;
    p.returns = SENSIM_RETURN_STRONGEST;
    p.echo_separation = 0.5;
    p.falloff = SENSIM_FALLOFF_INVERSE_SQUARE;
    p.reference_range = 10;
    p.wavelength = 905e-9;
    return p;
}

/* Presets (sensim_render_lidar_preset) are data files, data/lidars/NAME.yaml,
 * embedded at build time and read in scene_yaml.c. */

/* The footprint rays, made and counted by one loop. Offsets are tangents of
 * the angle from the beam axis; weights follow the Gaussian beam profile
 * exp(-2 r^2 / R^2) with R the 1/e^2 half-angle, normalized to sum 1. */
static int make_beam_rays(const sensim_render_lidar_params *p, double *a, double *b, double *w)
{
    int n = 0;
    if (p->divergence <= 0) {
        a[n] = b[n] = 0;
        w[n++] = 1;
        return n;
    }
    /* Half-axes: A horizontal (along u), B up (v); B = A for a round beam. */
    const int round = !(p->divergence_v > 0 && p->divergence_v != p->divergence);
    const double A = tan(0.5 * p->divergence), B = round ? A : tan(0.5 * p->divergence_v);
    if (p->pattern == SENSIM_BEAM_GRID) {
        int m = p->pattern_n;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                a[n] = m == 1 ? 0 : A * (2.0 * (i + 0.5) / m - 1);
                b[n] = m == 1 ? 0 : B * (2.0 * (j + 0.5) / m - 1);
                n++;
            }
    } else {
        const double golden = M_PI * (3 - sqrt(5.0));
        for (int i = 0; i < p->pattern_n; i++) {
            double s = p->pattern_n == 1 ? 0 : sqrt((i + 0.5) / p->pattern_n);
            a[n] = A * s * cos(i * golden);
            b[n] = B * s * sin(i * golden);
            n++;
        }
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
        w[i] = round ? exp(-2 * (a[i] * a[i] + b[i] * b[i]) / (A * A))
                     : exp(-2 * (a[i] * a[i] / (A * A) + b[i] * b[i] / (B * B)));
        sum += w[i];
    }
    for (int i = 0; i < n; i++)
        w[i] /= sum;
    return n;
}

sensim_status sensim_render_lidar_params_check(const sensim_render_lidar_params *p)
{
#define BAD(...) return sensim_error(SENSIM_EINVAL, "lidar: " __VA_ARGS__)
    if (p->scan != SENSIM_SCAN_SPIN && p->scan != SENSIM_SCAN_ROSETTE)
        BAD("unknown scan kind %d", (int)p->scan);
    if ((unsigned)p->backend > SENSIM_RENDER_BACKEND_AUTO)
        BAD("unknown backend %d", (int)p->backend);
    if (p->scan == SENSIM_SCAN_ROSETTE &&
        (p->channels != 1 || !(p->rosette_fov > 0 && p->rosette_fov < M_PI) || !isfinite(p->rosette_hz[0]) ||
         !isfinite(p->rosette_hz[1]) || p->rosette_hz[0] == p->rosette_hz[1]))
        BAD("a rosette needs 1 channel, a cone angle in (0, pi) and two different finite prism rates "
            "(got %d, %g rad, %g and %g Hz)", p->channels, p->rosette_fov, p->rosette_hz[0], p->rosette_hz[1]);
    if (p->channels < 1 || p->channels > SENSIM_RENDER_LIDAR_MAX_CHANNELS)
        BAD("channels must be 1..%d (got %d)", SENSIM_RENDER_LIDAR_MAX_CHANNELS, p->channels);
    if (p->columns < 1 || p->columns > 1000000)
        BAD("columns must be 1..1000000 (got %d)", p->columns);
    if (!(p->rate_hz > 0 && isfinite(p->rate_hz)))
        BAD("rate_hz must be positive (got %g)", p->rate_hz);
    if (!(p->hfov > 0 && p->hfov <= 2 * M_PI + 1e-9))
        BAD("hfov must be in (0, 2 pi] rad (got %g)", p->hfov);
    if (p->direction != 1 && p->direction != -1)
        BAD("direction must be +1 or -1 (got %d)", p->direction);
    if (!(p->min_range >= 0 && p->max_range > p->min_range && isfinite(p->max_range)))
        BAD("need 0 <= min_range < max_range < inf (got %g, %g)", p->min_range, p->max_range);
    if (!(p->divergence >= 0 && p->divergence < 0.5))
        BAD("divergence must be in [0, 0.5) rad (got %g)", p->divergence);
    if (!(p->divergence_v >= 0 && p->divergence_v < 0.5) || (p->divergence_v > 0 && !(p->divergence > 0)))
        BAD("vertical divergence must be in [0, 0.5) rad, with a horizontal one (got %g, %g)", p->divergence,
            p->divergence_v);
    if (p->divergence_v > 0 && p->divergence_v != p->divergence && p->falloff == SENSIM_FALLOFF_GAUSSIAN_BEAM)
        BAD("the gaussian_beam falloff (seed 002 eq. 21) is for a round beam: give one divergence");
    if (p->pattern != SENSIM_BEAM_GRID && p->pattern != SENSIM_BEAM_SUNFLOWER)
        BAD("unknown beam pattern %d", (int)p->pattern);
    if (p->pattern_n < 1 || (p->pattern == SENSIM_BEAM_GRID ? p->pattern_n * p->pattern_n : p->pattern_n) >
                                SENSIM_RENDER_LIDAR_MAX_RAYS)
        BAD("beam pattern gives 1..%d rays per beam (pattern_n %d)", SENSIM_RENDER_LIDAR_MAX_RAYS, p->pattern_n);
    if ((unsigned)p->returns > SENSIM_RETURN_DUAL)
        BAD("unknown return mode %d", (int)p->returns);
    if (!(p->echo_separation >= 0 && isfinite(p->echo_separation)) || !(p->threshold >= 0 && isfinite(p->threshold)))
        BAD("echo_separation and threshold must be finite and >= 0");
    if ((unsigned)p->falloff > SENSIM_FALLOFF_GAUSSIAN_BEAM)
        BAD("unknown falloff %d", (int)p->falloff);
    if (!(p->wavelength >= 200e-9 && p->wavelength <= 20e-6))
        BAD("wavelength must be 200 nm..20 um (got %g m)", p->wavelength);
    if (p->falloff == SENSIM_FALLOFF_INVERSE_SQUARE && !(p->reference_range > 0 && isfinite(p->reference_range)))
        BAD("reference_range must be positive (got %g)", p->reference_range);
    if (p->falloff == SENSIM_FALLOFF_GAUSSIAN_BEAM &&
        !(p->waist > 0 && p->receiver_radius > 0 && p->receiver_offset >= 0 && isfinite(p->receiver_offset)))
        BAD("gaussian_beam falloff needs waist > 0, receiver_radius > 0, receiver_offset >= 0");
    if (!p->has_table && !(p->vfov_max >= p->vfov_min && p->vfov_min >= -M_PI / 2 && p->vfov_max <= M_PI / 2))
        BAD("need -pi/2 <= vfov_min <= vfov_max <= pi/2 (got %g, %g)", p->vfov_min, p->vfov_max);
    for (int k = 0; p->has_table && k < p->channels; k++)
        if (!(fabs(p->elevation[k]) <= M_PI / 2) || !isfinite(p->azimuth_offset[k]) ||
            !(p->time_offset[k] >= 0 && isfinite(p->time_offset[k])))
            BAD("channel %d: elevation within +-pi/2, finite azimuth offset and time offset >= 0 needed", k);
    return SENSIM_OK;
#undef BAD
}

sensim_render_lidar *sensim_render_lidar_create(const sensim_render_lidar_params *p)
{
    if (sensim_render_lidar_params_check(p))
        return NULL;
    sensim_render_lidar *l = sensim_new_(sizeof *l, "lidar");
    if (!l)
        return NULL;
    l->p = *p;
    l->serial = ++lidar_serial;
    if (!p->has_table)
        for (int k = 0; k < p->channels; k++) {
            l->p.elevation[k] = p->channels == 1 ? 0.5 * (p->vfov_min + p->vfov_max)
                                                 : p->vfov_min + (p->vfov_max - p->vfov_min) * k / (p->channels - 1);
            l->p.azimuth_offset[k] = l->p.time_offset[k] = 0;
        }
    l->nrays = make_beam_rays(&l->p, l->ra, l->rb, l->rw);
    for (int j = 0; j < l->nrays; j++)
        l->rn[j] = 1 / sqrt(1 + l->ra[j] * l->ra[j] + l->rb[j] * l->rb[j]);
    l->nret = p->returns == SENSIM_RETURN_DUAL ? 2 : 1;
    l->fall = falloff_make(&l->p);
    l->period = p->scan == SENSIM_SCAN_ROSETTE ? 1 / (p->rate_hz * p->columns)
                                               : p->hfov / (2 * M_PI * p->rate_hz * p->columns);
    l->same_time = 1;
    for (int k = 0; k < p->channels; k++)
        if (l->p.time_offset[k] != 0)
            l->same_time = 0;
    if (p->scan == SENSIM_SCAN_ROSETTE)
        return l; /* directions made per scan (rosette_beam) */
    size_t nb = (size_t)p->columns * p->channels;
    l->dir = malloc(nb * 3 * sizeof *l->dir);
    l->az = malloc(nb * sizeof *l->az);
    if (!l->dir || !l->az) {
        sensim_render_lidar_destroy(l);
        sensim_error(SENSIM_ENOMEM, "lidar: out of memory");
        return NULL;
    }
    for (int c = 0; c < p->columns; c++)
        for (int k = 0; k < p->channels; k++) {
            size_t b = (size_t)c * p->channels + k;
            double t = sensim_render_lidar_fire_time(l, c, k);
            double az = p->azimuth0 + p->direction * 2 * M_PI * p->rate_hz * t + l->p.azimuth_offset[k];
            az = remainder(az, 2 * M_PI);
            double el = l->p.elevation[k];
            l->az[b] = (float)az;
            l->dir[3 * b] = (float)(cos(el) * cos(az));
            l->dir[3 * b + 1] = (float)(cos(el) * sin(az));
            l->dir[3 * b + 2] = (float)sin(el);
        }
    return l;
}

void sensim_render_lidar_destroy(sensim_render_lidar *l)
{
    if (!l)
        return;
    SENSIM_FREE_ALL(l->dir, l->az, l);
}

const sensim_render_lidar_params *sensim_render_lidar_params_of(const sensim_render_lidar *l) { return &l->p; }
int sensim_render_lidar_rays_per_beam(const sensim_render_lidar *l) { return l->nrays; }

void sensim_render_lidar_beam_rays(const sensim_render_lidar *l, double *a, double *b, double *w)
{
    memcpy(a, l->ra, l->nrays * sizeof *a);
    memcpy(b, l->rb, l->nrays * sizeof *b);
    memcpy(w, l->rw, l->nrays * sizeof *w);
}

size_t sensim_render_lidar_max_points(const sensim_render_lidar *l)
{
    return (size_t)l->p.columns * l->p.channels * l->nret;
}

double sensim_render_lidar_fire_time(const sensim_render_lidar *l, int column, int channel)
{
    return column * l->period + l->p.time_offset[channel];
}

/* The rosette's beam at sensor time t: render/gpu/sg_raygen.h's
 * sg_rosette_beam (shared with the CUDA kernels). */
static void rosette_beam(const sensim_render_lidar *l, double t, float d[3], float *az, float *el)
{
    sg_lidar L;
    memset(&L, 0, sizeof L);
    lidar_rosette_constants(&l->p, &L);
    sg_rosette_beam(&L, t, d, az, el);
}

/* Sensor time of (scan, column) for the rosette's prisms. */
static double rosette_time(const sensim_render_lidar *l, uint64_t scan, int column)
{
    return (double)scan / l->p.rate_hz + sensim_render_lidar_fire_time(l, column, 0);
}

sensim_vec3 sensim_render_lidar_beam_direction(const sensim_render_lidar *l, int column, int channel)
{
    if (l->p.scan == SENSIM_SCAN_ROSETTE) {
        float d[3], az, el;
        rosette_beam(l, rosette_time(l, 0, column), d, &az, &el);
        return sensim_vec3_make(d[0], d[1], d[2]);
    }
    const float *d = l->dir + 3 * ((size_t)column * l->p.channels + channel);
    return sensim_vec3_make(d[0], d[1], d[2]);
}

sensim_render_lidar_points *sensim_render_lidar_points_create(const sensim_render_lidar *l)
{
    size_t n = sensim_render_lidar_max_points(l);
    sensim_render_lidar_points *pt = sensim_new_(sizeof *pt, "lidar");
    if (!pt)
        return NULL;
    pt->capacity = n;
    pt->xyzi = malloc(4 * n * sizeof *pt->xyzi);
    pt->range = malloc(n * sizeof *pt->range);
    pt->azimuth = malloc(n * sizeof *pt->azimuth);
    pt->elevation = malloc(n * sizeof *pt->elevation);
    pt->channel = malloc(n * sizeof *pt->channel);
    pt->return_index = malloc(n * sizeof *pt->return_index);
    pt->time_offset = malloc(n * sizeof *pt->time_offset);
    pt->object = malloc(n * sizeof *pt->object);
    if (!pt->xyzi || !pt->range || !pt->azimuth || !pt->elevation || !pt->channel || !pt->return_index ||
        !pt->time_offset || !pt->object) {
        sensim_render_lidar_points_destroy(pt);
        sensim_error(SENSIM_ENOMEM, "lidar: out of memory for %zu points", n);
        return NULL;
    }
    return pt;
}

void sensim_render_lidar_points_destroy(sensim_render_lidar_points *pt)
{
    if (!pt)
        return;
    SENSIM_FREE_ALL(pt->xyzi, pt->range, pt->azimuth, pt->elevation, pt->channel, pt->return_index, pt->time_offset,
                    pt->object, pt);
}

/* Range factor of the received power. The constants are computed once per
 * lidar (falloff_make) by the same operations in the same order as the
 * formula written in one piece, so the values are bit for bit the same. */
static lidar_falloff falloff_make(const sensim_render_lidar_params *p)
{
    lidar_falloff f;
    f.kind = p->falloff;
    f.ref = p->reference_range;
    /* Seed 002 eq. 21: w(x) = x tan(theta_D) + E. */
    f.tan_half = tan(0.5 * p->divergence);
    f.waist = p->waist;
    f.kr = -2 * p->receiver_radius * p->receiver_radius;
    f.ko = -2 * p->receiver_offset * p->receiver_offset;
    f.norm = 1 - exp(-2.0);
    return f;
}

static inline double falloff(const lidar_falloff *f, double r)
{
    switch (f->kind) {
    case SENSIM_FALLOFF_INVERSE_SQUARE: {
        double q = f->ref / fmax(r, 1e-6);
        return q * q;
    }
    case SENSIM_FALLOFF_GAUSSIAN_BEAM: {
        /* (1 - exp(-2 a^2 / w^2)) exp(-2 d^2 / w^2) / (1 - exp(-2)). */
        double w = r * f->tan_half + f->waist, w2 = w * w;
        return (1 - exp(f->kr / w2)) * exp(f->ko / w2) / f->norm;
    }
    default:
        return 1;
    }
}

double sensim_render_lidar_falloff(const sensim_render_lidar *l, double r) { return falloff(&l->fall, r); }

uint8_t sensim_render_lidar_reflectivity(const sensim_render_lidar *l, double intensity, double range)
{
    const double f = falloff(&l->fall, range);
    if (!(intensity >= 0) || !isfinite(intensity) || !(f > 0) || !isfinite(range))
        return 0;
    const double a = intensity / f;
    if (a <= 1.0)
        return (uint8_t)lround(100.0 * a);
    const double v = 101.0 + nearbyint(154.0 * (1.0 - 1.0 / a));
    return (uint8_t)(v > 255.0 ? 255.0 : v);
}

typedef struct {
    float r, i; /* range, weighted intensity */
    uint32_t o; /* scene object (SENSIM_RENDER_NO_OBJECT: the air) */
} subhit;

typedef struct {
    double r, i;
    uint32_t o; /* object of the brightest sub-hit */
} echo;

/* Sorts the beam's sub-ray hits by range and merges them into echoes. */
static int make_echoes(subhit *h, int n, double sep, echo *e)
{
    for (int a = 1; a < n; a++) {
        subhit x = h[a];
        int b = a - 1;
        while (b >= 0 && h[b].r > x.r) {
            h[b + 1] = h[b];
            b--;
        }
        h[b + 1] = x;
    }
    int ne = 0, best = 0;
    double sr = 0, si = 0, sw = 0;
    for (int a = 0; a < n; a++) {
        if (a > 0 && h[a].r - h[a - 1].r > sep) {
            e[ne].r = sw > 0 ? sr / sw : h[a - 1].r;
            e[ne].o = h[best].o;
            e[ne++].i = si;
            sr = si = sw = 0;
            best = a;
        }
        if (h[a].i > h[best].i)
            best = a;
        /* Range centroid weighted by intensity (plus a tiny floor so that
         * black targets still get a range). */
        double wt = h[a].i + 1e-12;
        sr += wt * h[a].r;
        sw += wt;
        si += h[a].i;
    }
    if (n > 0) {
        e[ne].r = sr / sw;
        e[ne].o = h[best].o;
        e[ne++].i = si;
    }
    return ne;
}

/* Chooses up to two echoes by the return mode; returns how many. */
static int choose_returns(const sensim_render_lidar_params *p, const echo *e, int ne, const subhit *h, int nh, echo *out)
{
    int strongest = -1, second = -1, first = -1, last = -1;
    for (int a = 0; a < ne; a++) {
        if (e[a].i < p->threshold || e[a].r < p->min_range)
            continue;
        if (first < 0)
            first = a;
        last = a;
        if (strongest < 0 || e[a].i > e[strongest].i) {
            second = strongest;
            strongest = a;
        } else if (second < 0 || e[a].i > e[second].i) {
            second = a;
        }
    }
    if (strongest < 0)
        return 0;
    switch (p->returns) {
    case SENSIM_RETURN_FIRST:
        out[0] = e[first];
        return 1;
    case SENSIM_RETURN_LAST:
        out[0] = e[last];
        return 1;
    case SENSIM_RETURN_MEAN: {
        double sr = 0, si = 0;
        int best = 0;
        for (int a = 0; a < nh; a++) {
            sr += (h[a].i + 1e-12) * h[a].r;
            si += h[a].i + 1e-12;
            if (h[a].i > h[best].i)
                best = a;
        }
        out[0].r = sr / si;
        out[0].o = h[best].o;
        out[0].i = si - nh * 1e-12;
        if (out[0].i < p->threshold || out[0].r < p->min_range)
            return 0;
        return 1;
    }
    case SENSIM_RETURN_DUAL:
        out[0] = e[strongest];
        if (last != strongest) {
            out[1] = e[last];
            return 2;
        }
        if (second >= 0) {
            out[1] = e[second];
            return 2;
        }
        return 1;
    default:
        out[0] = e[strongest];
        return 1;
    }
}

/* Shades one traced sub-ray: range, weighted intensity and object into
 * *rr, *ri, *ro (range +inf for a miss, geom SG_INVALID). d: the direction
 * as traced (float), as the cosine has always used; sub: the sub-ray; t:
 * the beam's firing time. */
static inline void shade_ray(const sensim_render_lidar *l, const sensim_scene *s, unsigned geom, unsigned inst,
                             const float ng[3], const float d[3], float tfar, int sub, double t, double alpha,
                             float *rr, float *ri, uint32_t *ro)
{
    if (geom == RTC_INVALID_GEOMETRY_ID) {
        *rr = INFINITY;
        *ri = 0;
        return;
    }
    const float dx = d[0], dy = d[1], dz = d[2];
    double cth;
    int obj;
    if (inst == RTC_INVALID_GEOMETRY_ID) {
        /* Static geometry is baked in world space: |cos| of the angle
         * between the geometric normal and the ray. */
        double gx = ng[0], gy = ng[1], gz = ng[2];
        double g2 = gx * gx + gy * gy + gz * gz;
        cth = g2 > 0 ? fabs(gx * dx + gy * dy + gz * dz) / sqrt(g2) : 1.0;
        obj = s->geom_object[geom];
    } else {
        sensim_vec3 dv = sensim_vec3_make(dx, dy, dz), nrm;
        sensim_scene_fill_hit_parts(s, geom, inst, ng[0], ng[1], ng[2], dv, t, &nrm, &obj);
        cth = -sensim_vec3_dot(nrm, dv);
    }
    const sensim_material *m = &s->mat[s->obj[obj].material];
    double r = tfar;
    double refl;
    if (m->brdf == SENSIM_BRDF_RETRO)
        refl = m->reflectance;
    else if (m->brdf == SENSIM_BRDF_LAMBERT)
        refl = m->reflectance * fmax(cth, 0.0);
    else {
        /* Monostatic: light and view both along -d, normal at
         * incidence cosine cth, in the plane of (n, d). */
        double c = fmin(fmax(cth, 0.0), 1.0);
        sensim_vec3 nn = sensim_vec3_make(0, 0, 1), lv = sensim_vec3_make(sqrt(1 - c * c), 0, c);
        refl = c > 0 ? M_PI * sensim_material_brdf(m, nn, lv, lv) * c : 0.0;
    }
    *rr = (float)r;
    *ro = (uint32_t)obj;
    double v = l->rw[sub] * refl * falloff(&l->fall, r);
    /* Two-way Beer-Lambert; a factor 1 without extinction. */
    if (alpha > 0)
        v *= exp(-2 * alpha * r);
    *ri = (float)v;
}

/* Shades the n valid lanes of a traced packet whose lane 0 is ray `first` of
 * the group into rr, ri, ro. sub[j]: the lane's sub-ray, beam[j]: its beam
 * in the group. */
static inline void shade_packet(const sensim_render_lidar *l, const sensim_scene *s, const struct RTCRayHit16 *rh,
                                int n, int first, const unsigned char *sub, const short *beam, const double *tt,
                                double alpha, float *rr, float *ri, uint32_t *ro)
{
    for (int j = 0; j < n; j++) {
        const float ng[3] = {rh->hit.Ng_x[j], rh->hit.Ng_y[j], rh->hit.Ng_z[j]};
        const float d[3] = {rh->ray.dir_x[j], rh->ray.dir_y[j], rh->ray.dir_z[j]};
        shade_ray(l, s, rh->hit.geomID[j], rh->hit.instID[0][j], ng, d, rh->ray.tfar[j], sub[j], tt[beam[j]], alpha,
                  &rr[first + j], &ri[first + j], &ro[first + j]);
    }
}

/* The hits of a scan traced on the GPU (sensim_cuda_lidar_trace): for beam
 * b, its hit sub-rays' records are hit[off[b] .. off[b] + count[b]), in
 * sub-ray order. */
typedef struct lidar_gpu {
    const sg_lhit *hit;
    const size_t *off;
    const uint16_t *count;
} lidar_gpu;

/* Traces the rays of beams [k0, k0 + nbeam) of one column into rr, ri, ro
 * (beam q's sub-ray j at q nr + j): in packets of 16 consecutive rays
 * (beam, then sub-ray) to Embree or the twin, the last one padded with
 * invalid copies of its first lane; tt gets the beams' firing times. */
static void trace_rays(const sensim_render_lidar *l, const sensim_scene *s, const sg_lidar *L, sensim_pose_fn posefn,
                       const void *user, int column, int k0, int nbeam, const float *bdir, double alpha, double *tt,
                       float *rr, float *ri, uint32_t *ro)
{
    const sensim_render_lidar_params *p = &l->p;
    const int nr = l->nrays;
    sensim_pose pose;
    if (l->same_time)
        posefn(user, L->t_start + sensim_render_lidar_fire_time(l, column, 0), &pose);
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
    struct RTCRayHit16 rh;
    _Alignas(64) int valid[16]; /* Embree wants the mask 64-byte aligned */
    unsigned char sub[16];
    short beam[16];
    /* Embree reads but never writes tnear, mask, id and flags: set once. */
    for (int j = 0; j < 16; j++) {
        valid[j] = -1;
        rh.ray.tnear[j] = 0.0f;
        rh.ray.mask[j] = 0xFFFFFFFFu;
        rh.ray.flags[j] = 0;
        rh.ray.id[j] = 0;
    }
    int lane = 0, first = 0;
    for (int q = 0; q < nbeam; q++) {
        int k = k0 + q;
        double t = L->t_start + sensim_render_lidar_fire_time(l, column, k);
        tt[q] = t;
        if (!l->same_time)
            posefn(user, t, &pose);
        /* The shared ray generation (sg_raygen.h), as on the GPU. */
        const double qv[4] = {pose.q.w, pose.q.x, pose.q.y, pose.q.z};
        sg_beam b;
        sg_lidar_beam(qv, bdir + 3 * k, L->nrays, &b);
        const float time = sg_ray_time((int)L->has_motion, L->t0, L->t1, t);
        const float ox = (float)pose.p.x, oy = (float)pose.p.y, oz = (float)pose.p.z;
        for (int j = 0; j < nr; j++) {
            float d[3];
            sg_lidar_subray(L, &b, (uint32_t)j, d);
            rh.ray.org_x[lane] = ox;
            rh.ray.org_y[lane] = oy;
            rh.ray.org_z[lane] = oz;
            rh.ray.dir_x[lane] = d[0];
            rh.ray.dir_y[lane] = d[1];
            rh.ray.dir_z[lane] = d[2];
            rh.ray.tfar[lane] = L->tfar;
            rh.ray.time[lane] = time;
            rh.hit.geomID[lane] = RTC_INVALID_GEOMETRY_ID;
            rh.hit.instID[0][lane] = RTC_INVALID_GEOMETRY_ID;
            sub[lane] = (unsigned char)j;
            beam[lane] = (short)q;
            if (++lane == 16) {
                sensim_scene_intersect16(s, p->backend, valid, &ctx, &rh);
                shade_packet(l, s, &rh, 16, first, sub, beam, tt, alpha, rr, ri, ro);
                first += 16;
                lane = 0;
            }
        }
    }
    if (lane > 0) {
        const int n = lane;
        for (; lane < 16; lane++) {
            valid[lane] = 0;
            rh.ray.org_x[lane] = rh.ray.org_x[0];
            rh.ray.org_y[lane] = rh.ray.org_y[0];
            rh.ray.org_z[lane] = rh.ray.org_z[0];
            rh.ray.dir_x[lane] = rh.ray.dir_x[0];
            rh.ray.dir_y[lane] = rh.ray.dir_y[0];
            rh.ray.dir_z[lane] = rh.ray.dir_z[0];
            rh.ray.tfar[lane] = L->tfar;
            rh.ray.time[lane] = rh.ray.time[0];
            rh.hit.geomID[lane] = RTC_INVALID_GEOMETRY_ID;
            rh.hit.instID[0][lane] = RTC_INVALID_GEOMETRY_ID;
        }
        sensim_scene_intersect16(s, p->backend, valid, &ctx, &rh);
        shade_packet(l, s, &rh, n, first, sub, beam, tt, alpha, rr, ri, ro);
    }
}

/* The same from the hits the GPU traced and compacted: misses are the
 * sub-rays without a record. */
static void gpu_rays(const sensim_render_lidar *l, const sensim_scene *s, const sg_lidar *L, const lidar_gpu *g,
                     int column, int k0, int nbeam, double alpha, double *tt, float *rr, float *ri, uint32_t *ro)
{
    const int nr = l->nrays;
    for (int q = 0; q < nbeam; q++) {
        const int k = k0 + q;
        tt[q] = L->t_start + sensim_render_lidar_fire_time(l, column, k);
        for (int j = 0; j < nr; j++) {
            rr[q * nr + j] = INFINITY;
            ri[q * nr + j] = 0;
        }
        const size_t b = (size_t)column * l->p.channels + k;
        for (size_t h = g->off[b]; h < g->off[b] + g->count[b]; h++) {
            const sg_lhit *x = &g->hit[h];
            const int i = q * nr + (int)x->sub;
            shade_ray(l, s, x->geom, x->inst, x->ng, x->dir, x->t, (int)x->sub, tt[q], alpha, &rr[i], &ri[i], &ro[i]);
        }
    }
}

/* Traces beams [k0, k1) of one column and writes their points, in beam and
 * return order, to out from index `at` on; returns how many. g: the GPU's
 * hits (the CUDA backend), else NULL: the rays are traced here. */
static size_t trace_group(const sensim_render_lidar *l, const sensim_scene *s, const sg_lidar *L, sensim_pose_fn posefn,
                          const void *user, uint64_t scan, int column, int k0, int k1, sensim_render_lidar_points *out,
                          size_t at, const sensim_weather_table *wt, const lidar_gpu *g)
{
    const sensim_render_lidar_params *p = &l->p;
    const double t_start = L->t_start;
    const int nr = l->nrays;
    const int nbeam = k1 - k0;
    float rr[GROUP_RAYS], ri[GROUP_RAYS];
    uint32_t ro[GROUP_RAYS];
    double tt[SENSIM_RENDER_LIDAR_MAX_CHANNELS];
    const double alpha = sensim_scene_extinction_at(s, p->wavelength);
    /* This column's beam axes, azimuths and elevations: from the tables of
     * a spinning head, or made for this scan's time by a rosette. */
    float dirbuf[3 * SENSIM_RENDER_LIDAR_MAX_CHANNELS], azbuf[SENSIM_RENDER_LIDAR_MAX_CHANNELS],
        elbuf[SENSIM_RENDER_LIDAR_MAX_CHANNELS];
    const float *bdir, *baz;
    if (p->scan == SENSIM_SCAN_ROSETTE) {
        sg_rosette_beam(L, sg_rosette_time(L, column), dirbuf, azbuf, elbuf);
        bdir = dirbuf; /* one channel: k0 = 0 */
        baz = azbuf;
    } else {
        bdir = l->dir + 3 * (size_t)column * p->channels;
        baz = l->az + (size_t)column * p->channels;
        for (int k = k0; k < k1; k++)
            elbuf[k] = (float)p->elevation[k];
    }
    const float *bel = elbuf;
    if (g)
        gpu_rays(l, s, L, g, column, k0, nbeam, alpha, tt, rr, ri, ro);
    else
        trace_rays(l, s, L, posefn, user, column, k0, nbeam, bdir, alpha, tt, rr, ri, ro);
    const int atmo_on = s->atmo_probability > 0 || wt->on; /* air or weather echoes */
    size_t m = at;
    if (nr == 1 && !atmo_on) {
        /* One ray, no air: a beam's one echo is its hit, whatever the
         * return mode (the general path below gives the same points). */
        for (int q = 0; q < nbeam; q++) {
            float r = rr[q], in = ri[q];
            if (!(isfinite(r) && in >= p->threshold && r >= p->min_range))
                continue;
            int k = k0 + q;
            out->range[m] = r;
            out->xyzi[4 * m] = r * bdir[3 * k];
            out->xyzi[4 * m + 1] = r * bdir[3 * k + 1];
            out->xyzi[4 * m + 2] = r * bdir[3 * k + 2];
            out->xyzi[4 * m + 3] = in;
            out->azimuth[m] = baz[k];
            out->elevation[m] = bel[k];
            out->channel[m] = (uint16_t)k;
            out->return_index[m] = 0;
            out->time_offset[m] = (float)(tt[q] - t_start);
            out->object[m] = ro[q];
            m++;
        }
        return m - at;
    }
    const sensim_rng rhit = sensim_rng_make(p->seed, p->sensor, SENSIM_RENDER_STREAM_ATMO_HIT);
    const sensim_rng rrange = sensim_rng_make(p->seed, p->sensor, SENSIM_RENDER_STREAM_ATMO_RANGE);
    for (int q = 0; q < nbeam; q++) {
        int k = k0 + q;
        subhit h[SENSIM_RENDER_LIDAR_MAX_RAYS + 1 + 2 * SENSIM_WEATHER_MAX_ECHOES];
        echo e[SENSIM_RENDER_LIDAR_MAX_RAYS + 1 + 2 * SENSIM_WEATHER_MAX_ECHOES], ret[2];
        int nh = 0, atmo = 0;
        /* How far the beam's light reaches: a sub-ray stops at its first
         * hit, and one that misses lights the air up to max_range. */
        double reach = 0.0;
        for (int j = 0; j < nr; j++)
            if (isfinite(rr[q * nr + j])) {
                h[nh].r = rr[q * nr + j];
                h[nh].o = ro[q * nr + j];
                h[nh++].i = ri[q * nr + j];
                reach = fmax(reach, rr[q * nr + j]);
            } else
                reach = INFINITY;
        const uint64_t idx = scan * (uint64_t)p->columns * p->channels + (uint64_t)column * p->channels + k;
        if (s->atmo_probability > 0) {
            /* Seed 002 eq. 14: an echo from the air at x ~ Gamma(k, theta)
             * from the sensor, for a fraction `probability` of the beams,
             * as bright as a Lambertian target of the return reflectance
             * seen head-on at x. */
            if (sensim_rng_uniform(&rhit, idx) < s->atmo_probability) {
                double x = s->atmo_scale * sensim_rng_gamma(&rrange, idx, s->atmo_shape);
                /* Air behind the first surface on every sub-ray is dark:
                 * no return from there (1113 of 3200 points lay behind a
                 * wall at 5 m before this test). */
                if (x < p->max_range && x < reach) {
                    h[nh].r = (float)x;
                    h[nh].o = SENSIM_RENDER_NO_OBJECT;
                    h[nh++].i =
                        (float)(s->atmo_reflectance * falloff(&l->fall, x) * (alpha > 0 ? exp(-2 * alpha * x) : 1.0));
                    atmo = 1;
                }
            }
        }
        if (wt->on) {
            /* Rain and snow particles in the beam (weather.c). */
            float wr[2 * SENSIM_WEATHER_MAX_ECHOES], wi[2 * SENSIM_WEATHER_MAX_ECHOES];
            for (int j = 0, nw = sensim_weather_beam(wt, idx, reach, wr, wi); j < nw; j++, atmo = 1) {
                h[nh].r = wr[j];
                h[nh].o = SENSIM_RENDER_NO_OBJECT;
                h[nh++].i = wi[j];
            }
        }
        int nret;
        if (nr == 1 && !atmo) {
            /* One ray: one echo, whatever the return mode. */
            nret = nh == 1 && h[0].i >= p->threshold && h[0].r >= p->min_range;
            if (nret) {
                ret[0].r = h[0].r;
                ret[0].i = h[0].i;
                ret[0].o = h[0].o;
            }
        } else {
            int ne = make_echoes(h, nh, p->echo_separation, e);
            nret = choose_returns(p, e, ne, h, nh, ret);
        }
        for (int j = 0; j < nret; j++, m++) {
            float r = (float)ret[j].r;
            out->range[m] = r;
            out->xyzi[4 * m] = r * bdir[3 * k];
            out->xyzi[4 * m + 1] = r * bdir[3 * k + 1];
            out->xyzi[4 * m + 2] = r * bdir[3 * k + 2];
            out->xyzi[4 * m + 3] = (float)ret[j].i;
            out->azimuth[m] = baz[k];
            out->elevation[m] = bel[k];
            out->channel[m] = (uint16_t)k;
            out->return_index[m] = (uint8_t)j;
            out->time_offset[m] = (float)(tt[q] - t_start);
            out->object[m] = ret[j].o;
        }
    }
    return m - at;
}

void sensim_lidar_points_move(sensim_render_lidar_points *pt, size_t dst, size_t src)
{
    memcpy(pt->xyzi + 4 * dst, pt->xyzi + 4 * src, 4 * sizeof *pt->xyzi);
    pt->range[dst] = pt->range[src];
    pt->azimuth[dst] = pt->azimuth[src];
    pt->elevation[dst] = pt->elevation[src];
    pt->channel[dst] = pt->channel[src];
    pt->return_index[dst] = pt->return_index[src];
    pt->time_offset[dst] = pt->time_offset[src];
    pt->object[dst] = pt->object[src];
}

/* Tasks traced between two compactions: their point counts live on the
 * stack of the scanning thread. */
#define LIDAR_WAVE 1024

static void scan_pass(const sensim_render_lidar *l, const sensim_scene *s, const sg_lidar *L, sensim_pose_fn pose,
                      const void *pose_user, uint64_t scan, sensim_render_lidar_points *out, const lidar_gpu *g);

/* The CUDA backend: the sensor's poses at the firing times tabulated here
 * (the pose is the caller's function), the rays made, traced and their
 * hits compacted on the GPU (cuda.c, render/gpu/sg_scan.h), then one pass
 * shades the hits and makes the points. */
static sensim_status scan_cuda(const sensim_render_lidar *l, const sensim_scene *s, sg_lidar *L, sensim_pose_fn pose,
                               const void *pose_user, uint64_t scan, sensim_render_lidar_points *out)
{
    const int C = l->p.channels;
    const size_t npose = l->same_time ? (size_t)l->p.columns : (size_t)l->p.columns * C;
    sg_pose *tab = malloc(npose * sizeof *tab);
    if (!tab)
        return sensim_error(SENSIM_ENOMEM, "lidar: out of memory for %zu poses", npose);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)npose; i++) {
        const int c = l->same_time ? (int)i : (int)(i / C), k = l->same_time ? 0 : (int)(i % C);
        sensim_pose q;
        pose(pose_user, L->t_start + sensim_render_lidar_fire_time(l, c, k), &q);
        const sg_pose x = {{q.p.x, q.p.y, q.p.z}, {q.q.w, q.q.x, q.q.y, q.q.z}};
        tab[i] = x;
    }
    L->pose = tab;
    sensim_cuda_lidar_hits h;
    sensim_status st = sensim_cuda_lidar_trace(s->cuda, L, l->serial, npose, &h);
    free(tab);
    L->pose = NULL;
    if (st)
        return st;
    const lidar_gpu g = {h.hit, h.off, h.count};
    scan_pass(l, s, L, pose, pose_user, scan, out, &g);
    return SENSIM_OK;
}

sensim_status sensim_render_lidar_scan(const sensim_render_lidar *l, const sensim_scene *s, sensim_pose_fn pose,
                                const void *pose_user, double t_start, uint64_t scan, sensim_render_lidar_points *out)
{
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "lidar: scene not committed");
    sensim_status st = sensim_scene_backend_check(s, l->p.backend, "lidar");
    if (st)
        return st;
    if (out->capacity < sensim_render_lidar_max_points(l))
        return sensim_error(SENSIM_EINVAL, "lidar: point buffer holds %zu points, the scan needs %zu", out->capacity,
                            sensim_render_lidar_max_points(l));
    if (!isfinite(t_start))
        return sensim_error(SENSIM_EINVAL, "lidar: scan start time not finite");
    sg_lidar L;
    lidar_sg(l, s, t_start, scan, &L);
    if (sensim_scene_backend(s, l->p.backend, NULL) == SENSIM_RENDER_BACKEND_CUDA) {
        if ((st = scan_cuda(l, s, &L, pose, pose_user, scan, out)))
            return st;
    } else
        scan_pass(l, s, &L, pose, pose_user, scan, out, NULL);
    if (l->p.noise)
        return l->p.noise(l->p.noise_user, out, scan);
    return SENSIM_OK;
}

/* One pass over the scan's columns: every beam traced (or its hits taken
 * from g) and its points written to out in beam order. */
static void scan_pass(const sensim_render_lidar *l, const sensim_scene *s, const sg_lidar *L, sensim_pose_fn pose,
                      const void *pose_user, uint64_t scan, sensim_render_lidar_points *out, const lidar_gpu *gpu)
{
    const int C = l->p.channels, per = GROUP_RAYS / l->nrays;
    const int groups = (C + per - 1) / per;
    const long ntask = (long)l->p.columns * groups;
    /* Task (column c, group g) owns slots [(c C + g per) nret, ...) and
     * writes its points densely from the first; after each wave of tasks
     * the points move down to their place in beam order, one array per
     * thread (a destination never passes its source, and each array is
     * moved by one thread in task order, so nothing is overwritten before
     * it is read). */
    struct {
        char *base;
        size_t size;
    } arr[8] = {{(char *)out->xyzi, 4 * sizeof *out->xyzi},
                {(char *)out->range, sizeof *out->range},
                {(char *)out->azimuth, sizeof *out->azimuth},
                {(char *)out->elevation, sizeof *out->elevation},
                {(char *)out->time_offset, sizeof *out->time_offset},
                {(char *)out->object, sizeof *out->object},
                {(char *)out->channel, sizeof *out->channel},
                {(char *)out->return_index, sizeof *out->return_index}};
    /* Counts of two waves: the moves of one overlap the tracing of the
     * next, which writes only its own slots. */
    size_t cnt[2][LIDAR_WAVE], total = 0;
    sensim_weather_table wt; /* rain and snow echoes for this lidar */
    sensim_weather_table_make(s, l, &wt);
#pragma omp parallel
    {
        size_t m = 0; /* points before the wave, the same in every thread */
        for (long w0 = 0; w0 < ntask; w0 += LIDAR_WAVE) {
            const long nw = ntask - w0 < LIDAR_WAVE ? ntask - w0 : LIDAR_WAVE;
            size_t *n = cnt[(w0 / LIDAR_WAVE) & 1];
#pragma omp for schedule(dynamic, 8)
            for (long i = 0; i < nw; i++) {
                long task = w0 + i;
                int c = (int)(task / groups), g = (int)(task % groups);
                int k0 = g * per, k1 = k0 + per < C ? k0 + per : C;
                size_t at = ((size_t)c * C + k0) * l->nret;
                n[i] = trace_group(l, s, L, pose, pose_user, scan, c, k0, k1, out, at, &wt, gpu);
            }
#pragma omp for schedule(dynamic, 1) nowait
            for (int a = 0; a < 8; a++) {
                size_t dst = m;
                for (long i = 0; i < nw; i++) {
                    long task = w0 + i;
                    int c = (int)(task / groups), g = (int)(task % groups);
                    size_t src = ((size_t)c * C + (size_t)g * per) * l->nret;
                    if (src != dst && n[i] > 0)
                        memmove(arr[a].base + dst * arr[a].size, arr[a].base + src * arr[a].size,
                                n[i] * arr[a].size);
                    dst += n[i];
                }
            }
            for (long i = 0; i < nw; i++)
                m += n[i];
        }
#pragma omp single nowait
        total = m;
    }
    out->count = total;
}
