/* Ends by a signal after spending 0.2 s of CPU time: argv[1] "segv" dereferences NULL (SIGSEGV),
 * "kill" sends itself SIGKILL. */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "cpu.h"

int main(int argc, char **argv)
{
    spend(0.2);
    if (argc > 1 && strcmp(argv[1], "kill") == 0)
        kill(getpid(), SIGKILL);
    volatile int *nowhere = NULL;
    return *nowhere;
}
