/*
 * rand.c - sb_rand (core/policy.h): a per-thread xorshift64* for policies (victim choice, random
 * placement) and chaos mode; threads without a context share one atomic sequence.
 */
#include "rt.h"

uint64_t sb_rand(void)
{
	struct sb_thread *tc = sb_self;
	static _Atomic uint64_t shared = 0x9e3779b97f4a7c15ull;
	if (!tc)
		return atomic_fetch_add_explicit(&shared, 0x9e3779b97f4a7c15ull, memory_order_relaxed);
	/* xorshift64*: per thread, no sharing */
	uint64_t x = tc->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	tc->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}
