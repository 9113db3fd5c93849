/* exit() from a signal handler that may interrupt malloc or free: the at-exit profile writer
 * then runs inside the interrupted allocator. SIGALRM after 0.3 s of real time ends the
 * allocation loop; the exit status is 3. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
    exit(3);
}

__attribute__((noinline)) static void churn(void)
{
    for (;;) {
        void *blocks[48];
        for (int i = 0; i < 48; i++)
            blocks[i] = malloc(24 + (size_t)i * 41);
        for (int i = 47; i >= 0; i--)
            free(blocks[i]);
    }
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    ualarm(300000, 0);
    churn();
}
