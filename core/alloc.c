/*
 * alloc.c - heap objects with the alignment their type declares.
 *
 * malloc and calloc promise only _Alignof(max_align_t) (16 on x86-64); a type with a member
 * declared _Alignas(SB_CACHELINE) needs 64, or every access to it is undefined behaviour and the
 * padding that keeps shared state off its neighbours' cache lines is not real. Every object of
 * such a type comes from here. Types that stay on malloc carry a static assert next to their
 * allocation (SB_ASSERT_MALLOC_ALIGNED) so that adding an _Alignas later fails to compile.
 */
#include <stdlib.h>
#include <string.h>

#include "queue.h"

void *sb_alloc_lines(size_t size)
{
	/* aligned_alloc wants a size that is a multiple of the alignment */
	size_t sz = (size + SB_CACHELINE - 1) / SB_CACHELINE * SB_CACHELINE;
	void *p = aligned_alloc(SB_CACHELINE, sz ? sz : SB_CACHELINE);
	if (p)
		memset(p, 0, sz ? sz : SB_CACHELINE);
	return p;
}
