/* Status codes and the per-thread last-error message (see sensim/status.h). */
#include "sensim/status.h"

#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SENSIM_ERRMSG_MAX 1024

static _Thread_local char errmsg[SENSIM_ERRMSG_MAX];
static _Thread_local sensim_status errstatus = SENSIM_OK;

const char *sensim_strerror(sensim_status status)
{
    switch (status) {
    case SENSIM_OK: return "success";
    case SENSIM_EINVAL: return "invalid parameter";
    case SENSIM_ENOMEM: return "out of memory";
    case SENSIM_EIO: return "input/output error";
    case SENSIM_EFORMAT: return "malformed input";
    case SENSIM_ENOTFOUND: return "not found";
    case SENSIM_EDATA: return "unusable data";
    case SENSIM_EUNSUPPORTED: return "unsupported";
    case SENSIM_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

sensim_status sensim_verror(sensim_status status, const char *fmt, va_list ap)
{
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    errstatus = status;
    return status;
}

sensim_status sensim_error(sensim_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sensim_verror(status, fmt, ap);
    va_end(ap);
    return status;
}

sensim_status sensim_error_prefix(sensim_status status, const char *fmt, ...)
{
    char old[SENSIM_ERRMSG_MAX];
    memcpy(old, errmsg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    /* Append ": old message" after the prefix, truncating at the buffer end. */
    size_t k = n < 0 ? 0 : (size_t)n < sizeof errmsg ? (size_t)n : sizeof errmsg - 1;
    const char *tail = old[0] ? old : sensim_strerror(status);
    if (k + 2 < sizeof errmsg) {
        errmsg[k++] = ':';
        errmsg[k++] = ' ';
        size_t len = strlen(tail), room = sizeof errmsg - 1 - k;
        if (len > room)
            len = room;
        memcpy(errmsg + k, tail, len);
        errmsg[k + len] = '\0';
    }
    errstatus = status;
    return status;
}

const char *sensim_last_error(void) { return errmsg; }
sensim_status sensim_last_status(void) { return errstatus; }

void sensim_error_clear(void)
{
    errmsg[0] = '\0';
    errstatus = SENSIM_OK;
}

/* The host's GSL handler, saved by the first of the nested or concurrent
 * sensim calls that use GSL and restored by the last. */
static pthread_mutex_t gsl_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned gsl_depth;
static gsl_error_handler_t *gsl_saved;

void sensim_gsl_quiet_begin(void)
{
    pthread_mutex_lock(&gsl_lock);
    if (gsl_depth++ == 0)
        gsl_saved = gsl_set_error_handler_off();
    pthread_mutex_unlock(&gsl_lock);
}

void sensim_gsl_quiet_end(void)
{
    pthread_mutex_lock(&gsl_lock);
    if (gsl_depth && --gsl_depth == 0)
        gsl_set_error_handler(gsl_saved);
    pthread_mutex_unlock(&gsl_lock);
}
