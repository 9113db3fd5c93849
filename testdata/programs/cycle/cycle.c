/* cycle: a three-function call cycle (cyc_a -> cyc_b -> cyc_c -> cyc_a) entered
 * from two different callers, a second four-function cycle (ring_0..ring_3), and
 * leaves called from inside and outside the cycles. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void work(unsigned long n)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < n; i++)
		s = s * 2862933555777941757UL + i;
	sink = s;
}

NOINLINE void leaf(void)
{
	work(40000);
}

NOINLINE void cyc_b(int n);
NOINLINE void cyc_c(int n);

NOINLINE void cyc_a(int n)
{
	work(10000);
	if (n > 0)
		cyc_b(n - 1);
}

NOINLINE void cyc_b(int n)
{
	work(20000);
	if (n > 0)
		cyc_c(n - 1);
}

NOINLINE void cyc_c(int n)
{
	work(30000);
	if (n > 0)
		cyc_a(n - 1);
	else
		leaf();
}

NOINLINE void ring_1(int n);
NOINLINE void ring_2(int n);
NOINLINE void ring_3(int n);

NOINLINE void ring_0(int n)
{
	if (n > 0)
		ring_1(n - 1);
}

NOINLINE void ring_1(int n)
{
	work(5000);
	if (n > 0)
		ring_2(n - 1);
}

NOINLINE void ring_2(int n)
{
	if (n > 0)
		ring_3(n - 1);
	leaf();
}

NOINLINE void ring_3(int n)
{
	work(15000);
	if (n > 0)
		ring_0(n - 1);
}

/* A second entry point into the a/b/c cycle. */
NOINLINE void enter_at_b(void)
{
	cyc_b(7);
}

int main(void)
{
	for (int r = 0; r < 3000; r++) {
		cyc_a(9);
		enter_at_b();
		ring_0(11);
	}
	leaf();
	printf("cycle %lu\n", sink);
	return 0;
}
