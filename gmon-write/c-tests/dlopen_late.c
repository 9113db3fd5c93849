/* Built with -O2 -fomit-frame-pointer by gmon-write/tests/unwind.rs: loads libm with dlopen
 * after profiling started and burns CPU in its functions, so the unwinder must pick up the
 * CFI of an object loaded late. */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) double spin(double (*f)(double), double (*g)(double)) {
    double s = 0;
    for (int i = 0; i < 200000; i++)
        s += f(g(i * 1e-6 + 0.5));
    return s;
}

int main(void) {
    void *m = dlopen("libm.so.6", RTLD_NOW);
    if (!m)
        return 1;
    double (*f)(double) = (double (*)(double))dlsym(m, "erf");
    double (*g)(double) = (double (*)(double))dlsym(m, "lgamma");
    if (!f || !g)
        return 1;
    double s = 0, end = thread_cpu() + 0.4;
    while (thread_cpu() < end)
        s += spin(f, g);
    printf("%d\n", s != 0);
    return 0;
}
