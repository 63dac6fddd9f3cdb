/*
 * outputs.c - `schedbed outputs`: the one reference for what a run writes, every column of
 * jobs.csv and workers.csv and every key of summary.json and meta.json, with units, the time
 * origin and what an empty or null value means. tests/harness/outputs.c checks that every column and
 * key a real run writes is described here, so a new one cannot go undocumented.
 *
 * Counter columns come from core/stats.c's sb_counter_help, policy statistics from each
 * policy's own names (listed, not explained: they are the policy's).
 */
#include "../core/stats.h"
#include "bench.h"

static const char head[] =
	"What `schedbed run` writes into its result directory (results/<run-id>/ or --out DIR).\n"
	"\n"
	"The directory appears complete or not at all: it is written under a hidden temporary name\n"
	"beside its place and renamed when every file is written; an interrupt or failure before\n"
	"that removes it. Times are nanoseconds; \"run start\" is the moment the runtime was created,\n"
	"the origin of every time in the CSV files. The measurement window opens after --warmup and\n"
	"closes after --duration (or when --jobs jobs have finished); only jobs submitted inside it\n"
	"are counted, recorded and written. Latency is from a job's arrival to the end of its\n"
	"teardown. Percentiles everywhere (table, summary.json, plots) use one method: nearest rank,\n"
	"the smallest latency with at least that fraction of the jobs at or below it, over every\n"
	"job's exact latency (numpy: percentile(v, q, method=\"inverted_cdf\")); only if job rows were\n"
	"capped (more than 4M jobs on one thread) do they fall back to histogram bucket bounds (up to\n"
	"3% high), and summary.json's \"percentiles\" says which. JSON numbers are written in the\n"
	"shortest form that reads back exactly; null means \"no value\" (a rate over an empty window,\n"
	"a duration of a run bounded by --jobs).\n"
	"\n"
	"jobs.csv.gz - one row per job of the window, in submit order (gzip-compressed CSV):\n"
	"  id          the job's number, unique in the run\n"
	"  class       the workload's job class (schedbed list shows each workload's classes)\n"
	"  work_level  the statement's work level (hybrid's threshold compares it; -1 undefined)\n"
	"  arrival_ns  when the job was due (open loop: its scheduled arrival), from run start\n"
	"  submit_ns   when it was submitted to the runtime, from run start\n"
	"  start_ns    when its first task started, from run start; empty: no task ran (all dropped)\n"
	"  end_ns      when its teardown finished, from run start\n"
	"  latency_ns  end_ns - arrival_ns\n"
	"  end_worker  worker that ran the teardown; -1: a thread that is not a worker (a request\n"
	"              thread running it serially or in place)\n"
	"  status      ok, error (a task failed) or cancelled\n"
	"\n"
	"workers.csv - one row per worker (0..threads-1), then one row \"other\" for every thread that\n"
	"is not a worker (request threads, watcher); counts over the whole run, warm-up included:\n"
	"  worker      worker index, or other\n"
	"  then one column per counter, named and explained under summary.json's counters below\n";

static const char middle[] =
	"\n"
	"summary.json - the run's numbers:\n"
	"  run_id, policy, workload   as in meta.json\n"
	"  threads        workers\n"
	"  seed           the workload's random seed\n"
	"  window_s       length of the measurement window, s\n"
	"  drain_s        time pending jobs were given after the window before being cancelled, s\n"
	"  unfinished     jobs still pending after the drain time and cancelled (not in the latency\n"
	"                 figures)\n"
	"  overloaded     true when unfinished > 0 (the run then exits 3)\n"
	"  jobs           jobs of the window (submitted in it and finished), = all.count\n"
	"  throughput     jobs finished in the window per second of it\n"
	"  tasks          tasks run in the window; tasks_per_s: per second of it\n"
	"  latency_unit   \"ns\": the unit of every latency below\n"
	"  percentiles    how p50..max were computed (see above)\n"
	"  cpu            user_s, sys_s: process CPU time of the whole run, s; window_user_s,\n"
	"                 window_sys_s: during the window; window_cores: their sum / window_s;\n"
	"                 peak_rss_kib: peak resident set, KiB. Under --executor sim: the simulated\n"
	"                 CPU time (work, charged costs, spinning; not parked or sleeping), sys 0, rss 0\n"
	"  classes        per job class with jobs in the window: count, throughput (per s),\n"
	"                 p50, p90, p99, p999, max (ns), mean (ns)\n"
	"  all            the same over every class\n"
	"  counters       workers: one object per worker (\"worker\" and the counters below),\n"
	"                 other: threads that are not workers, total: their sum over the run,\n"
	"                 window: the total's change during the window\n"
	"  policy_stats   the policy's own counters by name (the table prints those that show\n"
	"                 which of its mechanisms it used)\n"
	"  reconciliation jobs_submitted, jobs_done, jobs_failed (the workload's count), teardowns,\n"
	"                 tasks_created (by the workload), tasks_run, yields, blocked, dropped (the\n"
	"                 core's), unfinished (as above), results_wrong (results a workload found wrong: a task's input\n"
	"                 from the wrong predecessor; any makes the run fail, exit 1), ok: true\n"
	"                 when they add up (the run fails otherwise)\n"
	"  recorded       job_rows (rows in jobs.csv.gz), job_rows_dropped (over the cap),\n"
	"                 trace_events (recorded), trace_events_written (in trace.json),\n"
	"                 trace_events_lost (not recorded: out of memory or over the cap)\n"
	"  failure        null, or the text of a check-mode violation or stall (the run exits 1)\n"
	"\n"
	"meta.json - how the run was made:\n"
	"  run_id         <date>-<policy>-<workload>, with -N when that name was taken\n"
	"  date           start, UTC, ISO 8601\n"
	"  git            sha of the source tree and dirty (uncommitted changes; null: unknown)\n"
	"  command_line   the command as a shell would take it back\n"
	"  host           host name\n"
	"  cpu_model      the CPU's model name, from hwloc\n"
	"  cores_online   hardware threads this process may use, from hwloc\n"
	"  topology       synthetic (hwloc's description; null when the machine has none),\n"
	"                 packages, cores, pus, hwloc_api\n"
	"  compiler       version and flags schedbed was built with\n"
	"  policy         name, version, description, params (every parameter's value)\n"
	"  core           every core parameter's value (schedbed list)\n"
	"  workload       name, description, classes (index = class number), params\n"
	"  seed           the workload's random seed\n"
	"  duration_s     --duration, s; null for a run bounded by --jobs\n"
	"  warmup_s       --warmup, s\n"
	"  jobs           --jobs; null for a timed run\n"
	"  trace_limit    --trace-limit: most task events trace.json keeps\n"
	"  executor       name: native or sim (--executor); for sim also platform (the simulated\n"
	"                 machine), costs_file, costs_version and costs_ns (every cost it charged, ns)\n"
	"  failure        as in summary.json\n"
	"\n"
	"trace.json (with --trace) - Chrome/Perfetto trace: one lane per worker, an X event per task\n"
	"(args: job, stolen, result), suspensions as X events, wake-ups as instants, the window's\n"
	"start and end as global instants; ts and dur in microseconds from run start.\n"
	"\n"
	"plot.gp - a gnuplot script that draws this run's latency CDF and throughput over time from\n"
	"the files beside it: gnuplot plot.gp (PNG files), or gnuplot -e \"term='dumb'\" plot.gp.\n";

void bench_usage_outputs(FILE *f)
{
	fputs(head, f);
	fputs(middle, f);
	fputs("  counters (workers.csv columns and summary.json counter keys):\n", f);
	for (unsigned c = 0; c < SB_NR_COUNTERS; c++)
		fprintf(f, "    %-18s %s\n", sb_counter_names[c], sb_counter_help[c]);
}
