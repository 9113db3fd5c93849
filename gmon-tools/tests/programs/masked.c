/* Worker threads that block every signal (pthread_sigmask with a full set) and spend CPU time:
 * a sampler the program can mask would see nothing of them. Three workers of 0.3 s each; the
 * main thread only waits. Prints a line per worker, in order. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include "cpu.h"

static void *worker(void *arg)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    spend(0.3);
    return arg;
}

int main(void)
{
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 2;
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("worker %ld done\n", (long)r);
    }
    return 0;
}
