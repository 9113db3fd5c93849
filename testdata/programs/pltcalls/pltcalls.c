/* pltcalls: a hot loop of calls to a tiny libc function (labs) through the PLT.
 * The time inside labs is in libc.so, outside the histogram range, and is lost;
 * the time in the PLT stub (in .plt, between .init and .text) is in range and
 * owned by no function but the symbol before it, _init, so gprof credits _init
 * with samples although _init never runs during the loop.
 * Built with -fno-builtin-labs so the call is not inlined. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile long value = -3;
static volatile long sink;

NOINLINE void plt_loop(unsigned long n)
{
	long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += labs(value);
	sink = s;
}

NOINLINE void plain_loop(unsigned long n)
{
	long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += value;
	sink = s;
}

int main(void)
{
	for (int r = 0; r < 40; r++) {
		plt_loop(60000000UL);
		plain_loop(5000000UL);
	}
	printf("pltcalls %ld\n", sink);
	return 0;
}
