/*
 * outdir.c - the life of a result directory: made under a temporary name beside its final
 * place, filled, and renamed into place only when complete.
 *
 * Owns the guarantee that nothing looking like a result is left behind by a run that failed
 * before it started, was interrupted (SIGINT, SIGTERM, SIGHUP) or could not write its files:
 * the temporary directory is hidden (".<name>.tmp-XXXXXX"), and every path that may need
 * removing is computed up front. A run with the default place reserves results/<run-id> by
 * creating it empty (mkdir is atomic, so two runs started in the same second get different ids);
 * rename(2) replaces that empty directory. Does not own what goes into the files.
 *
 * Signals are taken on one thread: bench_signals_start blocks them before any other thread
 * exists (every later thread inherits the mask) and a dedicated thread sigwait()s for them. It
 * cleans up under `lock`, the same lock prepare, publish and abandon hold, so an interrupt sees
 * either no result directory or a complete one, never the moment in between (a handler running
 * on whatever thread the kernel picked could, and the reservation used to be unprotected until
 * the handler was installed). A second Ctrl-C stays pending while the first is handled: the
 * process ends once, after cleaning up.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bench.h"

static const char *const out_files[] = { "meta.json", "summary.json", "jobs.csv.gz", "latency-hist.json.gz", "workers.csv", "trace.json",
					"plot.gp" };
#define NFILES (sizeof out_files / sizeof out_files[0])
#define MAX_PARENTS 32

static struct {
	char final[PATH_MAX];
	char tmp[PATH_MAX];
	char files[NFILES][PATH_MAX + 16];
	char parents[MAX_PARENTS][PATH_MAX]; /* directories this run created, outermost first */
	int nparents;
	bool reserved;                       /* final is an empty directory this run created */
	bool active;                         /* tmp exists and was not renamed yet */
	bool published;                      /* final holds this run's complete results */
} out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards `out` against the signal thread */
static sigset_t stop_signals;

/* Under `lock`: remove what this run made, on paths computed in advance. */
static void remove_all(void)
{
	if (!out.active)
		return;
	out.active = false;
	for (size_t i = 0; i < NFILES; i++)
		unlink(out.files[i]);
	rmdir(out.tmp);
	if (out.reserved)
		rmdir(out.final);
	for (int i = out.nparents - 1; i >= 0; i--)
		rmdir(out.parents[i]);
}

static void *signal_thread(void *arg)
{
	(void)arg;
	int sig = 0;
	while (sigwait(&stop_signals, &sig) != 0)
		;
	pthread_mutex_lock(&lock); /* held until _exit: nothing can publish or write after this */
	remove_all();
	if (out.published)
		fprintf(stderr, "schedbed: interrupted; the results in %s are complete\n", out.final);
	else
		fprintf(stderr, "schedbed: interrupted; no results were written\n");
	fflush(stdout);
	_exit(sig == SIGINT ? BENCH_EXIT_INTERRUPTED : 128 + sig);
}

int bench_signals_start(char *err, size_t errlen)
{
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	int e = pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	pthread_t th;
	if (!e)
		e = pthread_create(&th, NULL, signal_thread, NULL);
	if (!e)
		e = pthread_detach(th);
	if (e) {
		snprintf(err, errlen, "cannot start the signal thread: %s", strerror(e));
		return -e;
	}
	return 0;
}

/* mkdir -p of `path`, remembering which directories it created. */
static int make_parents(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	size_t len = strlen(buf);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		char saved = buf[i];
		buf[i] = 0;
		if (mkdir(buf, 0777) == 0) {
			if (out.nparents < MAX_PARENTS)
				snprintf(out.parents[out.nparents++], PATH_MAX, "%s", buf);
		} else {
			struct stat st;
			if (errno != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
				snprintf(err, errlen, "cannot create directory '%s': %s", buf,
					 errno == EEXIST ? "a file of that name exists" : strerror(errno));
				return -1;
			}
		}
		buf[i] = saved;
	}
	return 0;
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			empty = false;
			break;
		}
	closedir(d);
	return empty;
}

static void split(const char *path, char *dir, size_t dlen, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(dir, dlen, ".");
		*base = path;
	} else if (slash == path) {
		snprintf(dir, dlen, "/");
		*base = slash + 1;
	} else {
		snprintf(dir, dlen, "%.*s", (int)(slash - path), path);
		*base = slash + 1;
	}
}

static int choose_final(const char *out_opt, char *run_id, size_t idlen, char *err, size_t errlen)
{
	if (out_opt) {
		size_t n = strlen(out_opt);
		while (n > 1 && out_opt[n - 1] == '/')
			n--;
		if (n == 0) {
			snprintf(err, errlen, "--out needs a directory path");
			return -1;
		}
		if (n >= sizeof out.final - 64) {
			snprintf(err, errlen, "--out '%s': give a directory path shorter than %zu characters", out_opt,
				 sizeof out.final - 64);
			return -1;
		}
		snprintf(out.final, sizeof out.final, "%.*s", (int)n, out_opt);
		struct stat st;
		if (stat(out.final, &st) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				snprintf(err, errlen, "--out %s: exists and is not a directory; give a new or empty directory", out.final);
				return -1;
			}
			if (!dir_empty(out.final)) {
				snprintf(err, errlen, "--out %s: exists and is not empty; give a new or empty directory", out.final);
				return -1;
			}
			return 0;
		}
		if (errno != ENOENT) {
			snprintf(err, errlen, "--out %s: cannot create directory '%s': %s", out.final, out.final,
				 errno == ENOTDIR ? "part of the path is a file" : strerror(errno));
			return -1;
		}
		char parent[PATH_MAX];
		const char *base;
		split(out.final, parent, sizeof parent, &base);
		if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
			snprintf(err, errlen, "--out %s: give a new or empty directory", out.final);
			return -1;
		}
		if (make_parents(parent, err, errlen) != 0)
			return -1;
		return 0;
	}
	if (make_parents("results", err, errlen) != 0)
		return -1;
	char base[128];
	snprintf(base, sizeof base, "%s", run_id);
	for (unsigned k = 1; k < 10000; k++) {
		if (k > 1)
			snprintf(run_id, idlen, "%s-%u", base, k);
		snprintf(out.final, sizeof out.final, "results/%s", run_id);
		if (mkdir(out.final, 0777) == 0) {
			out.reserved = true;
			return 0;
		}
		if (errno != EEXIST) {
			snprintf(err, errlen, "cannot create result directory '%s': %s", out.final, strerror(errno));
			return -1;
		}
	}
	snprintf(err, errlen, "no free result directory name for results/%s", base);
	return -1;
}

static int prepare_locked(const char *out_opt, char *run_id, size_t idlen, char *err, size_t errlen)
{
	memset(&out, 0, sizeof out);
	/* active from the first directory made: choose_final may reserve one and make parents */
	out.active = 1;
	if (choose_final(out_opt, run_id, idlen, err, errlen) != 0) {
		remove_all();
		return -1;
	}
	char parent[PATH_MAX];
	const char *base;
	split(out.final, parent, sizeof parent, &base);
	if ((size_t)snprintf(out.tmp, sizeof out.tmp, "%s/.%s.tmp-XXXXXX", parent, base) >= sizeof out.tmp) {
		snprintf(err, errlen, "--out path is too long: %s", out.final);
		out.tmp[0] = 0;
		remove_all();
		return -1;
	}
	if (!mkdtemp(out.tmp)) {
		snprintf(err, errlen, "cannot write in '%s' (for %s): %s", parent, out.final, strerror(errno));
		out.tmp[0] = 0;
		remove_all();
		return -1;
	}
	/* mkdtemp makes it private; a result should be as readable as any file this user makes */
	mode_t mask = umask(0);
	umask(mask);
	chmod(out.tmp, 0777 & ~mask);
	for (size_t i = 0; i < NFILES; i++)
		snprintf(out.files[i], sizeof out.files[i], "%s/%s", out.tmp, out_files[i]);
	return 0;
}

int bench_out_prepare(const char *out_opt, char *run_id, size_t idlen, char *err, size_t errlen)
{
	pthread_mutex_lock(&lock);
	int rc = prepare_locked(out_opt, run_id, idlen, err, errlen);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* A FILE whose bytes go through gzip: the writers print CSV as to any file. */
static ssize_t gz_write(void *cookie, const char *buf, size_t n)
{
	/* zlib takes unsigned lengths; stdio hands over at most its buffer (1 MiB) at a time */
	return gzwrite(cookie, buf, (unsigned)n) == (int)n ? (ssize_t)n : -1;
}

static int gz_close(void *cookie)
{
	return gzclose(cookie) == Z_OK ? 0 : EOF;
}

static FILE *gz_file(FILE *f)
{
	int fd = dup(fileno(f));
	fclose(f);
	gzFile z = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
	if (!z) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	FILE *g = fopencookie(z, "w", (cookie_io_functions_t){ .write = gz_write, .close = gz_close });
	if (!g)
		gzclose(z);
	return g;
}

FILE *bench_out_open(const char *name, char *err, size_t errlen)
{
	for (size_t i = 0; i < NFILES; i++) {
		if (strcmp(out_files[i], name) != 0)
			continue;
		/* under the lock: a file made after the signal thread's unlinks would keep tmp alive */
		pthread_mutex_lock(&lock);
		FILE *f = fopen(out.files[i], "w");
		pthread_mutex_unlock(&lock);
		size_t nl = strlen(name);
		if (f && nl > 3 && strcmp(name + nl - 3, ".gz") == 0)
			f = gz_file(f); /* per-job rows: a compare or sweep would write ~90 MB of plain CSV */
		if (!f) {
			snprintf(err, errlen, "cannot write %s: %s", out.files[i], strerror(errno));
			return NULL;
		}
		/* result files are written in one pass; a large buffer keeps the syscalls few */
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		return f;
	}
	snprintf(err, errlen, "internal: '%s' is not a result file", name);
	return NULL;
}

int bench_out_close(FILE *f, const char *name, char *err, size_t errlen)
{
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		snprintf(err, errlen, "cannot write %s in %s: %s", name, out.tmp, errno ? strerror(errno) : "write error");
		return -1;
	}
	return 0;
}

int bench_out_publish(char *err, size_t errlen)
{
	pthread_mutex_lock(&lock);
	int rc = 0;
	if (rename(out.tmp, out.final) != 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot move the results into %s: %s", out.final, strerror(-rc));
	} else {
		out.active = false;
		out.published = true;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

void bench_out_abandon(void)
{
	pthread_mutex_lock(&lock);
	remove_all();
	pthread_mutex_unlock(&lock);
}

const char *bench_out_final(void)
{
	return out.final;
}
