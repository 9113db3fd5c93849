/* The middle of the multifile call chain. */
#include "pipeline.h"

static volatile unsigned long sink;

/* Same name as helper in main.c and util.c. */
NOINLINE static unsigned long helper(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x ^= x << 7 ^ (unsigned long)i;
	sink = x;
	return x;
}

NOINLINE unsigned long stage_parse(unsigned long x)
{
	x = helper(x);
	return stage_transform(x);
}

NOINLINE unsigned long stage_transform(unsigned long x)
{
	for (int i = 0; i < 4; i++)
		x = util_mix(x + (unsigned long)i);
	return stage_emit(x);
}

NOINLINE unsigned long stage_emit(unsigned long x)
{
	return util_checksum(x);
}

NOINLINE unsigned long run_pipeline(unsigned rounds)
{
	unsigned long x = 1;
	for (unsigned r = 0; r < rounds * 2000; r++)
		x += stage_parse(x + r);
	return x;
}
