/*
 * cache_test.cpp - sim/cache.h's task_cache against a plain list: every touch reports the level of
 * its task's reuse distance (distinct tasks touched since), over random touches of a pool of tasks
 * with levels wider and narrower than the pool, and with runs of repeated touches. Run by `make
 * sim-test`; exits non-zero naming the first touch that disagrees.
 */
#include <cstdio>
#include <cstdlib>
#include <list>
#include <vector>

#include "../../sim/cache.h"

static unsigned expected(std::list<int> &lru, int obj, const std::vector<uint32_t> &caps)
{
	size_t d = 0;
	auto it = lru.begin();
	for (; it != lru.end() && *it != obj; ++it)
		d++;
	unsigned lv = (unsigned)caps.size();
	if (it != lru.end()) {
		/* d tasks were touched since: it is the (d+1)-th of the list */
		for (unsigned i = 0; i < caps.size(); i++)
			if (d + 1 <= caps[i]) {
				lv = i;
				break;
			}
		lru.erase(it);
	}
	lru.push_front(obj);
	if (!caps.empty() && lru.size() > caps.back())
		lru.pop_back(); /* the cache keeps no task beyond its last level */
	return lv;
}

static int check(const std::vector<uint32_t> &caps, int pool, int touches, uint64_t seed)
{
	task_cache c;
	c.reset(caps);
	std::list<int> lru;
	std::vector<char> objs((size_t)pool);
	uint64_t x = seed;
	int last = 0;
	for (int t = 0; t < touches; t++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* a third of the touches repeat one of the last few tasks (a worker's hot set) */
		int obj = (x >> 40) % 3 == 0 ? (last + (int)((x >> 20) % 4)) % pool : (int)(x % (uint64_t)pool);
		last = obj;
		unsigned want = expected(lru, obj, caps), got = c.touch(&objs[(size_t)obj]);
		if (want != got) {
			fprintf(stderr, "cache_test: caps %zu levels up to %u, pool %d: touch %d of task %d: level %u, want %u\n",
				caps.size(), caps.empty() ? 0 : caps.back(), pool, t, obj, got, want);
			return 1;
		}
	}
	return 0;
}

int main()
{
	int bad = 0;
	bad |= check({}, 50, 2000, 1);
	bad |= check({ 1 }, 5, 5000, 2);
	bad |= check({ 1, 2, 3 }, 6, 5000, 3);
	bad |= check({ 4, 8, 16, 32 }, 20, 20000, 4);  /* the pool fits the last level */
	bad |= check({ 4, 8, 16, 32 }, 100, 20000, 5); /* ... and overflows it */
	bad |= check({ 3, 4, 9, 10, 40 }, 60, 20000, 6);
	bad |= check({ 16, 64, 256 }, 1000, 50000, 7);
	if (!bad)
		printf("cache_test: every touch's level agrees with a plain list\n");
	return bad;
}
