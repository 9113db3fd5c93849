/* nosamples: exits at once. Call arcs are recorded, but the histogram is all
 * zeros (the process ends before the first 10 ms profiling tick). */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

NOINLINE int add(int a, int b)
{
	return a + b;
}

NOINLINE int twice(int a)
{
	return add(a, a);
}

int main(void)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s = twice(s + i);
	printf("nosamples %d\n", s);
	return 0;
}
