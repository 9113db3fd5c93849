/* recurse: direct recursion (fact, fib), mutual recursion (is_even <-> is_odd),
 * a static hot leaf (spin) and a global function that is never called.
 * Usage: prog [scale]   -- scale (default 1) multiplies the work, so several runs
 * of the same binary give different call counts. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

/* The hot leaf: every other function calls it, so it holds most samples. */
NOINLINE static unsigned long spin(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	sink = s;
	return s;
}

/* Direct recursion with self time in every frame. */
NOINLINE unsigned long fact(unsigned n)
{
	spin(600000);
	return n <= 1 ? 1 : n * fact(n - 1);
}

NOINLINE int is_odd(unsigned n);

/* Mutual recursion: is_even and is_odd form a two-member cycle. */
NOINLINE int is_even(unsigned n)
{
	spin(300000);
	return n == 0 ? 1 : is_odd(n - 1);
}

NOINLINE int is_odd(unsigned n)
{
	spin(300000);
	return n == 0 ? 0 : is_even(n - 1);
}

/* Many cheap recursive calls: large arc counts on a self-arc. */
NOINLINE unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Never called: present in the symbol table, absent from the call graph. */
NOINLINE void never_called(void)
{
	spin(1);
	puts("never called");
}

int main(int argc, char **argv)
{
	unsigned scale = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	unsigned long acc = 0;

	for (unsigned r = 0; r < 120 * scale; r++) {
		acc += fact(12);
		acc += (unsigned long)is_even(31 + r % 2);
	}
	acc += fib(26 + scale);
	printf("recurse %lu\n", acc);
	return 0;
}
