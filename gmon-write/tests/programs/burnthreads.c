/* Starts argv[1] threads (default 4) that each burn argv[2] seconds of CPU (default 0.5), joins
 * them and exits 0. */
#include <pthread.h>
#include <stdlib.h>
#include "burn.h"

static double secs;

static void *run(void *arg)
{
    (void)arg;
    burn(secs);
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    secs = argc > 2 ? atof(argv[2]) : 0.5;
    if (n < 1 || n > 64)
        return 2;
    pthread_t t[64];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], 0, run, 0);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], 0);
    return 0;
}
