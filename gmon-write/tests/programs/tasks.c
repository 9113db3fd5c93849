/* Prints the threads of the process (the names in /proc/self/task/<tid>/comm, sorted, comma
 * separated) as the program starts ("start="), in a child forked then ("child="), and after
 * burning argv[1] seconds of CPU (default 0.2, "later="). A process shorter than the runtime's
 * first period runs no unwinder thread (spec/runtime.md §4.4). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

static int cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void print_tasks(const char *when)
{
    char names[64][32];
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64) {
        if (e->d_name[0] == '.')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(names[n], sizeof names[n], f))
            names[n][0] = 0;
        names[n][strcspn(names[n], "\n")] = 0;
        fclose(f);
        n++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof names[0], cmp);
    printf("%s=%d", when, n);
    for (int i = 0; i < n; i++)
        printf("%c%s", i ? ',' : ' ', names[i]);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.2;
    print_tasks("start");
    pid_t p = fork();
    if (p == 0) {
        print_tasks("child");
        exit(0);
    }
    waitpid(p, 0, 0);
    burn(secs);
    print_tasks("later");
    return 0;
}
