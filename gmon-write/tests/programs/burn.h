/* CPU burners shared by the test programs (self-contained, no libraries). */
#include <time.h>

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static unsigned long spin_leaf(unsigned long x)
{
    for (int i = 0; i < 1000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

/* Burns `secs` of the calling thread's CPU time. */
__attribute__((noinline)) static unsigned long burn(double secs)
{
    double t0 = thread_cpu();
    unsigned long x = 1;
    while (thread_cpu() - t0 < secs)
        x = spin_leaf(x);
    return x;
}
