/*
 * cache_test.cpp - sim/cache.h's task_cache against a plain list: every touch reports the level of
 * its task's reuse distance (distinct tasks touched since), over random touches of a pool of tasks
 * with levels wider and narrower than the pool, and with runs of repeated touches; and addr_map
 * against std::unordered_map, with keys 1 byte apart (many to a line: its overflow) and 104 bytes
 * apart (a task's size: one to a line). Run by `make sim-test`; exits non-zero naming the first
 * touch or operation that disagrees.
 */
#include <cstdio>
#include <cstdlib>
#include <list>
#include <unordered_map>
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

/* random put, find, take and erase of pool keys spaced stride bytes apart */
static int check_map(size_t stride, int pool, int ops, uint64_t seed)
{
	addr_map<uint64_t> m;
	std::unordered_map<const void *, uint64_t> want;
	std::vector<char> mem((size_t)pool * stride);
	uint64_t x = seed;
	for (int t = 0; t < ops; t++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		const void *k = &mem[(size_t)(x % (uint64_t)pool) * stride];
		unsigned op = (unsigned)(x >> 58) % 4;
		uint64_t got = 0;
		bool had = want.count(k) != 0, ok = true;
		if (op == 0) {
			m.put(k) = x;
			want[k] = x;
		} else if (op == 1) {
			uint64_t *v = m.find(k);
			ok = (v != nullptr) == had && (!v || *v == want[k]);
		} else if (op == 2) {
			ok = m.take(k, &got) == had && (!had || got == want[k]);
			want.erase(k);
		} else {
			m.erase(k);
			want.erase(k);
		}
		if (!ok) {
			fprintf(stderr, "cache_test: addr_map, stride %zu, pool %d: operation %d (%u) on key %zu disagrees\n", stride,
				pool, t, op, (size_t)((const char *)k - mem.data()) / stride);
			return 1;
		}
	}
	for (auto &kv : want)
		if (!m.find(kv.first) || *m.find(kv.first) != kv.second) {
			fprintf(stderr, "cache_test: addr_map, stride %zu: a key put is not found at the end\n", stride);
			return 1;
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
	bad |= check_map(1, 300, 100000, 8);
	bad |= check_map(104, 3000, 200000, 9);
	bad |= check_map(4096, 2000, 100000, 10);
	if (!bad)
		printf("cache_test: every touch's level agrees with a plain list, every addr_map operation with a hash map\n");
	return bad;
}
