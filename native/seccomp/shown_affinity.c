/*
 * --cpus-shown LIST: the command was pinned to some host CPUs by whoever
 * started the watcher (the selftests put each emulator and its tests on one
 * CPU: on a virtual machine a FUSE round trip between CPUs costs many times
 * one within a CPU), but is to see the CPUs it had before. sched_getaffinity(2)
 * is answered here: a thread whose mask is the pin it inherited is shown
 * LIST; one that chose its own mask (sched_setaffinity(2), as taskset does),
 * or was started by one that did, its own.
 * Included by syscall_watch.c.
 */
#include <sched.h>

/* Threads that set their own mask, by pid and start time (pids are reused). */
#define MAX_CHOSE 256
static struct {
	pid_t pid;
	unsigned long long start;
} chose[MAX_CHOSE];
static int nchose;

/* /proc/PID/stat's starttime (its 22nd field, the 20th from the state on); 0 when gone. */
static unsigned long long proc_start(pid_t pid)
{
	char stat[512];
	const char *f = proc_stat_fields(pid, stat, sizeof(stat));
	for (int skip = 0; f && skip < 19; skip++)
		f = (f = strchr(f, ' ')) ? f + 1 : NULL;
	return f ? strtoull(f, NULL, 10) : 0;
}

/* sched_setaffinity(2) (the call goes on): its target chose its mask. */
static void note_setaffinity(const struct seccomp_notif *req)
{
	pid_t target = req->data.args[0] ? (pid_t)req->data.args[0] : (pid_t)req->pid;
	unsigned long long start = proc_start(target);
	if (!start)
		return;
	for (int i = 0; i < nchose; i++)
		if (chose[i].pid == target) {
			chose[i].start = start;
			return;
		}
	if (nchose == MAX_CHOSE) {
		/* Full: forget the ones gone. */
		int kept = 0;
		for (int i = 0; i < nchose; i++)
			if (proc_start(chose[i].pid) == chose[i].start)
				chose[kept++] = chose[i];
		nchose = kept;
		if (nchose == MAX_CHOSE)
			nchose--;
	}
	chose[nchose].pid = target;
	chose[nchose++].start = start;
}

/* The thread, or a process it descends from, chose its mask. */
static int chose_own(pid_t tid)
{
	if (!nchose)
		return 0;
	for (int depth = 0; tid > 1 && depth < 64; depth++, tid = proc_ppid(tid))
		for (int i = 0; i < nchose; i++)
			if (chose[i].pid == tid && chose[i].start == proc_start(tid))
				return 1;
	return 0;
}

static cpu_set_t pinned_cpus, shown_cpus;
static int showing_cpus; /* the pin and LIST differ: calls are answered here (tentative in syscall_watch.c) */

/* "0-1,3" into a set; 0 when malformed. */
static int parse_cpu_list(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0 || a >= CPU_SETSIZE)
			return 0;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a || b >= CPU_SETSIZE)
				return 0;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		if (*end == ',')
			end++;
		else if (*end)
			return 0;
		s = end;
	}
	return 1;
}

/* At start, before the command runs: what it is pinned to now. */
static void shown_cpus_init(const char *list)
{
	if (!parse_cpu_list(list, &shown_cpus) || sched_getaffinity(0, sizeof(pinned_cpus), &pinned_cpus) < 0)
		return;
	showing_cpus = !CPU_EQUAL(&pinned_cpus, &shown_cpus);
}

/*
 * sched_getaffinity(pid, len, mask) answered for the caller: the kernel's
 * own answer about the same thread (its checks, its length), with the pin
 * replaced by the shown CPUs. Sets *val or *err (negative errno).
 */
static void emulate_getaffinity(const struct seccomp_notif *req, long *val, int *err)
{
	const __u64 *arg = req->data.args;
	pid_t target = arg[0] ? (pid_t)arg[0] : (pid_t)req->pid;
	size_t len = (size_t)arg[1];
	cpu_set_t mask;
	/* The kernel refuses a length that is not a whole number of longs; a longer one than the set is answered with the set's. */
	if (len & (sizeof(long) - 1)) {
		*err = -EINVAL;
		return;
	}
	long n = syscall(SYS_sched_getaffinity, target, len < sizeof(mask) ? len : sizeof(mask), &mask);
	if (n < 0) {
		*err = -errno;
		return;
	}
	cpu_set_t real;
	CPU_ZERO(&real);
	memcpy(&real, &mask, (size_t)n);
	if (CPU_EQUAL(&real, &pinned_cpus) && !chose_own(target))
		memcpy(&mask, &shown_cpus, (size_t)n);
	struct iovec local = {.iov_base = &mask, .iov_len = (size_t)n}, remote = {.iov_base = (void *)(uintptr_t)arg[2], .iov_len = (size_t)n};
	if (process_vm_writev((pid_t)req->pid, &local, 1, &remote, 1, 0) != n) {
		*err = -EFAULT;
		return;
	}
	*val = n;
}
