/*
 * patterns_peer.c - the shared half of the task-graph peers (patterns_peer.h): options, graphs,
 * the execution loop with its clock, the checks and the output.
 */
#include "patterns_peer.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../workloads/mix.h"

static _Atomic int failed;      /* set once, by the first task that found a wrong input */
static char failure[256];       /* written by that task only; read after the execution ends */

static void remember(const char *why)
{
	int expect = 0;
	/* relaxed: only who is first matters; the runtime's end-of-execution join orders the text */
	if (atomic_compare_exchange_strong_explicit(&failed, &expect, 1, memory_order_relaxed, memory_order_relaxed))
		snprintf(failure, sizeof failure, "%s", why);
}

void pp_task(struct pp_ctx *c, uint32_t gi, uint32_t k)
{
	char why[200];
	double *scratch = c->scratch ? c->scratch + ((size_t)gi * c->n + k) * c->kern.scratch_doubles : NULL;
	if (tg_execute(&c->g[gi], &c->kern, c->out + (size_t)gi * c->n, scratch, c->run, gi, k, why, sizeof why))
		remember(why);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f, const char *name)
{
	fprintf(f,
		"usage: %s [--threads N] [--pattern P] [--kernel K] [--width W] [--steps S] [--graphs G]\n"
		"          [--iterations I] [--radix R] [--scratch-bytes B] [--reps N] [--seed S]\n"
		"Runs the task graphs of schedbed's patterns workload and prints rep,wall_ns,tasks,flop per execution.\n",
		name);
}

static int bad_value(const char *name, const char *opt, const char *val, const char *valid)
{
	fprintf(stderr, "%s: bad value '%s' for --%s; valid: %s\n", name, val, opt, valid);
	return 2;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int pp_main(int argc, char **argv, const struct pp_peer *peer)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },   { "pattern", required_argument, NULL, 'p' },
		{ "kernel", required_argument, NULL, 'k' },    { "width", required_argument, NULL, 'w' },
		{ "steps", required_argument, NULL, 's' },     { "graphs", required_argument, NULL, 'g' },
		{ "iterations", required_argument, NULL, 'i' }, { "radix", required_argument, NULL, 'r' },
		{ "scratch-bytes", required_argument, NULL, 'b' }, { "reps", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },      { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* the patterns workload's defaults */
	uint64_t threads = 2, width = 4, steps = 100, graphs = 1, iterations = 1024, radix = 3, scratch = 8192,
		 reps = 5, seed = 1;
	int pattern = TG_STENCIL_1D, kernel = TG_COMPUTE_BOUND;
	int o, li = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		int r = 0;
		switch (o) {
		case 't': r = parse_u64(optarg, 1, 1024, &threads); break;
		case 'w': r = parse_u64(optarg, 1, 4096, &width); break;
		case 's': r = parse_u64(optarg, 1, 1000000, &steps); break;
		case 'g': r = parse_u64(optarg, 1, 16, &graphs); break;
		case 'i': r = parse_u64(optarg, 0, 1000000000, &iterations); break;
		case 'r': r = parse_u64(optarg, 1, TG_MAX_RADIX, &radix); break;
		case 'b': r = parse_u64(optarg, 8, 1 << 26, &scratch); break;
		case 'n': r = parse_u64(optarg, 1, 1000000, &reps); break;
		case 'S': r = parse_u64(optarg, 0, INT64_MAX, &seed); break;
		case 'p':
			if ((pattern = tg_lookup(tg_pattern_names, optarg)) < 0)
				return bad_value(peer->name, "pattern", optarg,
						 "trivial, no_comm, stencil_1d, stencil_1d_periodic, dom, tree, fft, nearest, spread, random_nearest");
			break;
		case 'k':
			if ((kernel = tg_lookup(tg_kernel_names, optarg)) < 0)
				return bad_value(peer->name, "kernel", optarg, "compute_bound, memory_bound, empty");
			break;
		case 'h': usage(stdout, peer->name); return 0;
		default:
			fprintf(stderr, "%s: unknown option '%s'; valid: --threads --pattern --kernel --width --steps --graphs "
					"--iterations --radix --scratch-bytes --reps --seed --help\n",
				peer->name, argv[optind - 1]);
			return 2;
		}
		if (r)
			return bad_value(peer->name, opts[li].name, optarg,
					 "a whole number in the option's range (see the patterns workload in schedbed list)");
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", peer->name, argv[optind]);
		return 2;
	}
	struct pp_ctx c = { .threads = (unsigned)threads, .graphs = (unsigned)graphs };
	c.kern = (struct tg_kernel){ .kind = kernel, .iterations = iterations, .scratch_doubles = (uint32_t)(scratch / 8) };
	c.g = calloc(graphs, sizeof *c.g);
	if (!c.g)
		return 1;
	char err[256];
	for (uint32_t gi = 0; gi < graphs; gi++) {
		/* the same shape and seed per graph as the patterns workload with --seed */
		struct tg_shape sh = { .pattern = pattern, .width = (uint32_t)width, .steps = (uint32_t)steps,
				       .radix = (uint32_t)radix, .seed = wl_mix64(seed ^ wl_mix64(gi)) };
		if (tg_build(&c.g[gi], &sh, err, sizeof err)) {
			fprintf(stderr, "%s: %s\n", peer->name, err);
			return 2;
		}
	}
	c.n = c.g[0].n;
	c.out = calloc((size_t)graphs * c.n, sizeof *c.out);
	if (kernel == TG_MEMORY_BOUND)
		c.scratch = calloc((size_t)graphs * c.n * c.kern.scratch_doubles, sizeof(double));
	if (!c.out || (kernel == TG_MEMORY_BOUND && !c.scratch) || (peer->setup && peer->setup(&c))) {
		fprintf(stderr, "%s: cannot set up %" PRIu64 " graphs of %u tasks\n", peer->name, graphs, c.n);
		return 1;
	}
	uint64_t tasks = (uint64_t)graphs * c.g[0].nactive;
	int rc = 0;
	printf("rep,wall_ns,tasks,flop\n");
	for (uint64_t r = 0; r < reps && !rc; r++) {
		c.run = (seed << 32) + r + 1;
		uint64_t t0 = now_ns();
		peer->execute(&c);
		uint64_t dt = now_ns() - t0;
		for (uint32_t gi = 0; gi < graphs && !atomic_load_explicit(&failed, memory_order_relaxed); gi++)
			if (tg_verify(&c.g[gi], c.out + (size_t)gi * c.n, c.run, gi, err, sizeof err))
				remember(err);
		if (atomic_load_explicit(&failed, memory_order_relaxed)) {
			fprintf(stderr, "%s: wrong result: %s: %s\n", peer->name, tg_pattern_names[pattern], failure);
			rc = 1;
			break;
		}
		printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", r, dt, tasks, tasks * tg_task_flop(&c.kern));
	}
	if (peer->teardown)
		peer->teardown(&c);
	for (uint32_t gi = 0; gi < graphs; gi++)
		tg_free(&c.g[gi]);
	free(c.g);
	free(c.out);
	free(c.scratch);
	return rc;
}
