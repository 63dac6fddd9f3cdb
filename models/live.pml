/*
 * live.pml - sb_rt_stop's wait for the run's last job (core/runtime.c) against the teardowns
 * that end the jobs (core/job.c, teardown_now). No count per runtime: every thread counts the
 * jobs it submitted (jobs_in) and those it tore down (jobs_out), each written by its owner
 * alone, and the stopper sums them (live_jobs), ends first. A teardown wakes the stopper only
 * if the stopper has said it waits (live_waited), and then only the first teardown after each
 * of the stopper's counts (the one that takes live_kick): nobody waiting, a job's end writes
 * no shared line; while the stopper waits, the teardowns make one futex call per count, not
 * one each. The stopper sets live_waited, takes a snapshot of live_seq, re-arms the kick,
 * counts, and sleeps in FUTEX_WAIT only while live_seq still holds the snapshot. Every access
 * is seq_cst in the code, so the sequentially consistent interleavings spin explores are the
 * program's.
 *
 * The jobs: thread 0 submitted job A before the stop (its count is 1 from the start). Thread 1
 * runs A's task, which submits a child job B, and then tears A down (a job ends after its
 * tasks, so after what they submitted). Thread 0 tears B down. A job submitted while the
 * stopper counts is the case that makes the order of the sum matter.
 *
 * Checked: the stopper returns (no lost wake-up: an invalid end state otherwise, without the
 * 50 ms bound of its futex wait), and only once both jobs have ended (an assertion).
 *
 * Options, each refuted:
 * BROKEN_FLAG_FIRST: a teardown reads live_waited before counting its end: it reads "nobody
 *   waits", the stopper then sets the flag, counts one job live and sleeps, and the end it
 *   missed wakes nobody (invalid end state).
 * BROKEN_IN_FIRST: the stopper sums the submissions before the ends: it reads thread 1's
 *   jobs_in before B is submitted and thread 1's jobs_out after A ended, sums 0 with B live and
 *   returns (assertion).
 * BROKEN_KICK_BEFORE_SNAPSHOT: the stopper re-arms the kick before its snapshot of live_seq: a
 *   teardown takes the kick and bumps live_seq in between, the snapshot holds the bump, a later
 *   teardown finds the kick taken, and the stopper sleeps on an end it did not count (invalid
 *   end state).
 */

byte in[2];         /* sb_thread.jobs_in of threads 0 and 1 */
byte out[2];        /* sb_thread.jobs_out */
byte seq;           /* rt->live_seq, the stopper's futex word */
bool waited;        /* rt->live_waited */
bool kick;          /* rt->live_kick */
bool sleeping;      /* the stopper is blocked in FUTEX_WAIT on seq */
bool b_submitted;   /* job B exists (thread 0 may tear it down) */
byte ended;         /* ghost: jobs torn down */

/* teardown_now's end of job on thread t */
inline teardown(t)
{
	bool w;
#ifdef BROKEN_FLAG_FIRST
	w = waited;
	atomic { out[t]++; ended++ };
#else
	atomic { out[t]++; ended++ };        /* store of jobs_out, seq_cst */
	w = waited;                          /* load, seq_cst */
#endif
	if
	:: w && !kick ->                     /* load of live_kick, seq_cst */
		if
		:: atomic { !kick -> kick = true } ->   /* exchange: this teardown took it */
			seq++;               /* fetch_add(&live_seq, 1, release) */
			sleeping = false     /* FUTEX_WAKE */
		:: atomic { kick -> skip }   /* another took it first */
		fi
	:: else -> skip
	fi
}

active proctype thread1()
{
	in[1]++;                             /* A's task submits B */
	b_submitted = true;
	teardown(1)                          /* A ends */
}

active proctype thread0()
{
	b_submitted;                         /* B's task ran somewhere; B ends here */
	teardown(0)
}

active proctype stopper()
{
	byte s, n_in, n_out;
	in[0] = 1;                           /* A, submitted before the stop (only the stopper reads it) */
	do
	:: true ->
		waited = true;               /* store, seq_cst */
#ifdef BROKEN_KICK_BEFORE_SNAPSHOT
		kick = false;
		s = seq;
#else
		s = seq;                     /* load, acquire */
		kick = false;                /* store, seq_cst */
#endif
		/* live_jobs: one load per context, in list order */
#ifdef BROKEN_IN_FIRST
		n_in = in[0];
		n_in = n_in + in[1];
		n_out = out[0];
		n_out = n_out + out[1];
#else
		n_out = out[0];              /* loads, seq_cst */
		n_out = n_out + out[1];
		n_in = in[0];                /* loads, after the acquires */
		n_in = n_in + in[1];
#endif
		if
		:: n_in == n_out -> break
		:: else -> skip
		fi;
		/* FUTEX_WAIT: sleeps only if the word still holds the snapshot, atomically */
		atomic {
			if
			:: seq == s -> sleeping = true
			:: else -> skip
			fi
		};
		(!sleeping)
	od;
	assert(ended == 2)
}
