/*
 * common.h - helpers shared by the Criterion tests: a runtime per test with every policy from
 * the registry, and a few task bodies the invariant tests reuse.
 *
 * Tests include core/rt.h where they assert on internals (the sticky word, the worker a task
 * runs on). Every runtime is made with check=true and a stall limit, so a policy bug shows up
 * as a named invariant failure or a STALL, never as a hang.
 */
#ifndef SB_TESTS_COMMON_H
#define SB_TESTS_COMMON_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../core/config.h"
#include "../core/rt.h"
#include "../policies/registry.h"

/* Every registered policy, as Criterion parameters. The name is copied into the parameter:
 * Criterion runs each test in a fresh process where pointers into the runner's memory mean
 * nothing. A test takes `struct sb_tpol *p` and uses p->name. */
struct sb_tpol {
	char name[32];
};

#define SB_POLICY_PARAMS(suite, test)                                                         \
	ParameterizedTestParameters(suite, test)                                              \
	{                                                                                     \
		static struct sb_tpol pols[64];                                               \
		size_t n = 0;                                                                 \
		for (const struct sb_policy_ops *const *p = sb_policies; *p && n < 64; p++) \
			snprintf(pols[n++].name, sizeof pols[0].name, "%s", (*p)->name);      \
		return cr_make_param_array(struct sb_tpol, pols, n);                          \
	}

/* Whether some registered policy has a parameter called `name` (the first `len` bytes). */
static inline bool t_some_policy_has(const char *name, size_t len)
{
	char n[128];
	snprintf(n, sizeof n, "%.*s", (int)len, name);
	for (const struct sb_policy_ops *const *p = sb_policies; *p; p++)
		if ((*p)->params && sb_param_find((*p)->params, n, NULL))
			return true;
	return false;
}

/* Apply `sets` (NULL-terminated "name=value") to the core's and `ops`'s parameter blocks, routed
 * as `--set` routes them. A test that runs over every policy may name another policy's
 * parameter: it is skipped where this policy lacks it. A name that no table has, or a bad value,
 * is an error: 0, or the routing's error with its line in err. */
static inline int t_apply_sets(const struct sb_policy_ops *ops, struct sb_config *cfg, void *pp,
			       const char *const *sets, char *err, size_t errlen)
{
	char label[64];
	snprintf(label, sizeof label, "policy %s", ops->name);
	const struct sb_param_scope sc[2] = { { "core", "core", sb_core_params, cfg },
					      { "policy", label, ops->params, pp } };
	for (const char *const *s = sets; s && *s; s++) {
		int r = sb_param_route(sc, 2, *s, NULL, err, errlen);
		if (r == -ENOENT && t_some_policy_has(*s, (size_t)(strchr(*s, '=') - *s)))
			continue; /* a policy-specific setting that this policy does not have */
		if (r)
			return r;
	}
	return 0;
}

/* A runtime for `policy` with check mode on and a stall watchdog; `sets` as t_apply_sets takes
 * them: a misspelt name fails the test. */
static inline struct sb_rt *t_rt(const char *policy, int threads, const char *const *sets)
{
	const struct sb_policy_ops *ops = sb_policy_find(policy);
	cr_assert(ops, "policy %s is registered", policy);
	struct sb_config cfg;
	sb_config_default(&cfg);
	cfg.thread_count = threads;
	cfg.check = true;
	cfg.stall_limit = 5000;
	void *pp = ops->params_size ? calloc(1, ops->params_size) : NULL;
	if (ops->params)
		sb_param_defaults(ops->params, pp);
	char err[8192] = "";
	cr_assert_eq(t_apply_sets(ops, &cfg, pp, sets, err, sizeof err), 0, "%s", err);
	struct sb_rt *rt;
	int rc = sb_rt_create(&rt, &cfg, ops, pp, err, sizeof err);
	free(pp);
	cr_assert(rt && rc == 0, "runtime for %s: %s", policy, err);
	return rt;
}

/* Approximate queued tasks for worker w (-1: the shared queues), as the policy reports them. */
static inline size_t t_queued(const struct sb_rt *rt, int w)
{
	return sb_policy_queued(rt, w);
}

/* Stop, check that nothing failed, destroy. */
static inline void t_done(struct sb_rt *rt)
{
	sb_rt_stop(rt, SB_STOP_DRAIN);
	const char *f = sb_rt_failure(rt);
	cr_expect_null(f, "runtime failure: %s", f ? f : "");
	sb_rt_destroy(rt);
}

/* Submit a job whose root runs `fn` with arg, wait for it, return it (caller puts it). */
static inline struct sb_job *t_run_job(struct sb_rt *rt, const struct sb_job_desc *d, sb_task_fn fn, void *arg)
{
	struct sb_job *j = sb_job_create(rt, d);
	struct sb_task *t = sb_task_new(j, fn, arg);
	sb_job_submit(j, t);
	cr_assert(sb_job_wait(j), "job finished (runtime failure: %s)", sb_rt_failure(rt) ? sb_rt_failure(rt) : "none");
	return j;
}

/* One of the policy's counters (ops->stats); the test fails when the policy has no such key. */
struct t_stat {
	const char *key;
	double v;
	bool found;
};

static inline void t_stat_emit(void *ctx, const char *key, double v)
{
	struct t_stat *s = ctx;
	if (!strcmp(key, s->key)) {
		s->v = v;
		s->found = true;
	}
}

static inline double t_policy_stat(struct sb_rt *rt, const char *key)
{
	struct t_stat s = { key, 0, false };
	sb_rt_policy_stats(rt, t_stat_emit, &s);
	cr_assert(s.found, "policy %s reports %s", sb_rt_policy(rt)->name, key);
	return s.v;
}

/* A policy, and up to three "name=value" settings, as values (Criterion re-executes). */
struct t_case {
	char policy[16];
	char sets[3][48];
};

static inline struct sb_rt *case_rt(const struct t_case *c, int threads, const char *const *more)
{
	const char *sets[16];
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		if (c->sets[i][0])
			sets[n++] = c->sets[i];
	for (; more && *more && n < 15; more++)
		sets[n++] = *more;
	sets[n] = NULL;
	return t_rt(c->policy, threads, sets);
}

/* One of the policy's counters, as a count. */
static inline uint64_t stat_of(struct sb_rt *rt, const char *key)
{
	return (uint64_t)t_policy_stat(rt, key);
}

/* A task body that does nothing, and one that does 20 us of busy work. */
static inline enum sb_result t_noop(struct sb_task *t)
{
	(void)t;
	return SB_DONE;
}

static inline enum sb_result t_work_leaf(struct sb_task *t)
{
	(void)t;
	sb_work_ns(20000);
	return SB_DONE;
}

static inline void t_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static inline void t_sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

/* Whether worker i is parked: announced asleep, and past the re-check that follows the
 * announcement (a worker that has announced its sleep still looks at the queues once before it
 * parks, and would take a job submitted meanwhile without being woken). susp_since is set once
 * the re-check has found nothing, just before the futex wait, and cleared when the suspension
 * ends; from then on only a wake-up or the suspend timeout ends it, and an idle runtime wakes
 * nobody. relaxed: samples, polled again until they hold. */
static inline bool t_parked(struct sb_rt *rt, unsigned i)
{
	return sb_worker_suspended(rt, i) && atomic_load_explicit(&rt->w[i].susp_since, memory_order_relaxed) != 0;
}

/* Every worker parked (each gives up after its empty rounds): the job that follows must wake a
 * worker itself. The deadline, 50 s, only ends a broken run: it waits for a condition, and the
 * empty rounds before a suspension (up to worker_try_count of them, with yields of the core) may
 * take seconds on a loaded machine. */
static inline void t_wait_all_asleep(struct sb_rt *rt)
{
	unsigned n = sb_rt_nworkers(rt);
	uint64_t end = sb_now_ns() + 50000000000ull;
	for (;;) {
		bool all = sb_nsuspended(rt) == n;
		for (unsigned i = 0; all && i < n; i++)
			all = t_parked(rt, i);
		if (all)
			return;
		cr_assert(sb_now_ns() < end, "every worker suspends when idle (%u of %u announced asleep)",
			  sb_nsuspended(rt), n);
		t_sleep_us(1000);
	}
}

/* ---- running a program (the harness tests) ---- */

#define PYTHON "/usr/bin/python3"

struct outcome {
	int status;        /* exit status, or 128+signal */
	char out[1 << 16];
	char err[1 << 14];
};

static inline char *make_tmp(void)
{
	char *d = strdup("/tmp/schedbed-cli-XXXXXX");
	cr_assert(d && mkdtemp(d), "temporary directory: %s", strerror(errno));
	return d;
}

static inline void remove_tree(const char *d)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* One outcome, on the heap (it holds 80 KiB of captured output). */
static inline struct outcome *outcome_new(void)
{
	struct outcome *o = malloc(sizeof *o);
	cr_assert(o);
	return o;
}

/* The end of a harness test: its outcome and its temporary directory, gone. */
static inline void scratch_done(char *dir, struct outcome *o)
{
	free(o);
	remove_tree(dir);
	free(dir);
}

/* The file's text (gzread also reads files that are not compressed). */
static inline void slurp(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	gzFile f = gzopen(path, "rb");
	if (!f)
		return;
	int n = gzread(f, buf, (unsigned)(len - 1));
	buf[n > 0 ? n : 0] = 0;
	gzclose(f);
}

static inline pid_t spawn_in(const char *cwd, const char *cap, char *const argv[])
{
	char out[256], err[256];
	snprintf(out, sizeof out, "%s/stdout", cap);
	snprintf(err, sizeof err, "%s/stderr", cap);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || chdir(cwd) != 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(127);
		setenv("MPLBACKEND", "Agg", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static inline void wait_for(pid_t pid, const char *cap, struct outcome *o)
{
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	char path[256];
	snprintf(path, sizeof path, "%s/stdout", cap);
	slurp(path, o->out, sizeof o->out);
	snprintf(path, sizeof path, "%s/stderr", cap);
	slurp(path, o->err, sizeof o->err);
}

/* Run argv (NULL-terminated) in cwd and wait. */
static inline void run_in(const char *cwd, char *const argv[], struct outcome *o)
{
	char *cap = make_tmp();
	wait_for(spawn_in(cwd, cap, argv), cap, o);
	remove_tree(cap);
	free(cap);
}

static inline size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Every entry of a directory (hidden ones too), sorted into one string. */
static inline void listing(const char *dir, char *buf, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	size_t n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	pclose(p);
}

/* Run /usr/bin/python3 -c code args...; true when it exits 0. Its stderr goes to ours. */
static inline bool python_ok(const char *code, const char *a1, const char *a2)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		execl(PYTHON, PYTHON, "-c", code, a1, a2, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#endif
