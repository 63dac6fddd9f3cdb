/*
 * random.c - the workloads' deterministic random numbers and cost distributions (common.h).
 */
#include "common.h"

#include <math.h>

const char *const wl_dist_names[] = { "fixed", "exp", "lognormal", "uniform", NULL };

static uint64_t splitmix64(uint64_t *x)
{
	return wl_mix64(*x += 0x9e3779b97f4a7c15ull);
}

void wl_rng_seed(struct wl_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t wl_rng_next(struct wl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double wl_rng_unit(struct wl_rng *r)
{
	return (double)(wl_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t wl_rng_below(struct wl_rng *r, uint64_t n)
{
	return n ? wl_rng_next(r) % n : 0;
}

double wl_rng_exp(struct wl_rng *r, double mean)
{
	return -mean * log1p(-wl_rng_unit(r));
}

uint64_t wl_cost(struct wl_rng *r, int dist, double mean_ns)
{
	double v;
	switch (dist) {
	case WL_EXP:
		v = wl_rng_exp(r, mean_ns);
		break;
	case WL_LOGNORMAL: {
		/* sigma 1: mean = exp(mu + 1/2), so mu = ln(mean) - 1/2 */
		double u1 = wl_rng_unit(r), u2 = wl_rng_unit(r);
		double z = sqrt(-2.0 * log1p(-u1)) * cos(2.0 * M_PI * u2);
		v = exp(log(mean_ns > 1 ? mean_ns : 1) - 0.5 + z);
		break;
	}
	case WL_UNIFORM:
		v = 2.0 * mean_ns * wl_rng_unit(r);
		break;
	default:
		v = mean_ns;
	}
	return v > 0 ? (uint64_t)v : 0;
}

int wl_pick(struct wl_rng *r, const int64_t *weights, int n)
{
	int64_t total = 0;
	for (int i = 0; i < n; i++)
		total += weights[i] > 0 ? weights[i] : 0;
	if (total <= 0)
		return -1;
	int64_t x = (int64_t)wl_rng_below(r, (uint64_t)total);
	for (int i = 0; i < n; i++) {
		if (weights[i] <= 0)
			continue;
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}
