/* Built with -O2 -fomit-frame-pointer by gmon-write/tests/unwind.rs: main and a second thread
 * each call outer -> middle -> leaf, which burns CPU. Only .eh_frame can unwind these frames. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf(unsigned long n) {
    unsigned long x = n;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + i;
    return x;
}

__attribute__((noinline)) unsigned long middle(unsigned long n) {
    unsigned long s = 0;
    for (int k = 0; k < 4; k++)
        s += leaf(n + k) >> k;
    return s;
}

__attribute__((noinline)) unsigned long outer(unsigned long n) {
    unsigned long s = 0;
    for (int k = 0; k < 2; k++)
        s ^= middle(n + k) + k;
    return s;
}

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void burn(double seconds) {
    double end = thread_cpu() + seconds;
    while (thread_cpu() < end)
        sink += outer(20000);
}

__attribute__((noinline)) void *thread_main(void *arg) {
    (void)arg;
    burn(0.3);
    return NULL;
}

int main(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        return 1;
    burn(0.5);
    pthread_join(t, NULL);
    printf("%lu\n", sink != 0);
    return 0;
}
