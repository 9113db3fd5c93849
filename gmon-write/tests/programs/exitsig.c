/* exit() from a signal handler while the main thread is (most likely) inside malloc or free,
 * holding malloc's lock: the at-exit profile writer must not allocate. Exits 3 after ~0.2 s. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void on_alarm(int sig) { (void)sig; exit(3); }

__attribute__((noinline)) static void churn(void)
{
    for (;;) {
        void *p[64];
        for (int i = 0; i < 64; i++)
            p[i] = malloc(16 + i * 37);
        for (int i = 0; i < 64; i++)
            free(p[i]);
    }
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 200000;
    setitimer(ITIMER_REAL, &it, 0);
    churn();
}
