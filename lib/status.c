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
    char prefix[SENSIM_ERRMSG_MAX];
    char old[SENSIM_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errmsg, sizeof old);
    if (old[0])
        snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, old);
    else
        snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, sensim_strerror(status));
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

static pthread_once_t gsl_once = PTHREAD_ONCE_INIT;
static void gsl_off(void) { gsl_set_error_handler_off(); }
void sensim_gsl_quiet(void) { pthread_once(&gsl_once, gsl_off); }
