/*
 * mix.h - the one stateless 64-bit mixing function (splitmix64's finaliser) that ids, tree
 * shapes, signatures and task-graph tags are hashed with.
 *
 * A header of its own, with no runtime in it, because the task-graph peers (peers/patterns_*)
 * are built outside the library and must derive the same graphs and tags as the workloads.
 */
#ifndef SB_WORKLOADS_MIX_H
#define SB_WORKLOADS_MIX_H

#include <stdint.h>

static inline uint64_t wl_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
