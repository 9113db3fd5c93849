/* asmsyms: hand-written functions (syms.S) whose LOCAL symbol names exercise gprof's
 * rules for accepting static functions: GCC clone suffixes (.constprop.N, .clone.N,
 * .isra.N, .part.N, .cold), plain numeric suffixes (.N), other dotted suffixes and '$'.
 * Rejected symbols do not appear; their samples and calls go to the symbol before them.
 * Whether a name with a numeric suffix is kept also depends on the NEXT string in
 * .strtab (gprof scans past the terminating NUL), so the order of definitions in
 * syms.S matters. Every function calls mcount like -pg code, so all have arcs. */
#include <stdio.h>

void asm_driver(unsigned long n);

int main(void)
{
	for (int r = 0; r < 40; r++)
		asm_driver(4000000);
	puts("asmsyms");
	return 0;
}
