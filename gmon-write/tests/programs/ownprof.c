/* A program that profiles itself: its own SIGPROF handler and ITIMER_PROF at 100 Hz.
 * Prints how many ticks its handler saw in 0.5 s of CPU time (about 50 without any profiler). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include "burn.h"

static volatile long hits;
static void on_prof(int sig) { (void)sig; hits++; }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    if (sigaction(SIGPROF, &sa, 0) != 0)
        return 2;
    struct itimerval it = {{0, 10000}, {0, 10000}};
    if (setitimer(ITIMER_PROF, &it, 0) != 0)
        return 3;
    burn(0.5);
    printf("hits=%ld\n", hits);
    return 0;
}
