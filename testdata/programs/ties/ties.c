/* ties: pairs of functions with identical call counts and identical time, to
 * pin down gprof's tie orders.
 * - tie_a and tie_b are each called 50 times by main and call work 100 times
 *   each; they have (almost surely) no self time, so the child time propagated
 *   to them from work is identical.
 * - zero_a and zero_b are called 7 times each and do nothing: equal counts,
 *   zero time.
 * The functions are defined in an order (b before a) different from their name
 * order, so address order and name order disagree. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void zero_b(void)
{
}

NOINLINE void zero_a(void)
{
}

NOINLINE void work(void)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < 150000; i++)
		s = s * 0x5851f42d4c957f2dUL + i;
	sink = s;
}

NOINLINE void tie_b(void)
{
	for (int i = 0; i < 100; i++)
		work();
}

NOINLINE void tie_a(void)
{
	for (int i = 0; i < 100; i++)
		work();
}

int main(void)
{
	for (int i = 0; i < 50; i++) {
		tie_a();
		tie_b();
	}
	for (int i = 0; i < 7; i++) {
		zero_b();
		zero_a();
	}
	printf("ties %lu\n", sink);
	return 0;
}
