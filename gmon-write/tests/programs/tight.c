/* Spends argv[1] seconds of CPU in a two-instruction loop: at a high rate nearly every tick
 * lands in one or two histogram bins, which then exceed 65535. */
#include <stdlib.h>
#include "burn.h"

__attribute__((noinline)) static void spin(unsigned long n)
{
#if defined(__x86_64__)
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
#elif defined(__aarch64__)
    __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n));
#else
    while (n--)
        __asm__ volatile("");
#endif
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double t0 = thread_cpu();
    while (thread_cpu() - t0 < secs)
        spin(20000000);
    return 0;
}
