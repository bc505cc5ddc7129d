/* The rate of a series from a recording, and temporary logs from a
 * recording, for allan and fit (see bagcli.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bagcli.h"

sensim_status cli_bag_series_rate(const char *path, const char *topic, const cli_bag_stats *bst, size_t n,
                                  double rate, double *out)
{
    if (n < 3)
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': %zu messages; need at least 3", path, topic, n);
    double dt = bst->median_dt;
    if (rate > 0) {
        if (dt > 0 && fabs(rate * dt - 1) > 0.01)
            return sensim_error(SENSIM_EDATA, "%s: topic '%s': --rate %g Hz does not match the stamps (median spacing "
                                "%g s, %g Hz)", path, topic, rate, dt, 1 / dt);
        *out = rate;
    } else if (dt > 0)
        *out = 1 / dt;
    else
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': no usable stamps for a rate; give --rate", path, topic);
    if (bst->gaps || bst->duplicates)
        fprintf(stderr, "sensim: %s: topic '%s': %llu gaps, %llu duplicate stamps dropped; the series is taken as "
                "evenly spaced at %.6g Hz\n", path, topic, (unsigned long long)bst->gaps,
                (unsigned long long)bst->duplicates, *out);
    return SENSIM_OK;
}

sensim_status cli_bag_temp_log(const char *path, const char *topic, int time_receive, char **tmp, char **sensor)
{
    *tmp = NULL;
    *sensor = NULL;
    const char *dir = getenv("TMPDIR");
    size_t n = strlen(dir && *dir ? dir : "/tmp") + 32;
    char *p = malloc(n), *name = malloc(strlen(topic) + 1);
    if (!p || !name) {
        free(p);
        free(name);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    snprintf(p, n, "%s/sensim-bag-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(p);
    if (fd < 0) {
        sensim_status st = sensim_error(SENSIM_EIO, "cannot create a temporary file %s", p);
        free(p);
        free(name);
        return st;
    }
    close(fd);
    const char *q = topic + (topic[0] == '/');
    size_t i = 0;
    for (; q[i]; i++)
        name[i] = q[i] == '/' ? '_' : q[i];
    name[i] = '\0';
    char spec[600];
    snprintf(spec, sizeof spec, "%s:%s", topic, name);
    char *argv[] = {"import", (char *)path, "--topic", spec, "-o", p, "--time",
                    time_receive ? "receive" : "header", NULL};
    int rc = cli_import_bag_run(8, argv, NULL);
    if (rc != 0) {
        unlink(p);
        free(p);
        free(name);
        return sensim_last_status() ? sensim_last_status() : SENSIM_EFORMAT;
    }
    *tmp = p;
    *sensor = name;
    return SENSIM_OK;
}
