/* sensim/status.h - status codes and the per-thread last-error message.
 *
 * Every library function that can fail returns a sensim_status (or NULL for
 * constructors) and leaves a message saying what went wrong and where in the
 * input: "rig.yaml:12: key 'sigma': must be >= 0" or
 * "gt.h5: dataset /ground_truth/t: timestamps not increasing at index 41".
 * The library never prints, exits or aborts; the caller decides.
 *
 * Thread safety: the message is thread-local, so each thread sees the error of
 * its own last failing call. */
#ifndef SENSIM_STATUS_H
#define SENSIM_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_status {
    SENSIM_OK = 0,
    SENSIM_EINVAL,      /* bad argument or parameter: negative sigma, NaN rate, zero tau */
    SENSIM_ENOMEM,      /* an allocation failed */
    SENSIM_EIO,         /* a file cannot be opened, read, written or renamed */
    SENSIM_EFORMAT,     /* malformed input: YAML syntax, wrong HDF5 type or shape, bad CSV row */
    SENSIM_ENOTFOUND,   /* something named is missing: dataset, YAML key, sensor, file */
    SENSIM_EDATA,       /* values unusable: NaN, timestamps not increasing, too few samples */
    SENSIM_EUNSUPPORTED,/* valid input this build cannot handle: unknown model, bit depth */
    SENSIM_EINTERNAL    /* a dependency (HDF5, GSL, Embree, libyaml) failed unexpectedly */
} sensim_status;

/* A static English description of the code ("invalid parameter"). */
const char *sensim_strerror(sensim_status status);

/* Sets this thread's message from a printf-style format and returns status,
 * so that failure paths read `return sensim_error(SENSIM_EINVAL, "...")`. */
sensim_status sensim_error(sensim_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
sensim_status sensim_verror(sensim_status status, const char *fmt, va_list ap);

/* Prefixes the current message with "prefix: " (to add file or sensor
 * context on the way up) and returns status unchanged. */
sensim_status sensim_error_prefix(sensim_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Evaluates a call returning sensim_status and returns its status from the
 * enclosing function when it is not SENSIM_OK. */
#define SENSIM_TRY(call)                    \
    do {                                    \
        sensim_status sensim_try_ = (call); \
        if (sensim_try_ != SENSIM_OK)       \
            return sensim_try_;             \
    } while (0)

/* The calling thread's last message; "" if none. Borrowed: valid until the
 * next sensim call on this thread. */
const char *sensim_last_error(void);
/* The status that went with it (SENSIM_OK if cleared). */
sensim_status sensim_last_status(void);
void sensim_error_clear(void);

/* GSL's error handler while sensim's own GSL calls run. GSL's handler is
 * one per process; its default aborts. sensim reports GSL's failures as
 * statuses, so it switches the handler off while its own calls run and puts
 * the host program's handler back after: _begin saves it and switches it off
 * on the first entry (from any thread), _end restores it on the last exit.
 * While a sensim call is inside, a host thread's own GSL calls also run with
 * the handler off. Used through SENSIM_GSL_QUIET_SCOPE() at the top of each
 * function that calls GSL (GCC and Clang: it ends when the block exits). */
void sensim_gsl_quiet_begin(void);
void sensim_gsl_quiet_end(void);
#if defined(__GNUC__)
static inline void sensim_gsl_quiet_cleanup_(int *on)
{
    if (*on)
        sensim_gsl_quiet_end();
}
#define SENSIM_GSL_QUIET_SCOPE()                                                                                     \
    int sensim_gsl_scope_ __attribute__((cleanup(sensim_gsl_quiet_cleanup_), unused)) =                           \
        (sensim_gsl_quiet_begin(), 1)
#endif

#ifdef __cplusplus
}
#endif
#endif
