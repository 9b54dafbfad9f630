// SPDX-License-Identifier: GPL-2.0
/*
 * cxxload: a C++ program for pfmon's profile of mangled names. For
 * SECONDS (default 1) it calls pfmon_test::Heavy<long>::crunch(long),
 * which the profile must show demangled.
 *
 *   cxxload [SECONDS]
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace pfmon_test {
template <typename T> struct Heavy {
	__attribute__((noinline)) static T crunch(T n)
	{
		T s = 0;

		for (T i = 0; i < n; i++)
			s += i * i % 7;
		return s;
	}
};
} // namespace pfmon_test

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
	auto stop = clock::now() + std::chrono::duration<double>(secs);
	volatile long sink = 0;
	unsigned long calls = 0;

	if (argc > 2 || !(secs > 0) || secs > 86400) {
		std::fprintf(stderr, "usage: cxxload [SECONDS]\n");
		return 2;
	}
	while (clock::now() < stop) {
		sink = sink + pfmon_test::Heavy<long>::crunch(100000);
		calls++;
	}
	std::printf("cxxload: %lu calls of pfmon_test::Heavy<long>::crunch(long)\n",
		    calls);
	return 0;
}
