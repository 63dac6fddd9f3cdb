/*
 * meta.c - meta.json: what was run, from which source, on which machine, with which values.
 *
 * Owns gathering the facts a reader needs to reproduce or doubt a result: the git commit and
 * whether the tree had changes, the command line, the host, CPU model, core count and hwloc
 * topology, the compiler and its flags (compiled in from the Makefile), the date, and every
 * parameter value of the policy, the core and the workload (through core/param.h). Facts that
 * cannot be found are written as "unknown" or null, never guessed. Does not own the results.
 */
#include <ctype.h>
#include <hwloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "../core/config.h"
#include "bench.h"

#ifndef SB_BUILD_CFLAGS
#define SB_BUILD_CFLAGS "unknown"
#endif

/* The commit the program was built from and whether the tree differed from it then, written by
 * the Makefile at every build (build/source-state.h, rewritten only when it changes, so that
 * meta.o is compiled again exactly when the state does). Compiled in rather than asked of git at
 * run time: a binary is the code it was built from, whatever checkout it later runs beside (a
 * copied build of an older commit, a tree moved on since the last make), and it needs no git. */
#ifdef SB_SOURCE_STATE
#include SB_SOURCE_STATE
#endif
#ifndef SB_SOURCE_SHA
#define SB_SOURCE_SHA "unknown"
#define SB_SOURCE_DIRTY (-1)
#endif

static void git_facts(struct bench_host *h)
{
	/* Programs carried to another machine (scripts/carry.sh run), or an earlier commit's build
	 * run beside this one (scripts/targets.sh), may name their commit in the environment: built
	 * before the state was compiled in, they cannot say it themselves */
	const char *sha = getenv("SCHEDBED_SOURCE_SHA"), *dirty = getenv("SCHEDBED_SOURCE_DIRTY");
	if (sha && *sha) {
		snprintf(h->git_sha, sizeof h->git_sha, "%s", sha);
		h->git_dirty = !dirty || strcmp(dirty, "0") != 0;
		return;
	}
	snprintf(h->git_sha, sizeof h->git_sha, "%s", SB_SOURCE_SHA);
	h->git_dirty = SB_SOURCE_DIRTY;
}

/* CPU model, counts and shape all from hwloc, the library that also pins the workers, so that
 * meta.json and the core agree on what the machine is. */
/* The machine's name for its cost table: the CPU model's words, lowercased, without the ones
 * every model carries (vendor marks, "CPU", "Processor", the clock), at most four, then the
 * hardware thread count: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz" on 16 threads is
 * intel-xeon-gold-6338-16t. Stable across reboots and kernels, distinct across core counts. */
static void machine_name(struct bench_host *h)
{
	static const char *const skip[] = { "r", "tm", "cpu", "processor", "with", "core", "cores", NULL };
	char *o = h->machine, *end = h->machine + sizeof h->machine - 16;
	const char *p = h->cpu_model;
	int words = 0;
	while (*p && words < 4) {
		char w[64];
		size_t n = 0;
		while (*p && !isalnum((unsigned char)*p))
			p++;
		while (isalnum((unsigned char)*p)) {
			if (n + 1 < sizeof w)
				w[n++] = (char)tolower((unsigned char)*p);
			p++;
		}
		w[n] = 0;
		bool drop = n == 0 || (n > 3 && !strcmp(w + n - 3, "ghz"));
		for (const char *const *s = skip; *s && !drop; s++)
			drop = !strcmp(w, *s);
		if (drop || o + n + 1 >= end)
			continue;
		o += sprintf(o, "%s%s", words ? "-" : "", w);
		words++;
	}
	sprintf(o, "%s%ut", words ? "-" : "", h->pus);
}

/* The processor's brand string (cpuid leaves 0x80000002-4), trimmed: what hwloc's x86 backend
 * reports as CPUModel. Read here because that backend sometimes gives up within a run (1 run in
 * 19,255 of one METG sweep) and hwloc then takes /proc/cpuinfo's "model name", which on a guest
 * can be another name for the same machine ("AMD EPYC" for "Oxide Virtual Turin-like
 * Processor"): the run would name a machine of its own. False where there is no brand string. */
static bool cpu_brand(char *out, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned r[13] = { 0 };
	if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < 0x80000004u) /* int in clang's cpuid.h, unsigned in gcc's */
		return false;
	for (unsigned i = 0; i < 3; i++)
		__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
	const char *b = (const char *)r; /* 48 bytes, and r[12] ends it */
	while (*b == ' ')
		b++;
	size_t len = strlen(b);
	while (len && b[len - 1] == ' ')
		len--;
	if (!len || len >= n)
		return false;
	memcpy(out, b, len);
	out[len] = 0;
	return true;
#else
	(void)out;
	(void)n;
	return false;
#endif
}

/* The processor's family, model and stepping (cpuid leaf 1, with the extended fields as the
 * vendors' manuals combine them): a guest's brand string can be the same for two generations
 * ("AMD EPYC" on the 2-core hosts was family 23 on one day and family 25 on another, with 1.4 to
 * 1.7 times the per-task costs apart), so a run says which it had. "" where there is no cpuid. */
static void cpu_id(char *out, size_t n)
{
	out[0] = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model += ((a >> 16) & 0xf) << 4;
	snprintf(out, n, "%u.%u.%u", family, model, stepping);
#else
	(void)n;
#endif
}

static void topology(struct bench_host *h)
{
	snprintf(h->cpu_model, sizeof h->cpu_model, "unknown");
	hwloc_topology_t t;
	if (hwloc_topology_init(&t) != 0)
		return;
	if (hwloc_topology_load(t) == 0) {
		hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
		const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
		if (model) {
			snprintf(h->cpu_model, sizeof h->cpu_model, "%s", model);
			size_t n = strlen(h->cpu_model); /* some firmware pads the name with spaces */
			while (n && h->cpu_model[n - 1] == ' ')
				h->cpu_model[--n] = 0;
		}
		h->packages = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
		h->cores = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
		h->pus = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
		/* a machine that is not symmetric has no synthetic description; then only the counts */
		if (hwloc_topology_export_synthetic(t, h->topology, sizeof h->topology, 0) < 0 &&
		    hwloc_topology_export_synthetic(t, h->topology, sizeof h->topology,
						    HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_NO_EXTENDED_TYPES |
							    HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_NO_ATTRS) < 0)
			h->topology[0] = 0;
	}
	hwloc_topology_destroy(t);
}

void bench_host_topology(struct bench_host *h)
{
	topology(h);
	cpu_brand(h->cpu_model, sizeof h->cpu_model);
	cpu_id(h->cpu_id, sizeof h->cpu_id);
	machine_name(h);
}

void bench_host_collect(struct bench_host *h)
{
	memset(h, 0, sizeof *h);
	git_facts(h);
	if (gethostname(h->host, sizeof h->host) != 0)
		snprintf(h->host, sizeof h->host, "unknown");
	h->host[sizeof h->host - 1] = 0;
	struct utsname u;
	snprintf(h->kernel, sizeof h->kernel, "%s", uname(&u) == 0 ? u.release : "");
	bench_host_topology(h);
}

/* The command line as a shell would take it back. */
static void command_line(FILE *f, int argc, char **argv)
{
	size_t len = 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	char *s = malloc(len), *p = s;
	if (!s) {
		fputs("null", f);
		return;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=,:+-@%") == strlen(a);
		if (i)
			*p++ = ' ';
		if (plain) {
			p = stpcpy(p, a);
			continue;
		}
		*p++ = '\'';
		for (; *a; a++) {
			if (*a == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *a;
		}
		*p++ = '\'';
	}
	*p = 0;
	sb_json_string(f, s);
	free(s);
}

static void param_object(FILE *f, const struct sb_param *tbl, const void *obj)
{
	fputs("{\n", f);
	if (tbl)
		sb_param_json(tbl, obj, f, "      ");
	fputs("    }", f);
}

void bench_write_meta(FILE *f, const struct bench_opts *o, struct bench_result *r, const struct bench_host *h)
{
	bench_json_kv(f, "{\n  \"run_id\": ", r->run_id);
	bench_json_kv(f, ",\n  \"date\": ", r->date);
	bench_json_kv(f, ",\n  \"git\": { \"sha\": ", h->git_sha);
	fprintf(f, ", \"dirty\": %s },\n  \"command_line\": ", h->git_dirty < 0 ? "null" : h->git_dirty ? "true" : "false");
	command_line(f, o->argc, o->argv);
	bench_json_kv(f, ",\n  \"host\": ", h->host);
	bench_json_kv(f, ",\n  \"cpu_model\": ", h->cpu_model);
	bench_json_kv(f, ",\n  \"cpu_id\": ", h->cpu_id[0] ? h->cpu_id : NULL);
	bench_json_kv(f, ",\n  \"kernel\": ", h->kernel[0] ? h->kernel : NULL);
	bench_json_kv(f, ",\n  \"machine\": ", h->machine);
	fprintf(f, ",\n  \"cores_online\": %u,\n  \"topology\": { \"synthetic\": ", h->pus);
	sb_json_string(f, h->topology[0] ? h->topology : NULL);
	fprintf(f, ", \"packages\": %u, \"cores\": %u, \"pus\": %u, \"hwloc_api\": \"0x%x\" },\n", h->packages, h->cores,
		h->pus, (unsigned)HWLOC_API_VERSION);
	bench_json_kv(f, "  \"compiler\": { \"version\": ", __VERSION__);
	bench_json_kv(f, ", \"flags\": ", SB_BUILD_CFLAGS);
	bench_json_kv(f, " },\n  \"policy\": {\n    \"name\": ", o->policy->name);
	fprintf(f, ",\n    \"version\": %d,\n    \"description\": ", o->policy->version);
	sb_json_string(f, o->policy->description);
	fputs(",\n    \"params\": ", f);
	param_object(f, o->policy->params, o->pparams);
	fputs("\n  },\n  \"core\": {\n", f);
	sb_param_json(sb_core_params, &o->core, f, "    ");
	bench_json_kv(f, "  },\n  \"workload\": {\n    \"name\": ", o->workload->name);
	bench_json_kv(f, ",\n    \"description\": ", o->workload->description);
	fputs(",\n    \"classes\": [", f);
	for (unsigned i = 0; i < r->nclasses; i++) {
		fputs(i ? ", " : "", f);
		sb_json_string(f, o->workload->classes[i]);
	}
	fputs("],\n    \"params\": ", f);
	param_object(f, o->workload->params, o->wparams);
	fprintf(f, "\n  },\n  \"seed\": %lld,\n  \"duration_s\": ", (long long)o->p.seed);
	sb_json_double(f, o->p.jobs ? NAN : o->p.duration);
	bench_json_kn(f, ",\n  \"warmup_s\": ", o->p.warmup);
	bench_json_kn(f, ",\n  \"jobs\": ", o->p.jobs ? (double)o->p.jobs : NAN);
	fprintf(f, ",\n  \"trace_limit\": %lld", (long long)o->p.trace_limit);
	bench_json_kv(f, ",\n  \"executor\": {\n    \"name\": ", o->executor);
	if (strcmp(o->executor, "sim") == 0) {
		bench_json_kv(f, ",\n    \"platform\": ", sb_sim_platform());
		bench_json_kv(f, ",\n    \"costs_file\": ", o->sim_costs);
		bench_json_kv(f, ",\n    \"costs_version\": ", sb_sim_costs_version());
		fputs(",\n    \"costs_ns\": {", f);
		for (int c = 0; c < SB_NR_COSTS; c++) {
			fprintf(f, "%s\"%s\": ", c ? ", " : " ", sb_cost_names[c]);
			sb_json_double(f, sb_sim_cost((enum sb_cost)c));
		}
		fputs(" }", f);
		struct sb_sim_line l;
		sb_sim_shared_line(&l);
		fprintf(f, ",\n    \"shared_line\": { \"ops\": %llu, \"out_of_order\": %llu, \"busy_ns\": ",
			(unsigned long long)l.ops, (unsigned long long)l.out_of_order);
		sb_json_double(f, l.busy_ns);
		fputs(", \"span_ns\": ", f);
		sb_json_double(f, l.span_ns);
		fputs(" }", f);
	}
	fputs("\n  }", f);
	bench_json_kv(f, ",\n  \"failure\": ", r->failure);
	fputs("\n}\n", f);
}
