/* A hot static function that the compiler inlines into a loop in several pieces.
   Built with clang (DWARF 5), the inlined copy's address ranges are a DW_FORM_rnglistx
   list, which BFD 2.40 does not read: GNU gprof -l then names those lines after the
   enclosing function, not the inlined one. gcc builds of the same source place it. */
#include <stdio.h>
#include <stdlib.h>

static inline unsigned mix(unsigned x)
{
	if (x & 1)
		x = x * 2654435761u + (x >> 7);
	else
		x ^= x << 5;
	return x + (x >> 3);
}

__attribute__((noinline)) unsigned work(unsigned n)
{
	unsigned s = 0;
	for (unsigned i = 0; i < n; i++)
		s += mix(i ^ s) ^ (s >> 1);
	return s;
}

__attribute__((noinline)) unsigned twice(unsigned n)
{
	return work(n) + work(n / 2);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 30000;
	unsigned s = 0;
	for (unsigned k = 0; k < rounds; k++)
		s += twice(2000 + (k & 7));
	printf("%u\n", s);
	return 0;
}
