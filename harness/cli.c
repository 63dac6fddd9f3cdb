/*
 * cli.c - the command line of `schedbed run`: options, `--set name=value` routing, validation.
 *
 * Owns turning argv into a struct bench_opts in which every value is already checked, so that a
 * bad input is reported as one line before any file or thread exists. Every value goes through
 * core/param.h (the harness's own options through bench_param_table), so ranges and messages
 * have one source. Does not own running anything, nor what a parameter means.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../policies/registry.h"
#include "bench.h"

#ifndef SB_SRCDIR
#define SB_SRCDIR "."
#endif

#define P struct bench_params
const struct sb_param bench_param_table[] = {
	SB_PARAM_DOUBLE(P, duration, 10, 0.001, 86400, "seconds of measurement in a timed run (after warm-up)"),
	SB_PARAM_DOUBLE(P, warmup, 1, 0, 3600, "seconds before the measurement window opens (bounded runs: 0)"),
	SB_PARAM_INT(P, jobs, 0, 0, 1000000000000, "bounded run: this many jobs, then stop (0 = timed run)"),
	SB_PARAM_INT(P, seed, 1, 0, INT64_MAX, "seed of every client's random generator"),
	SB_PARAM_INT(P, trace_limit, 1000000, 1, 100000000, "most events trace.json keeps (the earliest of the window)"),
	SB_PARAM_DOUBLE(P, drain, 5, 0, 3600, "seconds jobs still pending after the window may take; then they are cancelled (unfinished)"),
	SB_PARAM_DOUBLE(P, max_lag, 1, 0.000001, 86400, "seconds open-loop clients may fall behind their arrivals; more makes the run overloaded"),
	SB_PARAM_INT(P, rows, 1000000, 0, 1000000000000, "most jobs of the window written as rows to jobs.csv.gz; past it only latency-hist.json.gz"),
	SB_PARAM_INT(P, sim_cores, 0, 0, 4096, "--executor sim: cores of the simulated machine, shared by every thread (0: a core per thread)"),
	SB_PARAM_END,
};
#undef P

void bench_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("schedbed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void bench_usage_run(FILE *f)
{
	fputs("usage: schedbed run --policy P --workload W [options]\n"
	      "\n"
	      "Run workload W under policy P, write results/<run-id>/ (or --out DIR) and print a summary.\n"
	      "\n"
	      "  -p, --policy P         scheduling policy (schedbed list shows them)\n"
	      "  -w, --workload W       workload generator\n"
	      "  -t, --threads N        worker threads (the core parameter thread_count)\n"
	      "  -d, --duration S       measure for S seconds after the warm-up (default 10)\n"
	      "  -n, --jobs N           bounded run: N jobs in all, then stop (excludes --duration)\n"
	      "      --warmup S         seconds before measuring (default 1; 0 for bounded runs)\n"
	      "      --seed N           seed of the workload's random generators (default 1)\n"
	      "      --drain S          seconds pending jobs may take to finish after the window\n"
	      "                         (default 5); then they are cancelled and counted unfinished;\n"
	      "                         0: a shutdown (the jobs in flight are cancelled at once)\n"
	      "      --max-lag S        open loop: the run is overloaded (exit 3) when its clients fall\n"
	      "                         behind their arrival schedule by more than S seconds (default 1)\n"
	      "      --rows N           write jobs.csv.gz (one row per job) only for a window of at most\n"
	      "                         N jobs (default 1000000); latency-hist.json.gz is always written\n"
	      "  -s, --set NAME=VALUE   set a core, policy or workload parameter; prefix core.,\n"
	      "                         policy. or workload. when a name exists in more than one\n"
	      "  -o, --out DIR          write the results here (a new or empty directory)\n"
	      "      --trace            record one event per task and write trace.json\n"
	      "      --trace-limit N    most events kept in trace.json (default 1000000)\n"
	      "      --check            verify scheduling invariants while running\n"
	      "      --chaos SEED       inject random yields and delays at every policy call (core chaos)\n"
	      "      --executor E       native (threads on this machine) or sim (SimGrid: virtual time,\n"
	      "                         any number of workers; deterministic)\n"
	      "      --sim-costs FILE   the simulator's cost table (default: sim/costs-MACHINE.txt, this machine's)\n"
	      "      --sim-cores N      the simulated machine has N cores that every thread (workers, clients)\n"
	      "                         shares, as on a machine with fewer cores than threads (default 0:\n"
	      "                         a core per thread; in time slices where the cost table gives `slice`)\n"
	      "      --dry-run          check the command line and every parameter, run nothing\n"
	      "  -q, --quiet            no progress lines\n"
	      "  -h, --help             this text\n"
	      "\n"
	      "Exit status: 0 done, 1 the run failed (invariant, starvation, stall, accounting),\n"
	      "2 bad input, 3 overloaded: jobs still pending after a drain time were cancelled, or the\n"
	      "open-loop clients fell behind by more than --max-lag (the results are written),\n"
	      "130 interrupted (nothing half-written is left).\n"
	      "Files written (jobs.csv.gz, latency-hist.json.gz, workers.csv, summary.json, meta.json,\n"
	      "plot.gp, trace.json), every column and key with its unit: schedbed outputs.\n",
	      f);
}

enum { O_WARMUP = 256, O_SEED, O_TRACE, O_TRACE_LIMIT, O_CHECK, O_CHAOS, O_DRAIN, O_DRY_RUN, O_EXECUTOR, O_SIM_COSTS, O_MAX_LAG, O_ROWS, O_SIM_CORES };

static const struct option run_options[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "workload", required_argument, NULL, 'w' },
	{ "threads", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' },
	{ "jobs", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "seed", required_argument, NULL, O_SEED },
	{ "drain", required_argument, NULL, O_DRAIN },
	{ "dry-run", no_argument, NULL, O_DRY_RUN },
	{ "max-lag", required_argument, NULL, O_MAX_LAG },
	{ "rows", required_argument, NULL, O_ROWS },
	{ "sim-cores", required_argument, NULL, O_SIM_CORES },
	{ "set", required_argument, NULL, 's' },
	{ "out", required_argument, NULL, 'o' },
	{ "trace", no_argument, NULL, O_TRACE },
	{ "trace-limit", required_argument, NULL, O_TRACE_LIMIT },
	{ "check", no_argument, NULL, O_CHECK },
	{ "chaos", required_argument, NULL, O_CHAOS },
	{ "executor", required_argument, NULL, O_EXECUTOR },
	{ "sim-costs", required_argument, NULL, O_SIM_COSTS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void option_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (const struct option *op = run_options; op->name && used + 1 < len; op++) {
		int n = snprintf(buf + used, len - used, "%s--%s", used ? ", " : "", op->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static const char *option_name(int val)
{
	for (const struct option *op = run_options; op->name; op++)
		if (op->val == val)
			return op->name;
	return "?";
}

/*
 * Settings are applied only after --policy and --workload are known (a --set may name their
 * parameters), in command-line order. A parameter given two different values (`--threads 2 --set
 * thread_count=3`) is refused: which one the user meant is a guess. The same value twice is fine.
 */
enum target { T_HARNESS, T_CORE, T_SET };

struct setting {
	enum target target;
	const char *option; /* for messages: "--threads" */
	const char *name;   /* parameter name (T_SET: the whole name=value) */
	const char *value;
	void *field; /* the parameter's storage once applied: two settings with one field conflict */
};
#define SETTING(tg, opt, nm, val) ((struct setting){ .target = (tg), .option = (opt), .name = (nm), .value = (val) })

/* Which other policy or workload has a parameter of this name, if any. */
static const char *owner_elsewhere(const char *name, const struct bench_opts *o, const char **kind)
{
	for (const struct sb_policy_ops *const *p = sb_policies; *p; p++)
		if (*p != o->policy && (*p)->params && sb_param_find((*p)->params, name, NULL)) {
			*kind = "policy";
			return (*p)->name;
		}
	for (const struct sb_workload *const *w = sb_workloads; *w; w++)
		if (*w != o->workload && (*w)->params && sb_param_find((*w)->params, name, NULL)) {
			*kind = "workload";
			return (*w)->name;
		}
	return NULL;
}

/*
 * A --set name none of the three tables has: another policy's or workload's parameter is named
 * as such, a typo gets the closest name, and only a name like nothing gets the router's full list.
 */
static void unknown_parameter(const char *arg, const char *name, const struct bench_opts *o,
			      const struct sb_param_scope sc[3], const char *listing)
{
	const char *kind = NULL, *owner = owner_elsewhere(name, o, &kind);
	if (owner) {
		bench_error("--set %s: '%s' is %s %s's parameter, not one of policy %s or workload %s (--%s %s)", arg,
			    name, kind, owner, o->policy->name, o->workload->name, kind, owner);
		return;
	}
	const char *best = NULL, *label = NULL;
	size_t best_d = SIZE_MAX;
	for (int i = 0; i < 3; i++) {
		size_t d = SIZE_MAX;
		const char *near = sc[i].tbl ? sb_param_nearest(sc[i].tbl, name, &d) : NULL;
		if (near && d < best_d) {
			best = near;
			best_d = d;
			label = sc[i].label;
		}
	}
	if (best) {
		bench_error("--set %s: unknown parameter '%s'; did you mean '%s' (%s)?", arg, name, best, label);
		return;
	}
	bench_error("--set %s: %s", arg, listing); /* the router's list of every scope's parameters */
}

static int apply_set(struct bench_opts *o, const char *arg, void **field)
{
	char plabel[80], wlabel[80];
	snprintf(plabel, sizeof plabel, "policy %s", o->policy->name);
	snprintf(wlabel, sizeof wlabel, "workload %s", o->workload->name);
	const struct sb_param_scope sc[3] = {
		{ "core", "core", sb_core_params, &o->core },
		{ "policy", plabel, o->policy->params, o->pparams },
		{ "workload", wlabel, o->workload->params, o->wparams },
	};
	char err[8192];
	int e = sb_param_route(sc, 3, arg, field, err, sizeof err);
	const char *eq = strchr(arg, '=');
	if (e == -ENOENT && eq && !memchr(arg, '.', (size_t)(eq - arg))) {
		/* no scope has the name; a prefixed one was looked up in its own table, whose
		 * message already names the nearest */
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
		unknown_parameter(arg, name, o, sc, err);
		return -1;
	}
	if (e != 0) {
		bench_error("--set %s: %s", arg, err);
		return -1;
	}
	return 0;
}

/* How the user wrote a setting, for messages: "--set thread_count=3", "--threads 2", "--check". */
static void written(const struct setting *s, char *buf, size_t len)
{
	if (s->target == T_SET)
		snprintf(buf, len, "--set %s", s->value);
	else if (s->name && strcmp(s->value, "true") == 0 && strcmp(s->option + 2, s->name) == 0)
		snprintf(buf, len, "%s", s->option); /* a flag: --check, --trace */
	else
		snprintf(buf, len, "%s %s", s->option, s->value);
}

/* The value as written: after the '=' of a --set. */
static const char *value_of(const struct setting *s)
{
	return s->target == T_SET ? strchr(s->value, '=') + 1 : s->value;
}

/* Apply set[i]; settings before it are applied and know their fields. */
static int apply(struct bench_opts *o, struct setting *set, size_t i)
{
	char err[4096];
	struct setting *s = &set[i];
	const struct sb_param *tbl = s->target == T_CORE ? sb_core_params : bench_param_table;
	void *obj = s->target == T_CORE ? (void *)&o->core : (void *)&o->p;
	if (s->target == T_SET) {
		if (apply_set(o, s->value, &s->field) != 0)
			return -1;
	} else {
		if (sb_param_set(tbl, obj, s->name, s->value, err, sizeof err) != 0) {
			bench_error("%s: %s", s->option, err);
			return -1;
		}
		size_t off = 0;
		sb_param_find(tbl, s->name, &off);
		s->field = (char *)obj + off;
	}
	for (size_t k = 0; k < i; k++)
		if (set[k].field == s->field && strcmp(value_of(&set[k]), value_of(s)) != 0) {
			char a[300], b[300];
			written(&set[k], a, sizeof a);
			written(s, b, sizeof b);
			bench_error("'%s' and '%s' give one parameter two values; give it once", a, b);
			return -1;
		}
	return 0;
}

/* --policy and --workload: found in the registry, or one line naming the valid choices. */
static bool resolve(const char *what, const char *plural, const char *name, const void *found,
		    void (*names)(char *, size_t))
{
	if (found)
		return true;
	char list[2048];
	names(list, sizeof list);
	if (!name)
		bench_error("missing --%s; valid %s are: %s", what, plural, list);
	else
		bench_error("unknown %s '%s'; valid %s are: %s", what, name, plural, list);
	return false;
}

static void *param_block(const struct sb_param *tbl, size_t size)
{
	/* at least one byte, so that "no parameters" and "out of memory" differ */
	void *b = calloc(1, size ? size : 1);
	if (b && tbl)
		sb_param_defaults(tbl, b);
	return b;
}

/* --policy or --workload: a second, different value is refused like a repeated --set. */
static bool choose(const char **slot, const char *option, const char *value)
{
	if (*slot && strcmp(*slot, value) != 0) {
		bench_error("'%s %s' and '%s %s' give two values; give it once", option, *slot, option, value);
		return false;
	}
	*slot = value;
	return true;
}

/* Phase 1: argv into the policy and workload names and the settings, in command-line order. */
static int parse_argv(int argc, char **argv, struct bench_opts *o, const char **policy, const char **workload,
		      struct setting *set, size_t *nset)
{
	opterr = 0; /* every message is ours, one line each */
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":p:w:t:d:n:s:o:qh", run_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!choose(policy, "--policy", optarg))
				return BENCH_EXIT_USAGE;
			break;
		case 'w':
			if (!choose(workload, "--workload", optarg))
				return BENCH_EXIT_USAGE;
			break;
		case 't': set[(*nset)++] = SETTING(T_CORE, "--threads", "thread_count", optarg); break;
		case O_CHECK: set[(*nset)++] = SETTING(T_CORE, "--check", "check", "true"); break;
		case O_CHAOS: set[(*nset)++] = SETTING(T_CORE, "--chaos", "chaos", optarg); break;
		case O_TRACE: set[(*nset)++] = SETTING(T_CORE, "--trace", "trace", "true"); break;
		case 'd':
			o->duration_set = true;
			set[(*nset)++] = SETTING(T_HARNESS, "--duration", "duration", optarg);
			break;
		case 'n':
			o->jobs_set = true;
			set[(*nset)++] = SETTING(T_HARNESS, "--jobs", "jobs", optarg);
			break;
		case O_WARMUP:
			o->warmup_set = true;
			set[(*nset)++] = SETTING(T_HARNESS, "--warmup", "warmup", optarg);
			break;
		case O_SEED: set[(*nset)++] = SETTING(T_HARNESS, "--seed", "seed", optarg); break;
		case O_DRAIN: set[(*nset)++] = SETTING(T_HARNESS, "--drain", "drain", optarg); break;
		case O_MAX_LAG: set[(*nset)++] = SETTING(T_HARNESS, "--max-lag", "max_lag", optarg); break;
		case O_ROWS: set[(*nset)++] = SETTING(T_HARNESS, "--rows", "rows", optarg); break;
		case O_SIM_CORES: set[(*nset)++] = SETTING(T_HARNESS, "--sim-cores", "sim_cores", optarg); break;
		case O_DRY_RUN: o->dry_run = true; break;
		case O_TRACE_LIMIT:
			set[(*nset)++] = SETTING(T_HARNESS, "--trace-limit", "trace_limit", optarg);
			break;
		case 's': set[(*nset)++] = SETTING(T_SET, "--set", NULL, optarg); break;
		case 'o': o->out = optarg; break;
		case O_EXECUTOR:
			if (strcmp(optarg, "native") != 0 && strcmp(optarg, "sim") != 0) {
				bench_error("--executor %s: unknown executor; valid executors are: native, sim", optarg);
				return BENCH_EXIT_USAGE;
			}
			o->executor = optarg;
			break;
		case O_SIM_COSTS: o->sim_costs = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h':
			bench_usage_run(stdout);
			return -1;
		case ':':
			bench_error("option --%s needs a value (see schedbed run --help)", option_name(optopt));
			return BENCH_EXIT_USAGE;
		default: {
			char names[512];
			option_names(names, sizeof names);
			if (optopt && strncmp(argv[optind - 1], "--", 2) != 0)
				bench_error("unknown option '-%c'; valid options are: %s", optopt, names);
			else
				bench_error("bad option '%s'; valid options are: %s", argv[optind - 1], names);
			return BENCH_EXIT_USAGE;
		}
		}
	}
	if (optind < argc) {
		bench_error("unexpected argument '%s'; schedbed run takes only options (see schedbed run --help)",
			    argv[optind]);
		return BENCH_EXIT_USAGE;
	}
	return 0;
}

/* Phase 2: the policy and workload from their registries, and their parameter blocks at their
 * defaults (a --set may then name their parameters). */
static int resolve_choices(struct bench_opts *o, const char *policy, const char *workload)
{
	o->policy = policy ? sb_policy_find(policy) : NULL;
	if (!resolve("policy", "policies", policy, o->policy, sb_policy_names))
		return BENCH_EXIT_USAGE;
	o->workload = workload ? sb_workload_find(workload) : NULL;
	if (!resolve("workload", "workloads", workload, o->workload, sb_workload_names))
		return BENCH_EXIT_USAGE;
	if (o->duration_set && o->jobs_set) {
		bench_error("--duration and --jobs exclude each other: a run is either timed or bounded by a job count");
		return BENCH_EXIT_USAGE;
	}
	o->pparams = param_block(o->policy->params, o->policy->params_size);
	o->wparams = param_block(o->workload->params, o->workload->params_size);
	if (!o->pparams || !o->wparams) {
		bench_error("out of memory");
		return BENCH_EXIT_FAIL;
	}
	return 0;
}

/* Phase 3: every setting in command-line order, then what follows from them. */
static int apply_settings(struct bench_opts *o, struct setting *set, size_t nset)
{
	for (size_t i = 0; i < nset; i++)
		if (apply(o, set, i) != 0)
			return BENCH_EXIT_USAGE;
	if (o->jobs_set && !o->p.jobs)
		o->jobs_set = false; /* --jobs 0: a timed run, as the listing says */
	if (o->jobs_set && !o->warmup_set)
		o->p.warmup = 0;
	int64_t limit = sb_config_stall_limit(&o->core);
	if (o->core.stall_limit && limit != o->core.stall_limit)
		fprintf(stderr, "schedbed: note: stall_limit %lld ms is below the watchdog's resolution; using %lld ms\n",
			(long long)o->core.stall_limit, (long long)limit);
	o->core.stall_limit = limit; /* what the core applies, so that meta.json says it */
	return 0;
}

int bench_parse_run(int argc, char **argv, struct bench_opts *o)
{
	memset(o, 0, sizeof *o);
	o->executor = "native";
	sb_config_default(&o->core);
	sb_param_defaults(bench_param_table, &o->p);
	const char *policy = NULL, *workload = NULL;
	struct setting *set = calloc((size_t)argc + 1, sizeof *set);
	size_t nset = 0;
	if (!set) {
		bench_error("out of memory");
		return BENCH_EXIT_FAIL;
	}
	int rc = parse_argv(argc, argv, o, &policy, &workload, set, &nset);
	if (rc == 0)
		rc = resolve_choices(o, policy, workload);
	if (rc == 0)
		rc = apply_settings(o, set, nset);
	if (rc == 0 && o->p.sim_cores && strcmp(o->executor, "sim") != 0) {
		/* a native run has the machine's own cores: accepting it would promise a sharing that never happens */
		bench_error("--sim-cores applies to --executor sim only");
		rc = BENCH_EXIT_USAGE;
	}
	free(set);
	if (rc != 0)
		bench_opts_free(o);
	return rc;
}

void bench_opts_free(struct bench_opts *o)
{
	free(o->pparams);
	free(o->wparams);
	o->pparams = o->wparams = NULL;
}
