/* mixed: one translation unit (untracked.nopg.c) is compiled WITHOUT -pg, the way a
 * library built without profiling ends up in a profiled program.
 * - untracked_hot has samples but calls no mcount: no call count, and the call to it
 *   from tracked_caller is invisible, so gprof shows it as <spontaneous>.
 * - untracked_calls_back calls the -pg function tracked_leaf: that arc IS recorded
 *   (mcount runs in the callee), with a caller address inside the unprofiled function. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

void untracked_hot(unsigned long n);
void untracked_calls_back(int times);

static volatile unsigned long sink;

NOINLINE void tracked_leaf(void)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < 200000; i++)
		s = s * 3 + i;
	sink = s;
}

NOINLINE void tracked_caller(void)
{
	untracked_hot(2000000);
}

int main(void)
{
	for (int r = 0; r < 500; r++) {
		tracked_caller();
		untracked_calls_back(10);
		tracked_leaf();
	}
	printf("mixed %lu\n", sink);
	return 0;
}
