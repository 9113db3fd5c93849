// Implementation of the geom namespace.
#include "geom.h"

namespace {
volatile unsigned long sink;

// Same unqualified name as helper() in main.cpp (both internal linkage).
NOINLINE unsigned long helper(unsigned long n)
{
	unsigned long s = sink;
	for (unsigned long i = 0; i < n; i++)
		s = s * 6364136223846793005UL + i;
	sink = s;
	return s;
}
} // namespace

namespace geom {

NOINLINE Vec operator+(const Vec &a, const Vec &b)
{
	helper(10000);
	return Vec{a.x + b.x, a.y + b.y};
}

NOINLINE Shape::~Shape() {}

NOINLINE double Shape::scaled_area(double k) const
{
	return k * area();
}

NOINLINE Circle::Circle(double r) : r_(r) {}

NOINLINE Circle::~Circle() {}

NOINLINE double Circle::area() const
{
	helper(1500000);
	return 3.14159 * r_ * r_;
}

NOINLINE Rect::Rect(double w, double h) : w_(w), h_(h) {}

NOINLINE double Rect::area() const
{
	helper(500000);
	return w_ * h_;
}

namespace detail {
NOINLINE unsigned long churn(unsigned long n)
{
	return helper(n);
}
} // namespace detail

} // namespace geom
