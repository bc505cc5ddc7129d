/* bench_meshload: load time and memory of a 10 M-triangle mesh (issue 20),
 * then lidar scan and camera frame rates on it.
 *
 *   bench_meshload [MTRIANGLES [SCANS [FRAMES]]]   (defaults 10, 3, 1)
 *
 * The mesh is a terrain of n x n cells (2 n^2 triangles), heights from
 * smooth hills plus a hashed roughness of a few centimetres, as a ground
 * scan looks; it is written as binary PLY, OBJ and GLB (float positions,
 * u32 indices) to $TMPDIR. Each format loads in a child process of its own
 * (fork), so that each peak resident size (ru_maxrss) is that format's:
 * parse (sensim_scene_load_mesh), build (sensim_scene_commit, Embree's
 * BVH), in wall and CPU seconds (the parse is one thread: its CPU time is
 * what it takes on an idle machine), the scene's own count of its bytes
 * (sensim_scene_memory) and the peak. The PLY child then times os128 scans (best of SCANS) and
 * 1920x1080 frames at 4 samples a pixel from 3 m above the middle. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/render.h"
#include "bench.h"
#include "bench_scene.h"

static float height(long i, long j, double cell)
{
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    double x = i * cell, y = j * cell;
    return (float)(1.5 * sin(x / 37.0) * cos(y / 23.0) + 0.04 * ((double)(h >> 11) / 9007199254740992.0 - 0.5));
}

/* Writes the terrain of n x n cells of `cell` metres as PLY, OBJ and GLB. */
static int write_meshes(long n, double cell, const char *ply, const char *obj, const char *glb)
{
    long nv = (n + 1) * (n + 1), nt = 2 * n * n;
    float *v = malloc((size_t)nv * 3 * sizeof *v);
    uint32_t *t = malloc((size_t)nt * 3 * sizeof *t);
    if (!v || !t)
        return -1;
    for (long i = 0; i <= n; i++)
        for (long j = 0; j <= n; j++) {
            float *p = v + 3 * (i * (n + 1) + j);
            p[0] = (float)((i - n / 2) * cell);
            p[1] = (float)((j - n / 2) * cell);
            p[2] = height(i, j, cell);
        }
    for (long i = 0, k = 0; i < n; i++)
        for (long j = 0; j < n; j++, k += 2) {
            uint32_t a = (uint32_t)(i * (n + 1) + j), b = a + 1, c = a + (uint32_t)(n + 1), d = c + 1;
            uint32_t q[6] = {a, c, b, b, c, d};
            memcpy(t + 3 * k, q, sizeof q);
        }
    FILE *f = fopen(ply, "wb");
    if (!f)
        return -1;
    fprintf(f, "ply\nformat binary_little_endian 1.0\nelement vertex %ld\nproperty float x\nproperty float y\n"
               "property float z\nelement face %ld\nproperty list uchar int vertex_indices\nend_header\n",
            nv, nt);
    fwrite(v, sizeof *v, (size_t)nv * 3, f);
    for (long k = 0; k < nt; k++) {
        unsigned char three = 3;
        fwrite(&three, 1, 1, f);
        fwrite(t + 3 * k, 4, 3, f);
    }
    if (fclose(f))
        return -1;
    f = fopen(obj, "w");
    if (!f)
        return -1;
    for (long i = 0; i < nv; i++)
        fprintf(f, "v %.4f %.4f %.4f\n", v[3 * i], v[3 * i + 1], v[3 * i + 2]);
    for (long k = 0; k < nt; k++)
        fprintf(f, "f %u %u %u\n", t[3 * k] + 1, t[3 * k + 1] + 1, t[3 * k + 2] + 1);
    if (fclose(f))
        return -1;
    char json[1024];
    size_t vb = (size_t)nv * 12, tb = (size_t)nt * 12;
    int jl = snprintf(json, sizeof json,
                      "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
                      "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
                      "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%ld,\"type\":\"VEC3\"},"
                      "{\"bufferView\":1,\"componentType\":5125,\"count\":%ld,\"type\":\"SCALAR\"}],"
                      "\"bufferViews\":[{\"buffer\":0,\"byteLength\":%zu},{\"buffer\":0,\"byteOffset\":%zu,"
                      "\"byteLength\":%zu}],\"buffers\":[{\"byteLength\":%zu}]}",
                      nv, 3 * nt, vb, vb, tb, vb + tb);
    while (jl % 4)
        json[jl++] = ' ';
    uint32_t hdr[5] = {0x46546C67u, 2, (uint32_t)(12 + 8 + jl + 8 + vb + tb), (uint32_t)jl, 0x4E4F534Au};
    uint32_t bin[2] = {(uint32_t)(vb + tb), 0x004E4942u};
    f = fopen(glb, "wb");
    if (!f || fwrite(hdr, 4, 5, f) != 5 || fwrite(json, 1, (size_t)jl, f) != (size_t)jl || fwrite(bin, 4, 2, f) != 2 ||
        fwrite(v, 1, vb, f) != vb || fwrite(t, 1, tb, f) != tb || fclose(f))
        return -1;
    free(v);
    free(t);
    return 0;
}

static void rates(const sensim_scene *s, int scans, int frames)
{
    sensim_pose pose = sensim_pose_identity();
    pose.p = sensim_vec3_make(0.3, 0.2, 4.5);
    sensim_render_lidar_params p;
    sensim_render_lidar_preset("os128", &p);
    p.max_range = 200;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *pts = sensim_render_lidar_points_create(l);
    sensim_render_lidar_scan(l, s, bench_still, &pose, 0, 0, pts); /* warm-up */
    double best = INFINITY;
    for (int k = 0; k < scans; k++) {
        double t0 = bench_now();
        sensim_render_lidar_scan(l, s, bench_still, &pose, 0, (uint64_t)k + 1, pts);
        best = fmin(best, bench_now() - t0);
    }
    printf("  os128 scan (128 x 2048 rays): %.2f scans/s, %.2f Mrays/s, %zu points\n", 1 / best,
           128.0 * 2048 / best / 1e6, pts->count);
    sensim_render_lidar_points_destroy(pts);
    sensim_render_lidar_destroy(l);
    if (frames < 1)
        return;
    sensim_render_camera_params cp = bench_camera_params();
    sensim_pose cam = pose;
    cam.q = sensim_quat_axis_angle(sensim_vec3_make(0, 1, 0), 0.3);
    printf("  camera 1920x1080, 4 spp: %.3f frames/s\n", frames / bench_camera_frames(s, &cp, cam, frames));
}

/* One format in a child process: its own peak resident size. */
static int measure(const char *label, const char *path, int scans, int frames)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        sensim_scene *s = sensim_scene_create();
        double t0 = bench_now(), c0 = bench_cpu();
        int m = sensim_scene_load_mesh_up(s, "terrain", path, SENSIM_MESH_UP_Z);
        double t1 = bench_now(), c1 = bench_cpu();
        if (m < 0 || sensim_scene_add_object(s, m, 0, sensim_pose_identity()) < 0) {
            fprintf(stderr, "bench_meshload: %s\n", sensim_last_error());
            _exit(1);
        }
        size_t nt;
        sensim_scene_mesh_info(s, m, NULL, &nt, NULL, NULL);
        if (sensim_scene_commit(s)) {
            fprintf(stderr, "bench_meshload: %s\n", sensim_last_error());
            _exit(1);
        }
        double t2 = bench_now(), c2 = bench_cpu();
        size_t peak, bytes = sensim_scene_memory(s, &peak);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("%-5s %10zu %7.2f %7.2f %7.2f %7.2f %10.1f %10.1f\n", label, nt, t1 - t0, c1 - c0, t2 - t1, c2 - c1,
               bytes / 1e6, ru.ru_maxrss / 1e3 * 1.024);
        if (scans > 0)
            rates(s, scans, frames);
        sensim_scene_destroy(s);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    double mtri = argc > 1 ? atof(argv[1]) : 10;
    int scans = argc > 2 ? atoi(argv[2]) : 3, frames = argc > 3 ? atoi(argv[3]) : 1;
    if (!(mtri > 0 && mtri <= 200) || scans < 0 || frames < 0) {
        fprintf(stderr, "usage: bench_meshload [MTRIANGLES [SCANS [FRAMES]]]\n");
        return 2;
    }
    long n = lround(sqrt(mtri * 1e6 / 2));
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[4096], ply[4200], obj[4200], glb[4200];
    snprintf(dir, sizeof dir, "%s/bench_meshload.XXXXXX", tmp);
    if (!mkdtemp(dir))
        return 1;
    snprintf(ply, sizeof ply, "%s/terrain.ply", dir);
    snprintf(obj, sizeof obj, "%s/terrain.obj", dir);
    snprintf(glb, sizeof glb, "%s/terrain.glb", dir);
    double t0 = bench_now();
    if (write_meshes(n, 0.1, ply, obj, glb)) {
        fprintf(stderr, "bench_meshload: cannot write the meshes in %s\n", dir);
        return 1;
    }
    printf("terrain %ld x %ld cells (%.2f M triangles) written as PLY, OBJ, GLB in %.1f s; %d threads\n", n, n,
           2.0 * n * n / 1e6, bench_now() - t0, omp_get_max_threads());
    printf("%-5s %10s %7s %7s %7s %7s %10s %10s\n", "file", "triangles", "parse", "(cpu)", "build", "(cpu)",
           "scene MB", "peak MB");
    int bad = measure("PLY", ply, scans, frames) | measure("OBJ", obj, 0, 0) | measure("GLB", glb, 0, 0);
    unlink(ply);
    unlink(obj);
    unlink(glb);
    rmdir(dir);
    return bad ? 1 : 0;
}
