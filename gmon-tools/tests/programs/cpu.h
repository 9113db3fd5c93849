/* Shared by the record suite's C programs: spend a given amount of this thread's CPU time in a
 * function the profile can name. */
#include <time.h>

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static volatile unsigned long cpu_sink;

__attribute__((noinline)) static void spend(double seconds)
{
    double start = thread_cpu();
    unsigned long x = 0x9e3779b97f4a7c15UL;
    while (thread_cpu() - start < seconds)
        for (int i = 0; i < 50000; i++)
            x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9UL + 1;
    cpu_sink = x;
}
