/* threads: three POSIX threads running different workers while the main thread
 * works too. ITIMER_PROF samples every thread's PC into the one histogram; the
 * mcount arc table is shared (glibc drops arcs that race with another thread). */
#include <pthread.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE static unsigned long grind(unsigned long n, unsigned long seed)
{
	unsigned long s = seed;
	for (unsigned long i = 0; i < n; i++)
		s = (s ^ i) * 0x100000001b3UL;
	return s;
}

NOINLINE unsigned long worker_small(unsigned long n)
{
	return grind(n, 1);
}

NOINLINE unsigned long worker_large(unsigned long n)
{
	return grind(n * 3, 2);
}

NOINLINE static void *thread_main(void *arg)
{
	unsigned long id = (unsigned long)arg;
	unsigned long s = 0;
	for (int r = 0; r < 3000; r++)
		s += id == 1 ? worker_large(100000) : worker_small(100000);
	sink = s;
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	for (unsigned long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	unsigned long s = 0;
	for (int r = 0; r < 3000; r++)
		s += worker_small(100000);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("threads %lu %lu\n", s, sink);
	return 0;
}
