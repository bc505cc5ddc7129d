/* Shared pieces of the libFuzzer targets in tests/fuzz/ (built by `make
 * fuzz` with clang, AddressSanitizer and UndefinedBehaviorSanitizer).
 *
 * The parsers under test read files by name, so each input is written to a
 * per-process scratch directory (under $TMPDIR, /dev/shm when it exists)
 * and read back from there: the same path the program takes. */
#ifndef SENSIM_FUZZ_H
#define SENSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The entry point libFuzzer calls, defined by each fuzz_*.c target. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scratch directory (created on first use, removed at exit). */
const char *fuzz_dir(void);
/* Writes data to fuzz_dir()/name and returns that path (static buffer,
 * valid until the next call). */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);
/* fuzz_dir()/name (static buffer, valid until the next call). */
const char *fuzz_path(const char *name);
/* A NUL-terminated malloc'd copy of data (free it). */
char *fuzz_text(const uint8_t *data, size_t size);
/* Runs the sensim program's main (cli/main.c) in-process with the
 * NULL-terminated arguments after "sensim"; returns its exit status. stdout
 * goes to /dev/null for the call. */
int fuzz_cli(const char *arg, ...);
/* Removes every file in fuzz_dir() except name (NULL: all). */
void fuzz_clean(const char *keep);

#endif
