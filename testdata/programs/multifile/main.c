/* multifile: a call chain across three translation units,
 * main -> run_pipeline -> stage_parse -> stage_transform -> util_mix -> util_hash
 *      -> helper (util.c), plus a static helper with the same name in stage.c and
 * a third one here in main.c. */
#include <stdio.h>
#include <stdlib.h>
#include "pipeline.h"

static volatile unsigned long sink;

/* Same name as the statics in stage.c and util.c. */
NOINLINE static unsigned long helper(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 31 + (unsigned long)i;
	sink = x;
	return x;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 40;
	unsigned long r = run_pipeline(rounds);
	r += helper(r);
	printf("multifile %lu\n", r);
	return 0;
}
