/* Traps of GNU gprof's analysis that the other programs do not reach (see
 * spec/gprof.md, "Quirks reproduced on purpose", and testdata/extra-cases.sh):
 *  - main <-> f recursion: a cycle reached only spontaneously (its header is
 *    not printed, the index shows "(N) <cycle 1>");
 *  - calls that never run, one to a function defined earlier (backward) and one
 *    to a function defined later (forward): gprof -c finds only the forward one;
 *  - a weak function (nm letter W);
 *  - hot local assembly symbols whose names gprof accepts or rejects depending
 *    on their suffix and on the *next* string of .strtab (traps_asm.S). */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

static void burn(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

void early(void) { burn(1000); }

void asm_entry(void);
void late(void);

__attribute__((weak)) void weak_fn(void) { burn(3000000); }

static int depth;
int f(int n);

void never_runs(int never)
{
	if (never) {
		early();
		late();
	}
}

int main(int argc, char **argv)
{
	(void)argv;
	if (depth++ == 0) {
		never_runs(argc > 100);
		for (int i = 0; i < 3; i++)
			asm_entry();
		weak_fn();
		f(40);
		printf("%ld\n", sink);
	}
	return 0;
}

int f(int n)
{
	burn(200000);
	if (n > 0)
		main(0, 0);
	return n;
}

void late(void) { burn(1000); }
