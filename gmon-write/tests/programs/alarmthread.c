/* The program's signal handlers run on the program's threads only. main blocks SIGALRM and
 * arms ITIMER_REAL, so the (process-directed) signal can only be taken by a thread that does
 * not block it: without the runtime, none until main unblocks it after 0.3 s of CPU time.
 * The handler prints whether it runs on main, then calls exit(3) from there. Were it run on a
 * runtime thread (the unwinder inside its walk of the loaded objects, the watcher holding the
 * runtime's lock), exit would find the runtime's own locks held by the interrupted code. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

static pid_t main_tid;

static void on_alarm(int sig)
{
    (void)sig;
    char buf[64];
    int n = snprintf(buf, sizeof buf, "on_main=%d\n", gettid() == main_tid);
    write(1, buf, (size_t)n);
    exit(3);
}

int main(void)
{
    main_tid = gettid();
    signal(SIGALRM, on_alarm);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alrm, 0);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 1000;
    it.it_interval.tv_usec = 1000;
    setitimer(ITIMER_REAL, &it, 0);
    burn(0.3);
    sigprocmask(SIG_UNBLOCK, &alrm, 0);
    for (;;)
        pause();
}
