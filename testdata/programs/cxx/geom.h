// Shared declarations of the cxx program: namespaces, a class hierarchy with
// virtual methods, templates, overloads and operators, so the symbol table holds
// many kinds of mangled names.
#ifndef GEOM_H
#define GEOM_H

#define NOINLINE __attribute__((noinline))

namespace geom {

struct Vec {
	double x, y;
};

Vec operator+(const Vec &a, const Vec &b);

class Shape {
public:
	virtual ~Shape();
	virtual double area() const = 0;
	double scaled_area(double k) const;
};

class Circle : public Shape {
public:
	explicit Circle(double r);
	~Circle() override;
	double area() const override;

private:
	double r_;
};

class Rect : public Shape {
public:
	Rect(double w, double h);
	double area() const override;

private:
	double w_, h_;
};

namespace detail {
unsigned long churn(unsigned long n);
}

} // namespace geom

// Overloads: same name, three signatures.
NOINLINE double mix(int v);
NOINLINE double mix(double v);
NOINLINE double mix(const char *s);

template <typename T> NOINLINE T accumulate_n(T start, unsigned n)
{
	T acc = start;
	for (unsigned i = 0; i < n; i++)
		acc = acc + static_cast<T>(i % 7);
	return acc;
}

#endif
