/*
 * main.c - the `schedbed` program: subcommand dispatch, `schedbed list` and the top-level help.
 *
 * Owns which subcommands exist and what `list` prints (every policy and workload with its
 * description and parameters, the core's parameters and the run options, all printed by
 * core/param.h). Does not own parsing a run's options (cli.c) or running it (run.c).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/config.h"
#include "../policies/registry.h"
#include "bench.h"

static void usage(FILE *f)
{
	fputs("usage: schedbed COMMAND [options]\n"
	      "\n"
	      "A testbed for the task schedulers of database engines.\n"
	      "\n"
	      "commands:\n"
	      "  run     run one workload under one policy and write its results (schedbed run --help)\n"
	      "  list    every policy, workload and parameter with its default and range (schedbed list --help)\n"
	      "  outputs what a run writes: every file, column and key, with units (read this before the files)\n"
	      "  host    this machine as meta.json names it: CPU model, a tab, cores online (for scripts)\n"
	      "  help    this text\n",
	      f);
}

static void usage_list(FILE *f)
{
	fputs("usage: schedbed list [--policies | --workloads | --params | --machine]\n"
	      "\n"
	      "Without options: every policy and workload with its one-line description and its\n"
	      "parameters (name, default, range, meaning), then the core's parameters and the run options.\n"
	      "  --policies    only the policy names, one a line (for scripts)\n"
	      "  --workloads   only the workload names, one a line (for scripts)\n"
	      "  --params      every parameter, one a line, tab-separated (for scripts): scope (core,\n"
	      "                policy:NAME, workload:NAME or run), name, type, default, min, max, choices\n"
	      "  --machine     this machine's name, as its simulator cost table sim/costs-NAME.txt has it\n"
	      "  -h, --help    this text\n",
	      f);
}

/* The earlier policy whose whole parameter table `inc` is (the family a policy composes), or NULL. */
static const struct sb_policy_ops *family_of(const struct sb_param *inc, const struct sb_policy_ops *const *upto)
{
	for (const struct sb_policy_ops *const *q = sb_policies; q < upto; q++)
		if ((*q)->params == inc)
			return *q;
	return NULL;
}

static void list_all(FILE *f)
{
	fputs("policies (--policy NAME; parameters with --set NAME=VALUE or policy.NAME=VALUE):\n", f);
	for (const struct sb_policy_ops *const *p = sb_policies; *p; p++) {
		fprintf(f, "  %-12s %s\n", (*p)->name, (*p)->description ? (*p)->description : "");
		if (!(*p)->params)
			continue;
		/* A family member lists the family's shared parameters by reference, not again. */
		bool unnamed = false, own = false;
		for (const struct sb_param *e = (*p)->params; e->type != SB_P_END; e++)
			own |= e->type != SB_P_INCLUDE;
		for (const struct sb_param *e = (*p)->params; e->type != SB_P_END; e++) {
			if (e->type != SB_P_INCLUDE)
				continue;
			const struct sb_policy_ops *fam = family_of(e->include, p);
			if (fam)
				fprintf(f, "      every parameter of %s (above)%s\n", fam->name,
					own ? ", and:" : "; none of its own");
			else
				unnamed = true;
		}
		sb_param_print((*p)->params, f, "      ", unnamed);
	}
	fputs("\nworkloads (--workload NAME; parameters with --set NAME=VALUE or workload.NAME=VALUE):\n", f);
	for (const struct sb_workload *const *w = sb_workloads; *w; w++) {
		fprintf(f, "  %-12s %s\n", (*w)->name, (*w)->description ? (*w)->description : "");
		if ((*w)->classes) {
			fputs("      job classes:", f);
			for (const char *const *c = (*w)->classes; *c; c++)
				fprintf(f, " %s", *c);
			fputc('\n', f);
		}
		if ((*w)->params)
			sb_param_print((*w)->params, f, "      ", true);
	}
	fputs("\ncore parameters (--set NAME=VALUE or core.NAME=VALUE):\n", f);
	sb_param_print(sb_core_params, f, "      ", true);
	fputs("\nrun options (--duration, --warmup, --jobs, --seed, --trace-limit, --drain):\n", f);
	sb_param_print(bench_param_table, f, "      ", true);
}

static void list_params(FILE *f)
{
	char scope[128];
	sb_param_print_tsv(sb_core_params, f, "core");
	for (const struct sb_policy_ops *const *p = sb_policies; *p; p++) {
		snprintf(scope, sizeof scope, "policy:%s", (*p)->name);
		if ((*p)->params)
			sb_param_print_tsv((*p)->params, f, scope);
	}
	for (const struct sb_workload *const *w = sb_workloads; *w; w++) {
		snprintf(scope, sizeof scope, "workload:%s", (*w)->name);
		if ((*w)->params)
			sb_param_print_tsv((*w)->params, f, scope);
	}
	sb_param_print_tsv(bench_param_table, f, "run");
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policies", no_argument, NULL, 'P' },
		{ "workloads", no_argument, NULL, 'W' },
		{ "params", no_argument, NULL, 'A' },
		{ "machine", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int what = 0;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
		case 'W':
		case 'A':
		case 'M': what = c; break;
		case 'h': usage_list(stdout); return BENCH_EXIT_OK;
		default:
			bench_error("bad option '%s' for list; valid options are: --policies, --workloads, --params, --machine, --help", argv[optind - 1]);
			return BENCH_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		bench_error("unexpected argument '%s'; valid options are: --policies, --workloads, --params, --machine, --help", argv[optind]);
		return BENCH_EXIT_USAGE;
	}
	if (what == 'P')
		for (const struct sb_policy_ops *const *p = sb_policies; *p; p++)
			printf("%s\n", (*p)->name);
	else if (what == 'W')
		for (const struct sb_workload *const *w = sb_workloads; *w; w++)
			printf("%s\n", (*w)->name);
	else if (what == 'A')
		list_params(stdout);
	else if (what == 'M') {
		struct bench_host h = { 0 };
		bench_host_topology(&h);
		printf("%s\n", h.machine);
	}
	else
		list_all(stdout);
	return BENCH_EXIT_OK;
}

/* A run under the simulator: the whole run is its first actor. */
static int run_body(void *arg)
{
	return bench_run(arg);
}

int main(int argc, char **argv)
{
	/* A malformed registry entry would misbehave in ways far from its cause: refuse it here. */
	char err[1024];
	if (sb_policies_check(sb_policies, err, sizeof err) || sb_workloads_check(sb_workloads, err, sizeof err)) {
		bench_error("registry: %s", err);
		return BENCH_EXIT_FAIL;
	}
	if (argc < 2) {
		bench_error("missing command; valid commands are: run, list, outputs, host, help (see schedbed --help)");
		return BENCH_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return BENCH_EXIT_OK;
	}
	if (strcmp(cmd, "list") == 0 || strcmp(cmd, "--list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (strcmp(cmd, "host") == 0) {
		/* the same facts as meta.json's cpu_model, cores_online and cpu_id, for results that schedbed
		 * does not write itself (the peers' runs), so that every run of a sweep names its
		 * machine the same way */
		struct bench_host h;
		bench_host_collect(&h);
		printf("%s\t%u\t%s\n", h.cpu_model, h.pus, h.cpu_id);
		return BENCH_EXIT_OK;
	}
	if (strcmp(cmd, "outputs") == 0) {
		bench_usage_outputs(stdout);
		return BENCH_EXIT_OK;
	}
	if (strcmp(cmd, "run") == 0) {
		struct bench_opts o;
		int rc = bench_parse_run(argc - 1, argv + 1, &o);
		if (rc != 0)
			return rc < 0 ? BENCH_EXIT_OK : rc;
		o.argc = argc;
		o.argv = argv;
		if (o.dry_run) {
			/* silence would read the same as a run that never started */
			if (!o.quiet)
				printf("dry run: policy %s, workload %s, %lld workers, %s executor: every option and "
				       "parameter is valid; nothing was run\n",
				       o.policy->name, o.workload->name, (long long)o.core.thread_count, o.executor);
			rc = BENCH_EXIT_OK;
		} else if (strcmp(o.executor, "sim") == 0) {
			const char *names[64];
			size_t n = 0;
			for (const struct sb_policy_ops *const *p = sb_policies; *p && n + 1 < sizeof names / sizeof *names; p++)
				names[n++] = (*p)->name;
			names[n] = NULL;
			/* the table measured on this machine, unless one is named: a simulation speaks for
			 * the machine its costs were measured on (a program without the simulator says that
			 * instead, from sb_sim_run, whatever tables there are) */
			static char path[PATH_MAX + 128];
			if (!o.sim_costs && sb_sim_built()) {
				struct bench_host h = { 0 };
				bench_host_topology(&h);
				snprintf(path, sizeof path, "%s/sim/costs-%s.txt", SB_SRCDIR, h.machine);
				if (access(path, R_OK) != 0) {
					bench_error("no cost table for this machine (%s): %s is missing; measure it with "
						    "`make calibrate`, or name a table with --sim-costs FILE", h.machine, path);
					bench_opts_free(&o);
					return BENCH_EXIT_USAGE;
				}
				o.sim_costs = path;
			}
			rc = sb_sim_run(o.sim_costs, (unsigned)o.p.sim_cores, names, o.policy->name, run_body, &o, err, sizeof err);
			if (rc < 0) {
				bench_error("%s", err);
				rc = BENCH_EXIT_USAGE;
			}
		} else {
			rc = bench_run(&o);
		}
		bench_opts_free(&o);
		return rc;
	}
	bench_error("unknown command '%s'; valid commands are: run, list, outputs, host, help", cmd);
	return BENCH_EXIT_USAGE;
}
