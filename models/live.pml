/*
 * live.pml - sb_rt_stop's wait for the run's last job (core/runtime.c) against the teardowns
 * that end the jobs (core/job.c, teardown_now). A teardown decrements live_jobs and, when it
 * took the count to zero, wakes the stopper only if the stopper has said it waits
 * (live_waited): with nobody waiting, a run that keeps one job in flight makes no futex call
 * per job. The stopper sets live_waited, takes a snapshot of live_seq, reads live_jobs, and
 * sleeps in FUTEX_WAIT only while live_seq still holds the snapshot. The flag and the count are
 * a store-load pair on each side, seq_cst in the code, so the sequentially consistent
 * interleavings spin explores are the program's. Checked: the stopper always returns (no lost
 * wake-up: an invalid end state otherwise), without the 50 ms bound of its futex wait.
 *
 * Options: BROKEN_FLAG_FIRST (a teardown reads live_waited before its decrement) must be
 * refuted: it reads "nobody waits", the stopper then sets the flag, finds one job live and
 * sleeps, and the decrement that ends it wakes nobody.
 */

#define JOBS 2

byte live = JOBS;   /* rt->live_jobs: every job submitted, teardown not finished */
byte seq;           /* rt->live_seq, the stopper's futex word */
bool waited;        /* rt->live_waited */
bool sleeping;      /* the stopper is blocked in FUTEX_WAIT on seq */

active [JOBS] proctype teardown()
{
	byte prev;
	bool w;
#ifdef BROKEN_FLAG_FIRST
	w = waited;
	atomic { prev = live; live-- };
#else
	atomic { prev = live; live-- };      /* fetch_sub, seq_cst */
	w = waited;                          /* load, seq_cst */
#endif
	if
	:: prev == 1 && w ->
		seq++;                       /* fetch_add(&live_seq, 1, release) */
		sleeping = false             /* FUTEX_WAKE */
	:: else -> skip
	fi
}

active proctype stopper()
{
	byte s;
	do
	:: true ->
		waited = true;               /* store, seq_cst */
		s = seq;                     /* load, acquire */
		if
		:: live == 0 -> break        /* load, seq_cst */
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
	assert(live == 0)
}
