/*
 * outputs.c - what a run writes (harness/outputs.c, outdir.c, report.c, json.c, the plots):
 * a small bounded run of the micro workload, under every registered policy, exits 0 and writes
 * the seven files: meta.json and summary.json parse and hold the required keys (and the values
 * the command line set), summary.json's percentiles are jobs.csv's, the CSV headers are exact,
 * every job is a row; scripts/plot_run.py draws its figures and the run's own plot.gp draws it
 * in the terminal, writing no file; harness/outputs.c documents every column and key; two runs
 * never share a result directory; the table names what the policy did; doubles are written in
 * their shortest round-trip form.
 *
 * The program runs as in cli.c (SCHEDBED_BIN, tests/common.h).
 */
#include <time.h>

#include "../../core/stats.h"
#include "program.h"

/* ---- a good run ---- */

#define GOOD_JOBS "24"
#define GOOD_LENGTH "50"

/* Run /usr/bin/python3 -c code args...; true when it exits 0. Its stderr goes to ours. */
static void first_line(const char *path, char *buf, size_t len)
{
	slurp(path, buf, len);
	buf[strcspn(buf, "\n")] = 0;
}

/* Checks shared by every policy's good run; returns the run directory (malloc'd). */
static char *good_run(const char *policy, const char *dir, bool trace)
{
	char *argv[] = { SCHEDBED_BIN, "run", "--policy", (char *)policy, "--workload", "micro", "--jobs", GOOD_JOBS,
			 "--set", "workload.length=" GOOD_LENGTH, "--set", "core.thread_count=2", "--set", "stall_limit=5000",
			 "--check", "--quiet", "--out", "run", trace ? "--trace" : NULL, NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "policy %s: exit %d, stderr: %s", policy, o->status, o->err);
	cr_expect_str_eq(o->err, "", "--quiet prints nothing on stderr: %s", o->err);
	cr_expect(strstr(o->out, "results: run"), "stdout names the result directory: %s", o->out);
	cr_expect(strstr(o->out, "p99"), "stdout has the summary table: %s", o->out);
	free(o);
	char *run = malloc(512);
	snprintf(run, 512, "%s/run", dir);
	return run;
}

ParameterizedTestParameters(cli, good_run_files)
{
	static struct sb_tpol pols[64];
	size_t n = 0;
	for (const struct sb_policy_ops *const *p = sb_policies; *p && n < 64; p++)
		snprintf(pols[n++].name, sizeof pols[0].name, "%s", (*p)->name);
	return cr_make_param_array(struct sb_tpol, pols, n);
}

ParameterizedTest(struct sb_tpol *pol, cli, good_run_files, .timeout = 60)
{
	char *dir = make_tmp();
	char *run = good_run(pol->name, dir, true);
	char listed[4096];
	listing(run, listed, sizeof listed);
	cr_expect_str_eq(listed, "jobs.csv.gz\nlatency-hist.json.gz\nmeta.json\nplot.gp\nsummary.json\ntrace.json\nworkers.csv\n",
			 "the seven files");
	listing(dir, listed, sizeof listed);
	cr_expect_str_eq(listed, "run\n", "only the result directory, no temporary: %s", listed);

	char path[600];
	snprintf(path, sizeof path, "%s/meta.json", run);
	cr_expect(python_ok("import json,sys\n"
			    "m=json.load(open(sys.argv[1]))\n"
			    "need='git command_line host cpu_model cores_online topology compiler date policy core workload seed duration_s warmup_s jobs trace_limit failure'.split()\n"
			    "miss=[k for k in need if k not in m]\n"
			    "assert not miss, miss\n"
			    "assert m['policy']['name']==sys.argv[2] and 'params' in m['policy']\n"
			    "assert m['core']['thread_count']==2 and m['core']['check'] is True\n"
			    "assert m['workload']['name']=='micro' and m['workload']['params']['length']==" GOOD_LENGTH "\n"
			    "assert m['jobs']==" GOOD_JOBS " and m['failure'] is None\n"
			    "assert 'sha' in m['git'] and 'dirty' in m['git'] and m['compiler']['flags']\n",
			    path, pol->name),
		  "meta.json parses and has the required keys and values");
	snprintf(path, sizeof path, "%s/summary.json", run);
	cr_expect(python_ok("import json,sys\n"
			    "s=json.load(open(sys.argv[1]))\n"
			    "need='run_id policy workload threads window_s jobs throughput tasks_per_s cpu classes counters policy_stats reconciliation failure'.split()\n"
			    "miss=[k for k in need if k not in s]\n"
			    "assert not miss, miss\n"
			    "assert s['all']['count']==" GOOD_JOBS " and s['threads']==2 and s['failure'] is None\n"
			    "assert s['reconciliation']['ok'] is True\n"
			    "c=s['classes']['chain']\n"
			    "assert set('count throughput p50 p90 p99 p999 max mean'.split())<=set(c)\n"
			    "assert c['count']==" GOOD_JOBS " and c['p50']<=c['p99']<=c['max']\n"
			    "assert len(s['counters']['workers'])==2 and 'stolen' in s['counters']['total']\n"
			    "assert s['counters']['total']['tasks']==" GOOD_JOBS "*" GOOD_LENGTH "\n",
			    path, NULL),
		  "summary.json parses, has the required keys, and the run adds up");
	/* one percentile method: summary.json's values are what the plots compute from jobs.csv */
	cr_expect(python_ok("import csv,json,sys\n"
			    "sys.path.insert(0,sys.argv[2]+'/scripts')\n"
			    "from sbresults import pct, job_latencies\n"
			    "s=json.load(open(sys.argv[1]+'/summary.json'))\n"
			    "assert s['percentiles']=='nearest rank over every job', s['percentiles']\n"
			    "for c,v in job_latencies(sys.argv[1]).items():\n"
			    "  for k,q in (('p50',50),('p90',90),('p99',99),('p999',99.9),('max',100)):\n"
			    "    assert s['classes'][c][k]==pct(v,q), (c,k,s['classes'][c][k],pct(v,q))\n",
			    run, SB_SRCDIR),
		  "summary.json's percentiles are the nearest-rank values of jobs.csv");
	snprintf(path, sizeof path, "%s/trace.json", run);
	cr_expect(python_ok("import json,sys\n"
			    "t=json.load(open(sys.argv[1]))['traceEvents']\n"
			    "x=[e for e in t if e['ph']=='X' and e.get('cat') in ('task','steal')]\n"
			    "assert len(x)==" GOOD_JOBS "*" GOOD_LENGTH ", len(x)\n"
			    "assert all(e['name'].startswith('chain') and 'job' in e['args'] for e in x)\n",
			    path, NULL),
		  "trace.json parses and has one X event per task");

	char line[4096], expect[4096];
	snprintf(path, sizeof path, "%s/jobs.csv.gz", run);
	first_line(path, line, sizeof line);
	cr_expect_str_eq(line, "id,class,work_level,arrival_ns,submit_ns,start_ns,end_ns,latency_ns,end_worker,status");
	static char body[1 << 16];
	slurp(path, body, sizeof body);
	cr_expect_eq(count_lines(body), 1 + (size_t)atoi(GOOD_JOBS), "one row per job:\n%s", body);
	snprintf(path, sizeof path, "%s/workers.csv", run);
	first_line(path, line, sizeof line);
	snprintf(expect, sizeof expect, "worker");
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++) {
		strcat(expect, ",");
		strcat(expect, sb_counter_names[c]);
	}
	cr_expect_str_eq(line, expect);
	slurp(path, body, sizeof body);
	cr_expect_eq(count_lines(body), 1 + 2 + 1, "header, two workers, the other threads:\n%s", body);
	cr_expect(strstr(body, "\nother,"), "a row for the other threads");
	free(run);
	remove_tree(dir);
	free(dir);
}

static void expect_png(const char *run, const char *name)
{
	char path[800], head[16];
	snprintf(path, sizeof path, "%s/%s", run, name);
	FILE *f = fopen(path, "rb");
	cr_assert(f, "%s was written in the run directory", name);
	size_t n = fread(head, 1, 8, f);
	fclose(f);
	cr_expect(n == 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is a PNG", name);
}

Test(cli, plot_run_makes_pngs, .timeout = 120)
{
	char *dir = make_tmp();
	char *run = good_run(sb_policies[0]->name, dir, true);
	char *argv[] = { PYTHON, SB_SRCDIR "/scripts/plot_run.py", run, NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "plot_run.py: exit %d, stderr: %s", o->status, o->err);
	expect_png(run, "latency_cdf.png");
	expect_png(run, "throughput.png");
	expect_png(run, "timeline.png");
	free(run);
	scratch_done(dir, o);
}

/* The run's own gnuplot script draws in the terminal, the latency CDF alone or with the
 * throughput, and writes no file (the figure files are plot_run.py's). */
Test(cli, run_gnuplot_script_draws, .timeout = 120)
{
	char *dir = make_tmp();
	char *run = good_run(sb_policies[0]->name, dir, false);
	char gp[700];
	snprintf(gp, sizeof gp, "%s/plot.gp", run);
	struct outcome *o = outcome_new();
	char *cdf[] = { "/usr/bin/gnuplot", "-e", "only='cdf'", gp, NULL };
	run_in(dir, cdf, o);
	cr_assert_eq(o->status, 0, "gnuplot (only='cdf'): exit %d, stderr: %s", o->status, o->err);
	cr_expect(strstr(o->out, "latency CDF") && strstr(o->out, "chain"), "the CDF and its class in the terminal: %s",
		  o->out);
	cr_expect(!strstr(o->out, "jobs finished per second"), "only='cdf': no throughput: %s", o->out);
	/* the curve is drawn: the class's mark (the first class's letter, A) appears beyond the legend,
	 * at several points (jobs of like latency share a character cell: how many cells varies) */
	size_t marks = 0;
	for (const char *s = o->out; *s; s++)
		marks += *s == 'A';
	cr_expect(marks > 3, "the CDF has a curve (%zu marks): %s", marks, o->out);
	cr_expect(o->err[0] == 0, "gnuplot says nothing on stderr: %s", o->err);
	char *both[] = { "/usr/bin/gnuplot", gp, NULL };
	run_in(dir, both, o);
	cr_assert_eq(o->status, 0, "gnuplot: exit %d, stderr: %s", o->status, o->err);
	cr_expect(strstr(o->out, "latency CDF") && strstr(o->out, "jobs finished per second"),
		  "the CDF and the throughput in the terminal: %s", o->out);
	cr_expect(o->err[0] == 0, "gnuplot says nothing on stderr: %s", o->err);
	char listed[4096];
	listing(run, listed, sizeof listed);
	cr_expect_str_eq(listed, "jobs.csv.gz\nlatency-hist.json.gz\nmeta.json\nplot.gp\nsummary.json\nworkers.csv\n",
			 "gnuplot wrote no file in the run directory: %s", listed);
	listing(dir, listed, sizeof listed);
	cr_expect_str_eq(listed, "run\n", "nor beside it: %s", listed);
	free(run);
	scratch_done(dir, o);
}

/* A run cut short by a shutdown (--drain 0: tiny jobs of 10 ms, a thousand in flight per
 * producer) has jobs that ended ok and jobs that were cancelled. */
static void cut_run(const char *dir, const char *out, const char *rows)
{
	char *argv[] = { SCHEDBED_BIN, "run", "--policy", "stealing", "--workload", "tiny", "--threads", "2", "--duration",
			 "0.3", "--warmup", "0", "--drain", "0", "--set", "work_ns=10000000", "--set", "window=1000",
			 "--rows", (char *)rows, "-q", "--out", (char *)out, NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "a shutdown is no failure (exit %d): %s", o->status, o->err);
	free(o);
}

/* latency-hist.json.gz holds every job of the window, cancelled ones included: per class and
 * status its buckets count exactly jobs.csv's rows, each row in the bucket of its latency. */
Test(cli, latency_hist_keeps_every_job, .timeout = 60)
{
	char *dir = make_tmp();
	cut_run(dir, "cut", "1000000");
	char run[600];
	snprintf(run, sizeof run, "%s/cut", dir);
	cr_expect(python_ok("import csv,gzip,json,sys,collections\n"
			    "run=sys.argv[1]\n"
			    "sys.path.insert(0,sys.argv[2]+'/scripts')\n"
			    "import sbhist as sw\n"
			    "doc=json.load(gzip.open(run+'/latency-hist.json.gz','rt'))\n"
			    "want=collections.Counter()\n"
			    "for r in csv.DictReader(gzip.open(run+'/jobs.csv.gz','rt')):\n"
			    "    want[(r['status'],r['class'],sw.bucket_index(int(r['latency_ns'])))]+=1\n"
			    "got=collections.Counter()\n"
			    "groups=[('ok',c) for c in doc['classes'] if c!='all']\n"
			    "groups+=[(st,c) for st in doc['statuses'] for c in doc['statuses'][st]]\n"
			    "for st,c in groups:\n"
			    "    d=doc['classes'] if st=='ok' else doc['statuses'][st]\n"
			    "    for i,n in sw.hist_pairs({'classes':d},c): got[(st,c,i)]+=n\n"
			    "assert got==want, (sorted(got.items())[:5], sorted(want.items())[:5])\n"
			    "assert doc['jobs']['cancelled']>0 and doc['jobs']['ok']>0, doc['jobs']\n"
			    "s=json.load(open(run+'/summary.json'))\n"
			    "assert sum(doc['jobs'].values())==s['recorded']['job_rows'], (doc['jobs'], s['recorded'])\n"
			    "assert sum(doc['finished_ok']['counts'])==doc['jobs']['ok'], doc['finished_ok']\n",
			    run, SB_SRCDIR),
		  "the histogram counts every row, by class and status");
	scratch_done(dir, outcome_new());
}

/* Past --rows the per-job rows are not written; the histogram is, and both plots draw from it:
 * plot.gp (its data written in, in the terminal) and plot_run.py (its figure files). */
Test(cli, past_rows_the_histogram_is_plotted, .timeout = 120)
{
	char *dir = make_tmp();
	/* jobs a few at a time, so that their latencies spread over many buckets (with a thousand
	 * queued per producer they all end together at the cut: one bucket, a CDF of one point) */
	char *argv[] = { SCHEDBED_BIN, "run", "--policy", "stealing", "--workload", "tiny", "--threads", "2", "--duration",
			 "0.3", "--warmup", "0", "--drain", "0", "--set", "work_ns=2000000", "--set", "window=4", "--rows", "1",
			 "-q", "--out", "few", NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "the run (exit %d): %s", o->status, o->err);
	char run[600], gp[700];
	snprintf(run, sizeof run, "%s/few", dir);
	char listed[4096];
	listing(run, listed, sizeof listed);
	cr_expect_str_eq(listed, "latency-hist.json.gz\nmeta.json\nplot.gp\nsummary.json\nworkers.csv\n",
			 "no jobs.csv.gz past --rows: %s", listed);
	snprintf(gp, sizeof gp, "%s/summary.json", run);
	cr_expect(python_ok("import json,sys\n"
			    "s=json.load(open(sys.argv[1]))\n"
			    "assert s['recorded']['job_rows_written'] is False and s['recorded']['job_rows'] > 1, s['recorded']\n",
			    gp, NULL),
		  "summary.json says the rows were not written");
	snprintf(gp, sizeof gp, "%s/plot.gp", run);
	char *dumb[] = { "/usr/bin/gnuplot", gp, NULL };
	run_in(dir, dumb, o);
	cr_expect_eq(o->status, 0, "gnuplot: exit %d, stderr: %s", o->status, o->err);
	cr_expect(strstr(o->out, "latency CDF") && strstr(o->out, "tiny") && strstr(o->out, "jobs finished per second"),
		  "the CDF and the throughput in the terminal: %s", o->out);
	cr_expect(o->err[0] == 0, "gnuplot says nothing on stderr: %s", o->err);
	char *plot[] = { PYTHON, SB_SRCDIR "/scripts/plot_run.py", run, NULL };
	run_in(dir, plot, o);
	cr_expect_eq(o->status, 0, "plot_run.py: exit %d, stderr: %s", o->status, o->err);
	expect_png(run, "latency_cdf.png");
	expect_png(run, "throughput.png");
	scratch_done(dir, o);
}

/* Every counter has its line in `schedbed outputs`: none reads "(null)". */
Test(cli, outputs_explains_every_counter, .timeout = 30)
{
	char *dir = make_tmp();
	char *argv[] = { SCHEDBED_BIN, "outputs", NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "%s", o->err);
	cr_expect(!strstr(o->out, "(null)"), "no counter without its explanation: %s", o->out);
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
		cr_expect(strstr(o->out, sb_counter_help[c]), "counter %s explained", sb_counter_names[c]);
	scratch_done(dir, o);
}

/* `schedbed outputs` describes every column and key a real run writes. */
Test(cli, outputs_documents_every_column_and_key, .timeout = 60)
{
	char *dir = make_tmp();
	char *run = good_run("hybrid", dir, true);
	char *argv[] = { SCHEDBED_BIN, "outputs", NULL };
	struct outcome *o = outcome_new();
	run_in(dir, argv, o);
	cr_assert_eq(o->status, 0, "%s", o->err);
	char doc[700];
	snprintf(doc, sizeof doc, "%s/outputs.txt", dir);
	FILE *f = fopen(doc, "w");
	cr_assert(f);
	fputs(o->out, f);
	fclose(f);
	/* keys whose members are named by something else: classes by the workload, params and core by
	 * schedbed list, policy_stats by the policy, counters by the counter list (checked as columns) */
	cr_expect(python_ok("import csv,gzip,json,re,sys\n"
			    "run,doc=sys.argv[1],open(sys.argv[2]).read()\n"
			    "words=set(re.findall(r'[A-Za-z_0-9]+',doc))\n"
			    "named=set()\n"
			    "def walk(d,skip=('classes','params','core','policy_stats','other','total','window','workers')):\n"
			    "  for k,v in d.items():\n"
			    "    named.add(k)\n"
			    "    if isinstance(v,dict) and k not in skip: walk(v)\n"
			    "for n in ('summary.json','meta.json'): walk(json.load(open(run+'/'+n)))\n"
			    "named|=set(next(csv.reader(gzip.open(run+'/jobs.csv.gz','rt'))))\n"
			    "named|=set(next(csv.reader(open(run+'/workers.csv'))))\n"
			    "missing=sorted(k for k in named if k not in words)\n"
			    "assert not missing, 'not in schedbed outputs: '+' '.join(missing)\n",
			    run, doc),
		  "every column and key is documented");
	char *help[] = { SCHEDBED_BIN, "run", "--help", NULL };
	run_in(dir, help, o);
	cr_expect(strstr(o->out, "schedbed outputs"), "run --help points to schedbed outputs: %s", o->out);
	free(run);
	scratch_done(dir, o);
}

Test(cli, run_ids_are_unique, .timeout = 60)
{
	char *dir = make_tmp();
	char *argv[] = { SCHEDBED_BIN, "run", "--policy", (char *)sb_policies[0]->name, "--workload", "micro",
			 "--jobs", "2", "--set", "length=10", "--quiet", NULL };
	struct outcome *o = outcome_new();
	for (int i = 0; i < 2; i++) {
		run_in(dir, argv, o);
		cr_assert_eq(o->status, 0, "run %d: %s", i, o->err);
	}
	char results[512], names[4096];
	snprintf(results, sizeof results, "%s/results", dir);
	listing(results, names, sizeof names);
	cr_expect_eq(count_lines(names), 2, "two runs, two result directories: %s", names);
	cr_expect_null(strstr(names, ".tmp-"), "no temporary left: %s", names);
	scratch_done(dir, o);
}

/* ---- the table names what the policy did ---- */

/* hybrid at jogasaki's default level sends every oltp job one way, and the table says so with
 * the setting that splits them; at that setting both paths have jobs and there is no note. */
Test(cli, table_shows_hybrid_split_and_degenerate_note, .timeout = 60)
{
	char *dir = make_tmp();
	struct outcome *o = outcome_new();
	const char *levels[] = { "0", "20" };
	for (int i = 0; i < 2; i++) {
		char set[64];
		snprintf(set, sizeof set, "lightweight_job_level=%s", levels[i]);
		char *argv[] = { SCHEDBED_BIN, "run", "--policy", "hybrid", "--workload", "oltp", "--threads", "2",
				 "--jobs", "60", "--set", "clients=3", "--set", "epoch_us=1000", "--set", set, "--out",
				 (char *)levels[i], NULL };
		run_in(dir, argv, o);
		cr_assert_eq(o->status, 0, "%s", o->err);
		const char *line = strstr(o->out, "  hybrid: jobs_serial ");
		cr_assert(line, "the table shows hybrid's split: %s", o->out);
		unsigned long serial = 0, stealing = 0;
		cr_assert_eq(sscanf(line, "  hybrid: jobs_serial %lu jobs_stealing %lu", &serial, &stealing), 2, "%s", line);
		if (i == 0) {
			cr_expect_eq(serial, 0, "level 0: no oltp job runs serially (%lu)", serial);
			cr_expect(strstr(o->out, "note: every job took one path") &&
					  strstr(o->out, "--set lightweight_job_level=20"),
				  "the degenerate run is named with the setting that differs: %s", o->out);
		} else {
			cr_expect(serial > 0 && stealing > 0, "level 20 splits: %lu serial, %lu stealing", serial, stealing);
			cr_expect(!strstr(o->out, "note: "), "no note when both paths ran: %s", o->out);
		}
	}
	scratch_done(dir, o);
}

/* ---- numbers in the result files ---- */

/* Doubles are written in the shortest form that reads back as the same value. */
Test(cli, doubles_are_shortest_round_trip)
{
	static const struct {
		double v;
		const char *want; /* NULL: only the round trip is checked */
	} cases[] = { { 0.1, "0.1" }, { 0.056174, "0.056174" }, { 150791, "150791" }, { -2.5, "-2.5" },
		      { 1.0 / 3, NULL }, { 1e-300, "1e-300" }, { 123456.789, "123456.789" }, { 1e300, "1e+300" },
		      { 0.1 + 0.2, "0.30000000000000004" } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		cr_assert(f);
		sb_json_double(f, cases[i].v);
		fclose(f);
		cr_expect_eq(strtod(buf, NULL), cases[i].v, "%s reads back as %.17g", buf, cases[i].v);
		if (cases[i].want)
			cr_expect_str_eq(buf, cases[i].want, "%.17g is written as %s", cases[i].v, buf);
		free(buf);
	}
}
