/*
 * futex.h - the one way the core puts a thread to sleep and wakes it.
 *
 * Linux futexes on 32-bit atomics that the core also reads and writes with C11 operations; the
 * futex itself never carries data, it only parks and unparks. Callers re-check their condition
 * after every return (spurious wake-ups and timeouts are normal).
 */
#ifndef SB_FUTEX_H
#define SB_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *addr == val, at most timeout_ns (0 = no limit). */
static inline void sb_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000u),
			       .tv_nsec = (long)(timeout_ns % 1000000000u) };
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, timeout_ns ? &ts : NULL, NULL, 0);
}

static inline void sb_futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

#endif
