// C++ names whose demangled form is easy to get wrong (QA #2): integer template
// arguments of every integer type and bool, a lambda passed by reference to a
// template, a local class, and a constructor template. Every function does a
// little work so that gprof sees calls and, for the busy ones, samples.
#include <cstddef>

// An std::array-like aggregate: a template with a size_t (unsigned long) argument.
template <typename T, std::size_t N> struct Fixed {
	T v[N];
	__attribute__((noinline)) T sum() const {
		T s = 0;
		for (std::size_t i = 0; i < N; ++i)
			s += v[i];
		return s;
	}
};

// One template per integer type: the arguments are printed as 5, 5u, 5l, 5ul, 5ll, 5ull.
template <int I> __attribute__((noinline)) long as_int(long x) { return x * I + 1; }
template <unsigned U> __attribute__((noinline)) long as_uint(long x) { return x * U + 2; }
template <long L> __attribute__((noinline)) long as_long(long x) { return x * L + 3; }
template <unsigned long UL> __attribute__((noinline)) long as_ulong(long x) { return x * (long)UL + 4; }
template <long long LL> __attribute__((noinline)) long as_llong(long x) { return x * LL + 5; }
template <unsigned long long ULL> __attribute__((noinline)) long as_ullong(long x) { return x * (long)ULL + 6; }
template <bool B> __attribute__((noinline)) long flag(long x) { return B ? x + 7 : x - 7; }
template <char C> __attribute__((noinline)) long as_char(long x) { return x + C; }
template <long L> __attribute__((noinline)) long negative(long x) { return x - L; }

// Calls its function object through a reference: instantiated with the lambda type by reference.
template <typename F> __attribute__((noinline)) long apply_ref(F &f, long n) {
	long s = 0;
	for (long i = 0; i < n; ++i)
		s += f(i);
	return s;
}

// A constructor template: its first parameter is not a return type.
struct Box {
	long v;
	template <typename T> __attribute__((noinline)) Box(T a, long b) : v((long)a + b) {}
};

// Takes its function object by forwarding reference: called with an lvalue lambda, the
// template argument is the lambda type by reference (`RZ...UllE_`).
template <typename F> __attribute__((noinline)) long apply_fwd(F &&f, long n) {
	long s = 0;
	for (long i = 0; i < n; ++i)
		s += f(i) + 1;
	return s;
}

__attribute__((noinline)) long with_lambda(long n) {
	long k = n & 3;
	auto step = [k](long i) { return (i ^ k) & 7; };
	return apply_ref(step, n);
}

// A template enclosing a lambda and a local class: the enclosing function's return type is
// not part of the local names.
template <int K> __attribute__((noinline)) long in_template(long n) {
	auto step = [](long i) { return (i * K) & 15; };
	struct Local {
		__attribute__((noinline)) static long thrice(long x) { return 3 * x + K; }
	};
	return apply_fwd(step, n) + Local::thrice(n);
}

__attribute__((noinline)) long with_local_class(long n) {
	struct Local {
		__attribute__((noinline)) static long twice(long x) { return 2 * x + 1; }
	};
	long s = 0;
	for (long i = 0; i < n; ++i)
		s += Local::twice(i);
	return s;
}

int main(int argc, char **) {
	volatile long sink = 0;
	Fixed<int, 5> a = {{1, 2, 3, 4, argc}};
	Fixed<long, 500> b = {};
	for (long r = 0; r < 200000; ++r) {
		sink = sink + a.sum() + b.sum();
		sink = sink + as_int<5>(r) + as_uint<5u>(r) + as_long<5l>(r) + as_ulong<500ul>(r);
		sink = sink + as_llong<5ll>(r) + as_ullong<5ull>(r) + flag<true>(r) + flag<false>(r);
		sink = sink + as_char<'A'>(r) + negative<-5l>(r);
		sink = sink + with_lambda(r & 63) + with_local_class(r & 31);
		sink = sink + in_template<3>(r & 127);
		Box x(r, 1L);
		Box y(2.5, r);
		sink = sink + x.v + y.v;
	}
	return (int)(sink & 1);
}
