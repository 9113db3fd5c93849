/* Exercises every function of gmon.h. Exit status 0 = all checks passed; prints what failed. */
#include "gmon.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hot_loop(double seconds) {
    double start = thread_cpu();
    unsigned long x = 88172645463325252UL;
    while (thread_cpu() - start < seconds) {
        for (int i = 0; i < 200000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }
    sink = x;
}

/* A marker right after hot_loop, to size the profil buffer. */
__attribute__((noinline)) void after_hot_loop(void) { sink = 0; }

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv) {
    const char *out = argc > 1 ? argv[1] : "gmon.out";
    /* "fp" as the second argument: walk frame pointers instead of unwinding snapshots. */
    int walk = argc > 2 && strcmp(argv[2], "fp") == 0 ? GMON_FRAME_POINTERS : 0;

    /* profil over our own text: one bin per 2 bytes from hot_loop's start. */
    static unsigned short bins[4096];
    uintptr_t lo = (uintptr_t)&hot_loop;
    CHECK(gmon_profil(bins, sizeof bins, lo, 0x10000) == 0, "gmon_profil: %s", strerror(errno));
    hot_loop(0.3);
    CHECK(gmon_profil(NULL, 0, 0, 0) == 0, "gmon_profil stop");
    unsigned long total = 0;
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) total += bins[i];
    /* 0.3 s at 100 Hz = 30 ticks; most land in hot_loop's loop. */
    CHECK(total >= 15, "profil counted only %lu ticks", total);
    printf("profil: %lu ticks\n", total);

    /* pcsample: the first call returns 0, the next the number stored in the first buffer. */
    static uintptr_t pcs[16];
    static uintptr_t pcs2[16];
    CHECK(gmon_pcsample(pcs, 16) == 0, "first gmon_pcsample");
    hot_loop(0.3);
    long n = gmon_pcsample(pcs2, 16);
    CHECK(n == 16, "pcsample stored %ld of 16 (buffer should be full)", n);
    CHECK(pcs[0] != 0 && pcs[15] != 0, "pcsample left zeros");
    long m = gmon_pcsample(NULL, 0);
    CHECK(m >= 0 && m <= 16, "pcsample stop returned %ld", m);
    printf("pcsample: %ld then %ld\n", n, m);

    /* A conflicting start is refused with EBUSY. */
    CHECK(gmon_start(out, 1000, GMON_STACKS | walk) == 0, "gmon_start: %s", strerror(errno));
    errno = 0;
    CHECK(gmon_start(out, 1000, 0) == -1 && errno == EBUSY, "second gmon_start must fail");
    hot_loop(0.2);
    CHECK(gmon_flush() == 0, "gmon_flush: %s", strerror(errno));
    hot_loop(0.2);
    CHECK(gmon_stop() == 0, "gmon_stop: %s", strerror(errno));
    after_hot_loop();
    printf("wrote %s\n", out);
    return 0;
}
