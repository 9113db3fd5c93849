/* Signal hygiene as a program sees it:
 * - a worker thread blocks every signal (pthread_sigmask with a full set) and burns 0.4 s;
 * - the program sets a handler on SIGRTMAX-1 (the runtime's sample signal), reads it back, and
 *   raises it: its own handler must run exactly once;
 * - sigprocmask(SIG_BLOCK, full) in the main thread, then burn 0.2 s.
 * Prints "worker=<tid> rt_hits=<n> readback=<0|1>". */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "burn.h"

static volatile pid_t worker_tid;
static volatile int rt_hits;

static void on_rt(int sig) { (void)sig; rt_hits++; }

static void *worker(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, 0);
    worker_tid = gettid();
    burn(0.4);
    return 0;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, 0, worker, 0) != 0)
        return 2;
    pthread_join(t, 0);

    struct sigaction sa, back;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_rt;
    if (sigaction(SIGRTMAX - 1, &sa, 0) != 0)
        return 3;
    memset(&back, 0, sizeof back);
    sigaction(SIGRTMAX - 1, 0, &back);
    int readback = back.sa_handler == on_rt;
    raise(SIGRTMAX - 1);

    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, 0);
    burn(0.2);
    printf("worker=%d rt_hits=%d readback=%d\n", (int)worker_tid, rt_hits, readback);
    return 0;
}
