/* maincycle: main is a member of a call cycle (main -> step -> main), so the cycle
 * is only reached "spontaneously" (nothing profiled calls main from outside it).
 * Also two calls that never execute -- to forward_never (defined after its caller)
 * and backward_never (defined before it) -- which only gprof -c's static scan of
 * the machine code can find. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static int depth;

NOINLINE void backward_never(void)
{
	sink = 1;
}

NOINLINE void work(unsigned long n)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < n; i++)
		s = s * 7 + i;
	sink = s;
}

int main(int argc, char **argv);

NOINLINE int step(int argc, char **argv)
{
	work(100000);
	if (depth-- > 0)
		return main(argc, argv);
	return 0;
}

NOINLINE void forward_never(void);

int main(int argc, char **argv)
{
	static int entered;
	int outer = !entered;

	entered = 1;
	work(50000);
	if (!outer)
		return step(argc, argv);
	for (int r = 0; r < 400; r++) {
		depth = 20;
		step(argc, argv);
	}
	/* Never true (argc is 1): these calls exist only in the code. */
	if (argc > 99) {
		forward_never();
		backward_never();
	}
	printf("maincycle %lu\n", sink);
	return 0;
}

NOINLINE void forward_never(void)
{
	sink = 2;
}
