/*
 * cache.h - the simulator's bookkeeping of task memory (sim/exec_sim.cpp): where each queued task
 * was pushed, and how far back in the machine's cache each task's memory lies.
 *
 * Header-only so that tests/sim/cache_test.cpp checks task_cache against a plain list.
 */
#ifndef SB_SIM_CACHE_H
#define SB_SIM_CACHE_H

#include <cstddef>
#include <cstdint>
#include <vector>

/* A table keyed by an object's address: open addressing with linear probing and deletion by
 * backward shift, so that a lookup touches one or two adjacent slots. The std::unordered_map it
 * replaced spent a quarter of a 64-worker fork-join run's wall time walking its buckets' node
 * chains (perf). Only put, find, take and erase: its order never shows in a result. */
template <class V> class addr_table {
public:
	/* key's value (inserted, or the one already there to overwrite). */
	V &put(const void *key)
	{
		if (2 * (count + 1) > slots.size())
			grow();
		size_t i = find_slot(key);
		if (!slots[i].key) {
			slots[i].key = key;
			count++;
		}
		return slots[i].v;
	}
	V *find(const void *key)
	{
		if (slots.empty())
			return nullptr;
		size_t i = find_slot(key);
		return slots[i].key ? &slots[i].v : nullptr;
	}
	/* Take key's value out into *out: false if it has none. */
	bool take(const void *key, V *out)
	{
		if (slots.empty())
			return false;
		size_t i = find_slot(key);
		if (!slots[i].key)
			return false;
		*out = slots[i].v;
		erase_at(i);
		return true;
	}
	void erase(const void *key)
	{
		if (slots.empty())
			return;
		size_t i = find_slot(key);
		if (slots[i].key)
			erase_at(i);
	}

private:
	struct slot {
		const void *key = nullptr;
		V v{};
	};
	std::vector<slot> slots; /* a power of two of them, at most half full */
	size_t count = 0, mask = 0;
	unsigned shift = 64;

	/* Fibonacci hashing: the product's top bits, which every bit of the address reaches
	 * (task addresses share their low bits). */
	size_t home(const void *k) const
	{
		return (size_t)(((uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull) >> shift);
	}
	/* pull back every later entry of the run that may sit in the hole: one whose home is no
	 * nearer to its slot than the hole is */
	void erase_at(size_t i)
	{
		for (size_t j = (i + 1) & mask; slots[j].key; j = (j + 1) & mask)
			if (((j - home(slots[j].key)) & mask) >= ((j - i) & mask)) {
				slots[i] = slots[j];
				i = j;
			}
		slots[i].key = nullptr;
		count--;
	}
	size_t find_slot(const void *k) const
	{
		size_t i = home(k);
		while (slots[i].key && slots[i].key != k)
			i = (i + 1) & mask;
		return i;
	}
	void grow()
	{
		std::vector<slot> old = std::move(slots);
		size_t n = old.empty() ? 1024 : 2 * old.size();
		slots.assign(n, slot{});
		mask = n - 1;
		shift = 64 - (unsigned)__builtin_ctzll(n);
		for (const slot &s : old)
			if (s.key)
				slots[find_slot(s.key)] = s;
	}
};

/* An address-keyed map laid out like the memory it indexes: a 4 KiB page of keys has one block
 * of 64 slots, one per 64-byte line, found through a small table of pages; a key whose line's
 * slot another key holds (objects under 64 bytes apart) goes to an overflow addr_table. Tasks
 * pushed or popped one after another mostly lie in the same few pages, so their slots share
 * cache lines, where addr_table scatters them over a table of the whole frontier's size (a
 * 64-worker fork-join run spent half of task_cache::touch waiting for that table's slot: perf).
 * The same interface as addr_table; blocks are kept for the run. */
template <class V> class addr_map {
public:
	V &put(const void *key)
	{
		uint32_t *b = pages.find(page_of(key));
		if (!b) {
			b = &pages.put(page_of(key));
			*b = (uint32_t)(slots.size() / PER_PAGE);
			slots.resize(slots.size() + PER_PAGE);
		}
		slot &s = slots[(size_t)*b * PER_PAGE + line_of(key)];
		if (s.key == key)
			return s.v;
		V *o = n_over ? over.find(key) : nullptr; /* put there while its slot was taken */
		if (o)
			return *o;
		if (!s.key) {
			s.key = key;
			return s.v = V{};
		}
		n_over++;
		return over.put(key) = V{};
	}
	V *find(const void *key)
	{
		if (slot *s = slot_of(key))
			return &s->v;
		return n_over ? over.find(key) : nullptr;
	}
	/* Take key's value out into *out: false if it has none. */
	bool take(const void *key, V *out)
	{
		if (slot *s = slot_of(key)) {
			*out = s->v;
			s->key = nullptr;
			return true;
		}
		if (!n_over || !over.take(key, out))
			return false;
		n_over--;
		return true;
	}
	void erase(const void *key)
	{
		V v;
		take(key, &v);
	}

private:
	static constexpr size_t PER_PAGE = 64; /* 64-byte lines of a 4 KiB page */
	struct slot {
		const void *key = nullptr;
		V v{};
	};
	addr_table<uint32_t> pages; /* page -> its block (slots from block * PER_PAGE) */
	std::vector<slot> slots;
	addr_table<V> over;         /* keys whose line's slot another key held when they came */
	size_t n_over = 0;

	static const void *page_of(const void *key) { return (const void *)(((uintptr_t)key >> 12) + 1); }
	static size_t line_of(const void *key) { return ((uintptr_t)key >> 6) % PER_PAGE; }
	/* key's own slot in its page's block, if it holds key */
	slot *slot_of(const void *key)
	{
		uint32_t *b = pages.find(page_of(key));
		if (!b)
			return nullptr;
		slot &s = slots[(size_t)*b * PER_PAGE + line_of(key)];
		return s.key == key ? &s : nullptr;
	}
};

/* How far back a task's memory lies: every task touched (pushed, popped or stolen, or reached
 * into by a workload) moves to the front of one least-recently-used list, and
 * a touch reports the task's reuse distance, the number of other tasks touched since it was, as a
 * level: 0 if at most caps[0], i if above caps[i-1] and at most caps[i], caps.size() if above the
 * last or never touched. The caller prices a level by what the machine's caches take to bring a
 * task back from that far (sim/calibrate.c measures it: a chain of tasks walked at each size).
 *
 * One marker per level sits on the list's caps[i]-th task, so a touch costs its level's markers
 * (each steps one task toward the front, the task it leaves behind going one level down), not a
 * walk. The list keeps no task beyond the last cap: such a one counts as never touched. */
class task_cache {
public:
	/* Levels at these distances, ascending and at least 1 (none: every touch is level 0). */
	void reset(const std::vector<uint32_t> &level_caps)
	{
		*this = task_cache{};
		caps = level_caps;
		mark.assign(caps.size(), NONE);
	}
	unsigned levels() const { return (unsigned)caps.size(); }
	/* Touch task: its level before the touch (it is at the front now). */
	unsigned touch(const void *task)
	{
		unsigned K = (unsigned)caps.size();
		if (!K)
			return 0;
		uint32_t x;
		unsigned lv;
		if (uint32_t *at = where.find(task)) {
			x = *at;
			lv = nodes[x].level;
			if (x == head)
				return lv; /* level 0: nothing moves */
			/* the task it leaves behind at the marker's place moves up by one */
			if (lv < K && mark[lv] == x)
				mark[lv] = nodes[x].prev;
			unlink(x);
			size--;
		} else {
			lv = K;
			if (size == caps[K - 1]) { /* full: the last task leaves */
				x = tail;
				mark[K - 1] = nodes[x].prev;
				unlink(x);
				size--;
				where.erase(nodes[x].key);
			} else {
				x = (uint32_t)nodes.size();
				nodes.push_back(node{});
			}
			nodes[x].key = task;
			where.put(task) = x;
		}
		/* every level above the task's loses its last task to the next one down */
		for (unsigned i = 0; i < lv && i < K; i++)
			if (size >= caps[i]) {
				uint32_t b = mark[i];
				nodes[b].level = i + 1;
				mark[i] = nodes[b].prev == NONE ? x : nodes[b].prev; /* the head: x, about to lead */
			}
		link_front(x);
		nodes[x].level = 0;
		size++;
		/* a list that just reached a cap puts that level's marker on its last task */
		for (unsigned i = 0; i < K; i++)
			if (size == caps[i] && mark[i] == NONE)
				mark[i] = tail;
		/* the next touch far back moves every marker: their tasks lie anywhere in nodes, so
		 * start loading them now, while the simulation runs until then (a third of touch's
		 * time went to those loads: perf) */
		for (unsigned i = 0; i < K; i++)
			if (mark[i] != NONE)
				__builtin_prefetch(&nodes[mark[i]]);
		return lv;
	}

private:
	static constexpr uint32_t NONE = UINT32_MAX;
	struct node {
		const void *key = nullptr;
		uint32_t prev = NONE, next = NONE; /* toward the front, toward the back */
		uint32_t level = 0;
	};
	std::vector<node> nodes;
	addr_map<uint32_t> where; /* task -> its node */
	std::vector<uint32_t> caps, mark; /* mark[i]: the caps[i]-th task of the list (NONE: fewer) */
	uint32_t head = NONE, tail = NONE, size = 0;

	void unlink(uint32_t i)
	{
		node &n = nodes[i];
		(n.prev == NONE ? head : nodes[n.prev].next) = n.next;
		(n.next == NONE ? tail : nodes[n.next].prev) = n.prev;
	}
	void link_front(uint32_t i)
	{
		nodes[i].prev = NONE;
		nodes[i].next = head;
		(head == NONE ? tail : nodes[head].prev) = i;
		head = i;
	}
};

#endif
