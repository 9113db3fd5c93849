/* The bottom of the multifile call chain. */
#include "pipeline.h"

static volatile unsigned long sink;

/* Same name as helper in main.c and stage.c. */
NOINLINE static unsigned long helper(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = (x >> 3) + x * 5 + (unsigned long)i;
	sink = x;
	return x;
}

NOINLINE unsigned long util_hash(unsigned long x)
{
	return helper(x ^ 0x9e3779b97f4a7c15UL);
}

NOINLINE unsigned long util_mix(unsigned long x)
{
	return util_hash(x) + helper(x);
}

NOINLINE unsigned long util_checksum(unsigned long x)
{
	unsigned long s = 0;
	for (int i = 0; i < 5000; i++)
		s += (x >> (i % 64)) & 1;
	sink = s;
	return s;
}
