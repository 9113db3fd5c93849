// cxx: C++ with mangled names -- namespaces, a class hierarchy with virtual
// methods, constructors/destructors, templates instantiated for two types,
// overloads, an operator, and two internal-linkage functions named helper().
// Usage: prog [rounds]   (default 600)
#include <cstdio>
#include <cstdlib>
#include "geom.h"

namespace {
volatile unsigned long sink;

// Same unqualified name as helper() in geom.cpp.
NOINLINE unsigned long helper(unsigned long n)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < n; i++)
		s ^= (s << 5) + i;
	sink = s;
	return s;
}
} // namespace

NOINLINE double mix(int v)
{
	helper(200000);
	return v * 2.0;
}

NOINLINE double mix(double v)
{
	helper(400000);
	return v / 2.0;
}

NOINLINE double mix(const char *s)
{
	helper(100000);
	return s[0];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 600;
	double total = 0;
	geom::Vec v{0, 0};
	for (int r = 0; r < rounds; r++) {
		geom::Circle c(1.0 + r % 3);
		geom::Rect q(2.0, 1.0 + r % 5);
		const geom::Shape *shapes[] = {&c, &q};
		for (const geom::Shape *s : shapes)
			total += s->scaled_area(0.5);
		total += mix(r) + mix(r * 0.25) + mix("x");
		total += accumulate_n<int>(r, 150000);
		total += accumulate_n<double>(r, 75000);
		v = v + geom::Vec{1.0, 2.0};
		total += geom::detail::churn(250000);
	}
	std::printf("cxx %g %g\n", total, v.x + v.y);
	return 0;
}
