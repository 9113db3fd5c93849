/* outside: samples that no function symbol owns.
 * - hot_outside (outside_hot.S) is code placed in a note section ahead of .init;
 *   linked with -z noseparate-code that section is executable, and its symbol is
 *   an object-like 'R' symbol that gprof ignores, so its samples fall below the
 *   first function symbol: counted in the total time, credited to nobody.
 * - plt_heavy calls strlen through the PLT millions of times: samples in the
 *   .plt stubs are credited to _init; samples inside libc.so are not recorded. */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

void hot_outside(unsigned long n);

static volatile unsigned long sink;
char text[4] = "ab";

NOINLINE void inside(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i * i;
	sink = s;
}

NOINLINE void plt_heavy(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) {
		/* The write keeps the compiler from hoisting strlen out of the loop. */
		text[1] = (char)('a' + (i & 1));
		s += strlen(text);
	}
	sink = s;
}

int main(void)
{
	for (int r = 0; r < 40; r++) {
		hot_outside(60000000UL);
		inside(8000000UL);
		plt_heavy(10000000UL);
	}
	printf("outside %lu\n", sink);
	return 0;
}
