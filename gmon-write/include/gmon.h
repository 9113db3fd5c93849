/*
 * gmon.h — C interface of the gmon-write runtime (libgmon_write.so / libgmon_write.a).
 *
 * A user-space profil(2)/pcsample(2) and a whole-process profiler that writes a GNU gmon.out
 * (readable by `gprof ./prog gmon.out`) plus a sidecar `gmon.out.gmonx` with samples in shared
 * libraries and call stacks. No -pg needed. Sampling: one CPU-time timer per thread delivering
 * the real-time signal SIGRTMAX-1, which the library reserves (it defines sigaction, signal,
 * sigprocmask, pthread_sigmask, sigsuspend, the sigwait family and signalfd so the program can
 * neither replace nor block it); the program's own SIGPROF and ITIMER_PROF are left alone.
 *
 * Every function returns 0 (or a count) on success, -1 with errno set on failure (EBUSY: already
 * active; EINVAL: bad rate); the reason is also printed on stderr. Link with -lgmon_write (and -lpthread -ldl -lm for the static library).
 */
#ifndef GMON_WRITE_GMON_H
#define GMON_WRITE_GMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gmon_start flags. */
#define GMON_STACKS 1    /* record call stacks: a stack snapshot per tick, unwound with the
                            binaries' .eh_frame on a runtime thread (exact without frame pointers) */
#define GMON_NO_SHLIBS 2 /* do not record per-PC samples (shared libraries) in the sidecar */
#define GMON_FRAME_POINTERS 4 /* with GMON_STACKS: walk frame pointers in the signal handler
                            instead (cheaper; a function built without them hides its caller) */

/*
 * profil(2): on every tick, bin ((pc - offset) / 2) * scale / 65536 of `buf` (bufsiz bytes of
 * unsigned short) is incremented. scale 0 or 1, or buf == NULL, stops. A bin saturates at 65535
 * (it never wraps). Rate: 100 Hz per thread of CPU time ($GMON_PROFIL_HZ overrides).
 * `buf` must stay valid until profiling is stopped.
 */
int gmon_profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale);

/*
 * pcsample(2): store one program counter per tick into samples[0..nsamples) until it is full.
 * Returns the number of samples stored into the previous buffer (0 on the first call).
 * nsamples == 0 or samples == NULL stops sampling. `samples` must stay valid until the next call.
 */
long gmon_pcsample(uintptr_t *samples, long nsamples);

/*
 * Start the whole-process profiler at `hz` ticks per second of each thread's CPU time (0 = 1000).
 * `out` is the gmon.out path, or NULL for glibc's naming (gmon.out, or $GMON_OUT_PREFIX.<pid>).
 * The profile is written by gmon_stop, gmon_flush, or at exit(); a forked child writes
 * <name>.<pid>.
 */
int gmon_start(const char *out, unsigned int hz, int flags);

/* Stop the profiler and write the profile. */
int gmon_stop(void);

/* Write the profile recorded so far; sampling continues. */
int gmon_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* GMON_WRITE_GMON_H */
