/*
 * canary.c - planted bugs that the sanitizer builds must catch. A test of the test harness, not
 * of schedbed: if the flags that build the stress binaries ever lose a sanitizer (a Makefile
 * that split `-fsanitize=address,undefined` at its comma once did), the matching canary stops
 * being caught and tests/canary/run.sh fails.
 *
 * Usage: canary overflow|misaligned|heap|leak|race
 * Each mode commits one bug and returns 0 if nothing stopped it. Inputs come from argv through
 * volatile reads so that the compiler cannot fold the bug away.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lined {
	_Alignas(64) int x; /* like the core's cache-line aligned shared state */
};

static volatile int one = 1;
static int shared; /* written by two threads with no synchronisation: the planted race */

static void *racer(void *arg)
{
	(void)arg;
	shared++;
	usleep(20000); /* keep both threads alive so both accesses are in the detector's history */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "overflow") == 0) {
		volatile int big = INT32_MAX;
		int r = big + one; /* signed overflow: UBSan */
		printf("%d\n", r);
	} else if (strcmp(mode, "misaligned") == 0) {
		char *raw = malloc(256);
		struct lined *p = (struct lined *)(raw + 16 * one); /* 16 past a 64-aligned block at best */
		if ((uintptr_t)p % 64 == 0)
			p = (struct lined *)(raw + 32 * one);
		p->x = one; /* member access within misaligned address: UBSan */
		printf("%d\n", p->x);
		free(raw);
	} else if (strcmp(mode, "heap") == 0) {
		char *b = malloc(8);
		memset(b, 0, 8 + (size_t)one); /* heap-buffer-overflow: ASan (a call, so UBSan's object-size check does not see it first) */
		printf("%d\n", b[0]);
		free(b);
	} else if (strcmp(mode, "leak") == 0) {
		void *volatile p = malloc(4096); /* never freed: LeakSanitizer */
		p = NULL;
		(void)p;
	} else if (strcmp(mode, "race") == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, racer, NULL);
		pthread_create(&b, NULL, racer, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("%d\n", shared); /* data race: TSan */
	} else {
		fprintf(stderr, "canary: unknown mode '%s'; valid modes are overflow, misaligned, heap, leak, race\n", mode);
		return 2;
	}
	return 0;
}
