/* Compiled without -pg by regen.sh (any *.nopg.c file is). */
#define NOINLINE __attribute__((noinline))

void tracked_leaf(void);

static volatile unsigned long sink;

NOINLINE void untracked_hot(unsigned long n)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < n; i++)
		s ^= (s << 3) + i;
	sink = s;
}

NOINLINE void untracked_calls_back(int times)
{
	for (int i = 0; i < times; i++)
		tracked_leaf();
}
