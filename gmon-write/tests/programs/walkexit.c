/* exit() from a signal handler that interrupted the program's own dl_iterate_phdr, so this
 * thread holds glibc's loader lock (recursive: the at-exit writer may walk the objects again on
 * this thread). Meanwhile the runtime's unwinder thread tries to walk them too and waits for that
 * lock: the at-exit writer must not wait for the unwinder. Exits 3 after ~0.3 s. */
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void on_alarm(int sig) { (void)sig; exit(3); }

static volatile unsigned long sink;

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    /* Stay inside the walk long enough that the unwinder's own walk waits for us. */
    for (int i = 0; i < 2000000; i++)
        sink += (unsigned long)info->dlpi_addr + i;
    return 0;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 300000;
    setitimer(ITIMER_REAL, &it, 0);
    for (;;)
        dl_iterate_phdr(visit, 0);
}
