/*
 * syscall_watch: runs a command so that tracefs-emu's emulated kernel sees
 * some of the system calls it (and every process it starts) makes on files
 * the emulator does not serve: opens of /dev/null, chdir() into a directory,
 * symlink(), the path an execve() is given; and so that its mounts of tracefs or debugfs get the
 * emulator's (see --fs). A seccomp filter hands those calls to a supervisor process
 * (SECCOMP_RET_USER_NOTIF); the supervisor reads their arguments from the
 * caller's memory, writes one line about each into the daemon's FIFO, and
 * only then lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the
 * daemon, which drains the FIFO before serving any request, knows of the
 * call before anything the caller does next.
 *
 *   syscall_watch FIFO [--served PATH]... [--fs TYPE=PATH]... [--fs-options TYPE=FILE]... [--mount-sources FILE]... [--hide PATH]... [--observe FILE] -- CMD [ARG]...
 *
 * --served: a directory (or file) whose calls the emulator already sees as
 * FUSE requests; opens and symlinks there are not reported (chdir is: FUSE
 * never hears of it).
 * --fs: a mount(2) of a TYPE filesystem (tracefs, debugfs) is answered by
 * the supervisor, never by the host kernel: PATH, the emulator's mount of
 * it, is bound at the target instead (a tool that finds no tracefs mounted
 * mounts one itself, as libtracefs does, and must get the emulator's, not
 * the host's); debugfs with tracefs on its tracing directory, and an
 * umount(2) of that debugfs takes its tracing away first, as the kernel's
 * automount comes and goes.
 * --mount-sources: where the source each such mount was given is noted,
 * by mount id ("ID SOURCE" lines, SOURCE escaped as mountinfo escapes it),
 * here and by the namespace's mount helper: the mount tables show it.
 * --cpus-shown LIST: see shown_affinity.c.
 * --hide: a mount the namespace made for itself (a shadow directory, a view
 * bound over a /proc file): left out of the mount tables below.
 * An open of a mount table is answered by the supervisor (mount_tables.c);
 * a splice(2) from a served file makes that file O_DIRECT first (see
 * direct_splice()).
 *
 * Line format, one write(2) each (< PIPE_BUF, so lines of concurrent
 * supervisors never mix): space-separated numbers, then three tab-separated
 * strings with \t, \n, \\ and bytes < 0x20 or >= 0x7f escaped as \ooo:
 *
 *   S pid nr ret a0 a1 a2 a3 a4 a5 dev ino mode ppid\tstr0\tstr1\tabs\tcomm\n
 *
 *   pid       the calling thread (as in /proc)
 *   nr        x86_64 system call number
 *   ret       what the call will most likely return (the call has not run
 *             yet: an open's fd is the lowest free one, an error is what
 *             stat() of the path says)
 *   a0..a5    the raw arguments (openat2: a2 = how->flags, a3 = how->mode)
 *   dev ino mode  the file the call is on (st_dev as major:minor, st_ino,
 *             st_mode; 0 0 0 when it does not exist yet)
 *   ppid      the caller's parent (read while it waits: a short-lived
 *             process may be gone, and its fork not yet reported, when the
 *             daemon reads the line)
 *   str0      the path argument as passed (symlink: the target)
 *   str1      symlink: the new link's path as passed
 *   abs       the path the call resolves, absolute (lexical: cwd or dirfd
 *             joined, "." and ".." folded, symlinks not followed)
 *   comm      the caller's comm (it is alive now; it may be gone when the
 *             daemon reads the line)
 *
 * With --observe FILE (a file the daemon keeps holding what the emulated
 * kernel can see: "2 GEN PID" system calls, "1 GEN PID" only that processes
 * run, "0" nothing), the supervisor is also the ptrace tracer of the
 * command and of every process it starts (PTRACE_SEIZE, following forks,
 * clones and execs), and says so first:
 *
 *   W pid\n        (the supervisor's pid)
 *
 * At 0, opens and symlinks outside the mount are not reported (nothing could
 * see them run): they go on at once, as any call does. Below 2, tracees run
 * with PTRACE_CONT: no system call stops, and no exec stops either (only
 * forks and exits stop: a child is followed, and its fork said, from
 * there; an exit is said before the parent can reap it).
 * When it turns to 2 (inotify), every tracee is interrupted and from then
 * on resumed with PTRACE_SYSCALL.
 * On any rise, the supervisor acknowledges the switch once it acts on it
 * (the request that made it is answered only then):
 *
 *   O pid gen\n
 *
 * Each call then stops at entry and at exit, and one line is reported
 * after it ran, with its real result:
 *
 *   T pid nr ret a0 a1 a2 a3 a4 a5 ppid slept [priority policy]\tfile\tcomm[\taddr data]\n
 *
 *   ret       the result the call returned (-errno on failure)
 *   slept     a call that may block: the ns it spent asleep (off the CPU
 *             and not waiting for one); -1 for the others; one that slept
 *             is followed by the caller's priority and policy (/proc/TID/stat)
 *   file      the file the call is on: the target of its fd argument
 *             (/proc/PID/fd/N: a path, pipe:[ino], socket:[ino] PROTO
 *             with the protocol sockfs names it by, ...), or
 *             the absolute path of its path argument; empty otherwise
 *   addr data user memory the call used, at addr (hex), escaped as the
 *             strings are (NULs as \000), at most USER_DATA_MAX bytes: a
 *             path argument as passed (with its NUL), what read/pread64
 *             filled, what write/pwrite64 was given
 *
 * and, as a thread enters a call that forks (clone, clone3, fork, vfork),
 * before the proc connector reports the fork:
 *
 *   B pid nr\n
 *
 * At any level (forks and exits are run whether or not anything sees
 * them; only their order matters), a new process (not a thread) is
 * reported as its parent stops for the fork, before the parent goes on,
 * and a thread that exits as it stops for its exit, before its parent can
 * reap it (status: as wait(2) gives it):
 *
 *   N ppid pid\tcomm\n      (comm: what the parent runs, read as it waits)
 *   D tid status slept\tcomm\n    (comm: what the thread runs; slept: the ns
 *                   it spent off the CPU and not waiting for one since its
 *                   fork or last execve(), left out when unknown)
 *
 * Calls on a --served file are not reported (the emulator runs them as
 * FUSE requests). A call the seccomp filter also reports (an open, chdir,
 * symlink) is reported once, as its S line, written after the call with
 * the real result instead of the prediction; an execve's S line is still
 * written before it runs. Lines are batched (one write(2) of at most
 * PIPE_BUF bytes): the batch is written when full, before a call on a
 * served file, before a fork, exec or exit, and when the supervisor has
 * been idle for FLUSH_MS.
 *
 * The supervisor leaves the command's session and ignores terminal
 * signals: if it died, the watched calls would fail with ENOSYS. It exits
 * when no watched process is left. Without seccomp (or without the FIFO's
 * reader), the command runs unwatched.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define NR_OPEN 2
#define NR_CREAT 85
#define NR_CHDIR 80
#define NR_FCHDIR 81
#define NR_SYMLINK 88
#define NR_OPENAT 257
#define NR_SYMLINKAT 266
#define NR_OPENAT2 437
#define NR_MOUNT 165
#define NR_EXECVE 59
#define NR_EXECVEAT 322
#define NR_SPLICE 275
#define NR_UMOUNT2 166
#define NR_SCHED_SETAFFINITY 203
#define NR_SCHED_GETAFFINITY 204

static const unsigned watched[] = {NR_OPEN, NR_CREAT, NR_CHDIR, NR_FCHDIR, NR_SYMLINK, NR_OPENAT, NR_SYMLINKAT, NR_OPENAT2, NR_MOUNT, NR_EXECVE, NR_EXECVEAT, NR_SPLICE, NR_UMOUNT2};
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

#define MAX_SERVED 32
static const char *served[MAX_SERVED];
static int nserved;

/* --fs TYPE=PATH */
#define MAX_FS 8
static struct {
	char type[32];
	const char *path;
	/* --fs-options TYPE=FILE: where the daemon keeps the filesystem's own options (",gid=1000"), read per table. */
	const char *options_file;
	char options[256];
} emulated[MAX_FS];
static int nemulated;
static const char *mount_sources; /* --mount-sources FILE */

#define MAX_HIDDEN 64
static const char *hidden[MAX_HIDDEN];
static int nhidden;

/* ---- the filter ----------------------------------------------------------- */

static int showing_cpus; /* shown_affinity.c */

static int install_filter(void)
{
	unsigned nr[NWATCHED + 2], count = 0;
	for (unsigned i = 0; i < NWATCHED; i++)
		nr[count++] = watched[i];
	if (showing_cpus) {
		nr[count++] = NR_SCHED_GETAFFINITY;
		nr[count++] = NR_SCHED_SETAFFINITY;
	}
	struct sock_filter f[8 + NWATCHED + 2];
	unsigned n = 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < count; i++) {
		/* Jump to the USER_NOTIF return at the end when equal. */
		unsigned to_notif = (count - 1 - i) + 1;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[i], (unsigned char)to_notif, 0);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0 && errno == EACCES) {
		/* Without CAP_SYS_ADMIN a filter needs no_new_privs. */
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	return fd;
}

/* ---- passing the listener to the supervisor -------------------------------- */

static int send_fd(int sock, int fd)
{
	char c = 0, cb[CMSG_SPACE(sizeof(int))];
	struct iovec io = {&c, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof(cb)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, cb[CMSG_SPACE(sizeof(int))];
	struct iovec io = {&c, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = sizeof(cb)};
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* ---- reading the caller ---------------------------------------------------- */

/* A NUL-terminated string from the caller's memory, page by page (a page past its end may be unmapped). */
static int read_string(pid_t pid, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;
	if (!addr)
		return -1;
	while (got + 1 < max) {
		size_t room = 4096 - ((addr + got) & 4095);
		if (room > max - 1 - got)
			room = max - 1 - got;
		struct iovec l = {buf + got, room}, r = {(void *)(uintptr_t)(addr + got), room};
		ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return got ? 0 : -1;
		char *z = memchr(buf + got, 0, (size_t)n);
		if (z)
			return 0;
		got += (size_t)n;
	}
	buf[got] = 0;
	return 0;
}

static int read_mem(pid_t pid, uint64_t addr, void *out, size_t n)
{
	struct iovec l = {out, n}, r = {(void *)(uintptr_t)addr, n};
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

static void proc_link(pid_t pid, const char *what, char *out, size_t n)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	ssize_t r = readlink(p, out, n - 1);
	out[r < 0 ? 0 : r] = 0;
}

/*
 * A socket's protocol as sockfs names it (`TCP`, `UNIX-STREAM`, `UDPv6`...),
 * appended to its fd's target after a space: the calls on it run that
 * protocol's code, and by the time the line is read the socket may be gone.
 */
static void socket_protocol(pid_t pid, int fd, char *target, size_t n)
{
	char p[64], proto[32];
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", pid, fd);
	ssize_t r = getxattr(p, "system.sockprotoname", proto, sizeof(proto) - 1);
	if (r <= 0)
		return;
	proto[r] = 0;
	size_t len = strlen(target);
	snprintf(target + len, n - len, " %s", proto);
}

/* The first line of /proc/PID/<what>, without its newline. */
static void proc_file_line(pid_t pid, const char *what, char *out, size_t n)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	out[0] = 0;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t r = read(fd, out, n - 1);
	close(fd);
	out[r < 0 ? 0 : r] = 0;
	out[strcspn(out, "\n")] = 0;
}

/*
 * /proc/PID/stat into `stat`, and where its fields go on after the comm
 * (which may hold spaces and parentheses): at the state letter. NULL when
 * the process is gone or the line is cut.
 */
static const char *proc_stat_fields(pid_t pid, char *stat, size_t n)
{
	proc_file_line(pid, "stat", stat, n);
	const char *close_paren = strrchr(stat, ')');
	return close_paren && close_paren[1] == ' ' ? close_paren + 2 : NULL;
}

/* The parent of a process (4th field of /proc/PID/stat); 0 if unknown. */
static int proc_ppid(pid_t pid)
{
	char stat[512];
	const char *f = proc_stat_fields(pid, stat, sizeof(stat));
	int ppid = 0;
	if (!f || sscanf(f, "%*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* A thread's time on a CPU plus its time waiting for one (ns, the first two fields of /proc/TID/schedstat); -1 when unreadable. */
static int run_ns(pid_t tid, uint64_t *ns)
{
	char line[128];
	proc_file_line(tid, "schedstat", line, sizeof(line));
	unsigned long long on_cpu, waiting;
	if (sscanf(line, "%llu %llu", &on_cpu, &waiting) != 2)
		return -1;
	*ns = on_cpu + waiting;
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#include "shown_affinity.c"

/* The directory a relative path starts from: the cwd, or the directory open as dirfd. */
static void base_dir(pid_t pid, int64_t dirfd, char *out, size_t n)
{
	if ((int)dirfd == AT_FDCWD) {
		proc_link(pid, "cwd", out, n);
	} else {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", (int)dirfd);
		proc_link(pid, what, out, n);
	}
}

/* base + path, with "." and ".." folded and repeated slashes dropped (no symlink is followed). */
static void absolute(const char *base, const char *path, char *out, size_t n)
{
	char tmp[8192];
	if (path[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", path);
	else
		snprintf(tmp, sizeof(tmp), "%s/%s", base, path);
	size_t len = 0;
	out[0] = 0;
	for (char *s = tmp; *s;) {
		while (*s == '/')
			s++;
		char *e = s;
		while (*e && *e != '/')
			e++;
		size_t cl = (size_t)(e - s);
		if (cl == 0)
			break;
		if (cl == 1 && s[0] == '.') {
		} else if (cl == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = 0;
		} else if (len + 1 + cl + 1 < n) {
			out[len++] = '/';
			memcpy(out + len, s, cl);
			len += cl;
			out[len] = 0;
		}
		s = e;
	}
	if (len == 0)
		snprintf(out, n, "/");
}

/* The absolute path of `path` as the caller resolves it from `dirfd` (its cwd or directory read only when the path is relative). */
static void resolve(pid_t pid, int64_t dirfd, const char *path, char *out, size_t n)
{
	char base[4096] = "";
	if (path[0] != '/')
		base_dir(pid, dirfd, base, sizeof(base));
	absolute(base, path, out, n);
}

static int is_served(const char *abs)
{
	for (int i = 0; i < nserved; i++) {
		size_t l = strlen(served[i]);
		if (strncmp(abs, served[i], l) == 0 && (abs[l] == 0 || abs[l] == '/' || (l == 1 && served[i][0] == '/')))
			return 1;
	}
	return 0;
}

/* The lowest fd number the process does not use: what its open will return. */
static int lowest_free_fd(pid_t pid)
{
	static unsigned char used[65536];
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/fd", pid);
	DIR *d = opendir(p);
	if (!d)
		return 3;
	memset(used, 0, sizeof(used));
	struct dirent *e;
	while ((e = readdir(d))) {
		long v = strtol(e->d_name, NULL, 10);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && v >= 0 && v < (long)sizeof(used))
			used[v] = 1;
	}
	closedir(d);
	for (int i = 0; i < (int)sizeof(used); i++)
		if (!used[i])
			return i;
	return -EMFILE;
}

static void parent_of(const char *abs, char *out, size_t n)
{
	snprintf(out, n, "%s", abs);
	char *s = strrchr(out, '/');
	if (s == out)
		out[1] = 0;
	else if (s)
		*s = 0;
}

/* What an open will return: an fd, or the error the path gives. */
static long predict_open(pid_t pid, const char *abs, long flags, struct stat *st, int *exists)
{
	int r = (flags & O_NOFOLLOW) ? lstat(abs, st) : stat(abs, st);
	*exists = r == 0;
	if (r == 0) {
		if ((flags & O_CREAT) && (flags & O_EXCL))
			return -EEXIST;
		if ((flags & O_DIRECTORY) && !S_ISDIR(st->st_mode))
			return -ENOTDIR;
		if (S_ISDIR(st->st_mode) && (flags & O_ACCMODE) != O_RDONLY)
			return -EISDIR;
		return lowest_free_fd(pid);
	}
	int err = errno;
	if (err == ENOENT && (flags & O_CREAT)) {
		char dir[4096];
		struct stat ds;
		parent_of(abs, dir, sizeof(dir));
		if (stat(dir, &ds) == 0 && S_ISDIR(ds.st_mode))
			return lowest_free_fd(pid);
	}
	return -err;
}

/* ---- reporting --------------------------------------------------------------- */

static size_t escape(const char *s, char *out, size_t max)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (o + 5 >= max)
			break;
		if (*p == '\\' || *p < 0x20 || *p >= 0x7f)
			o += (size_t)sprintf(out + o, "\\%03o", *p);
		else
			out[o++] = (char)*p;
	}
	out[o] = 0;
	return o;
}

/* escape() of n bytes that may hold NULs (as \000). */
static size_t escape_bytes(const unsigned char *s, size_t len, char *out, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (o + 5 >= max)
			break;
		if (s[i] == '\\' || s[i] < 0x20 || s[i] >= 0x7f)
			o += (size_t)sprintf(out + o, "\\%03o", s[i]);
		else
			out[o++] = (char)s[i];
	}
	out[o] = 0;
	return o;
}

static int fifo = -1;
static int listener_fd = -1;
/* What the emulated kernel can see (--observe): system calls (tracees step through them), or that processes run (opens are reported). */
static int observing, reporting = 1;

/* ---- the batch of lines ------------------------------------------------------- */

/* Lines wait here and go in one write(2): at most PIPE_BUF bytes, so concurrent supervisors' batches never mix. */
static char batch[4096];
static size_t batch_len;

static void flush_batch(void)
{
	if (!batch_len)
		return;
	if (fifo >= 0 && write(fifo, batch, batch_len) < 0 && errno == EPIPE) {
		/* The daemon is gone: nothing more is reported, the calls still go on. */
		close(fifo);
		fifo = -1;
	}
	batch_len = 0;
}

static void add_line(const char *line, size_t n)
{
	if (fifo < 0 || n > sizeof(batch))
		return;
	if (batch_len + n > sizeof(batch))
		flush_batch();
	memcpy(batch + batch_len, line, n);
	batch_len += n;
}

/* ---- traced threads ------------------------------------------------------------ */

/* Bytes of user memory a T line carries: a path as passed, the head of a read's or write's buffer. */
#define USER_DATA_MAX 64

/* What the supervisor knows of a thread it traces: the call it is in, as seen at its entry stop. */
struct tracee {
	pid_t tid;
	int in_call;     /* an entry stop was seen; its exit is reported */
	int skip;        /* that call is on a served file: not reported */
	long nr;
	uint64_t args[6];
	char file[1024]; /* escaped */
	uint64_t data_addr; /* user memory the call read or wrote (its path, its buffer) */
	char data[4 * USER_DATA_MAX + 8]; /* escaped; empty when none */
	char *s_head;    /* the call's S line, up to its ret, written at exit with the real result */
	char *s_tail;
	int ppid;
	char comm[80];   /* escaped; empty until first needed */
	int stepping;    /* last resumed with PTRACE_SYSCALL */
	int interrupted; /* a PTRACE_INTERRUPT is on its way */
	long opts;       /* its ptrace options (a child is born with its parent's) */
	int seen;        /* seen_ns and seen_run_ns hold: where its time off the CPU is counted from */
	uint64_t seen_ns;     /* CLOCK_MONOTONIC at its fork or last execve() */
	uint64_t seen_run_ns; /* its time on a CPU or waiting for one then (/proc/TID/schedstat) */
	int call_timed;       /* the call it is in may block: call_ns and call_run_ns hold, from its entry */
	uint64_t call_ns, call_run_ns;
};

#define MAX_TRACEES 4096
static struct tracee tracees[MAX_TRACEES];

static struct tracee *tracee_of(pid_t tid, int make)
{
	unsigned h = (unsigned)tid % MAX_TRACEES;
	struct tracee *free_slot = NULL;
	for (unsigned i = 0; i < MAX_TRACEES; i++) {
		struct tracee *t = &tracees[(h + i) % MAX_TRACEES];
		if (t->tid == tid)
			return t;
		if (!t->tid) {
			free_slot = t;
			break;
		}
	}
	if (!make || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->tid = tid;
	return free_slot;
}

/*
 * Its time off the CPU is counted from now: the daemon has just learned what
 * it runs (a fork, an execve()). Only while something can see processes run
 * (below that nothing reads it: unknown, not read).
 */
static void note_seen(struct tracee *t, pid_t tid)
{
	t->seen = reporting && run_ns(tid, &t->seen_run_ns) == 0;
	if (t->seen)
		t->seen_ns = monotonic_ns();
}

/* How long a thread was off the CPU and not waiting for one (asleep) since (ns, run_ns) was read; -1 when unknown. */
static long long asleep_since(pid_t tid, uint64_t ns, uint64_t was_run)
{
	uint64_t run;
	if (run_ns(tid, &run) < 0)
		return -1;
	long long off = (long long)(monotonic_ns() - ns) - (long long)(run - was_run);
	return off > 0 ? off : 0;
}

/* Its priority (prio - 100) and policy, as /proc/TID/stat's fields 18 and 41 give them; -1 when unreadable. */
static int sched_of(pid_t tid, int *priority, int *policy)
{
	char stat[1024];
	const char *f = proc_stat_fields(tid, stat, sizeof(stat));
	/* From field 3 (state): 15 fields, priority, 22 fields, policy. */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %d %*d %*d %*d %*u %*u %*d %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*d %*d %*u %d", priority, policy) != 2)
		return -1;
	return 0;
}

/* How long it slept since note_seen(); -1 when unknown, or when nothing can see it. */
static long long slept_ns(struct tracee *t, pid_t tid)
{
	return reporting && t && t->seen ? asleep_since(tid, t->seen_ns, t->seen_run_ns) : -1;
}

/* Calls that may block (x86_64): a traced one says how long it slept. */
static int may_block(long nr)
{
	switch (nr) {
	case 0: case 1: case 7: case 19: case 20: case 23: case 34: case 35: case 42: case 43: case 45: case 47: case 61:
	case 72: case 73: case 128: case 130: case 202: case 230: case 232: case 247: case 270: case 271: case 281: case 288:
	case 299: case 441:
		return 1;
	}
	return 0;
}

static void end_call(struct tracee *t)
{
	t->in_call = t->skip = t->call_timed = 0;
	t->data[0] = 0;
	free(t->s_head);
	free(t->s_tail);
	t->s_head = t->s_tail = NULL;
}

static void tracee_gone(pid_t tid)
{
	struct tracee *t = tracee_of(tid, 0);
	if (!t)
		return;
	end_call(t);
	/* Open addressing: re-insert what follows in the probe chain. */
	unsigned i = (unsigned)(t - tracees);
	t->tid = 0;
	for (unsigned j = (i + 1) % MAX_TRACEES; tracees[j].tid; j = (j + 1) % MAX_TRACEES) {
		struct tracee moved = tracees[j];
		tracees[j].tid = 0;
		struct tracee *to = tracee_of(moved.tid, 1);
		*to = moved;
	}
}

/* ---- reporting --------------------------------------------------------------- */

static void report(const struct seccomp_notif *req, long ret, const uint64_t a[6], const struct stat *st, const char *s0, const char *s1, const char *abs)
{
	/* The memory read was that caller's only if the request is still pending (its pid not reused). */
	if (fifo < 0 || ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		return;
	char head[64], tail[4096], e0[1300], e1[1300], ea[1300], comm[32], ec[80];
	proc_file_line(req->pid, "comm", comm, sizeof(comm));
	escape(comm, ec, sizeof(ec));
	escape(s0, e0, sizeof(e0));
	escape(s1, e1, sizeof(e1));
	escape(abs, ea, sizeof(ea));
	snprintf(head, sizeof(head), "S %d %d ", req->pid, req->data.nr);
	int n = snprintf(tail, sizeof(tail), " %llx %llx %llx %llx %llx %llx %u:%u %llu %o %d\t%s\t%s\t%s\t%s\n",
			 (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2], (unsigned long long)a[3], (unsigned long long)a[4],
			 (unsigned long long)a[5], st ? major(st->st_dev) : 0, st ? minor(st->st_dev) : 0, st ? (unsigned long long)st->st_ino : 0ULL,
			 st ? (unsigned)st->st_mode : 0, proc_ppid((pid_t)req->pid), e0, e1, ea, ec);
	if (n <= 0 || n >= (int)sizeof(tail) - 64)
		return;
	/* A traced call: its line goes out after it ran, with what it really returned (an exec's before, as it names the exec). */
	struct tracee *t = tracee_of((pid_t)req->pid, 0);
	if (t && t->in_call && t->nr == req->data.nr && req->data.nr != NR_EXECVE && req->data.nr != NR_EXECVEAT) {
		t->s_head = strdup(head);
		t->s_tail = strdup(tail);
		return;
	}
	char line[4200];
	int len = snprintf(line, sizeof(line), "%s%ld%s", head, ret, tail);
	add_line(line, (size_t)len);
	flush_batch();
}

/* The --fs path of a filesystem type, or NULL. */
static const char *emulated_path(const char *type)
{
	for (int i = 0; i < nemulated; i++)
		if (!strcmp(type, emulated[i].type))
			return emulated[i].path;
	return NULL;
}

/* Whether `path` is the root of the filesystem mounted at `mnt` (the same directory: a mount of it). */
static int is_root_of(const char *path, const char *mnt)
{
	struct stat a, b;
	return stat(path, &a) == 0 && stat(mnt, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int same_mount_ns(pid_t pid)
{
	char p[64], self[64], caller[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", pid);
	ssize_t a = readlink("/proc/self/ns/mnt", self, sizeof(self) - 1), b = readlink(p, caller, sizeof(caller) - 1);
	return a > 0 && a == b && !memcmp(self, caller, (size_t)a);
}

/* mount(2) of an emulated filesystem: the emulator's mount bound at the target. 1: not ours (the call goes on). */
static void note_mount_source(const char *point, const char *source); /* mount_tables.c */

static int emulate_mount(const struct seccomp_notif *req, int *err)
{
	pid_t pid = (pid_t)req->pid;
	const __u64 *arg = req->data.args;
	char type[32], target[4096], abs[4096];
	if (!arg[2] || read_string(pid, arg[2], type, sizeof(type)) < 0)
		return 1;
	const char *src = emulated_path(type);
	/* Only a new mount: remounts and changes of propagation are the mount's own business. */
	if (!src || (arg[3] & (MS_REMOUNT | MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)))
		return 1;
	if (read_string(pid, arg[1], target, sizeof(target)) < 0)
		return 1;
	char source[256] = "none";
	if (arg[0] && read_string(pid, arg[0], source, sizeof(source)) < 0)
		return 1;
	/* The supervisor binds in its own mount namespace: only for a caller in the same one. */
	if (!same_mount_ns(pid))
		return 1;
	resolve(pid, AT_FDCWD, target, abs, sizeof(abs));
	/* The same filesystem on the same mount point again: the kernel refuses. */
	if (is_root_of(abs, src)) {
		*err = -EBUSY;
		return 0;
	}
	*err = mount(src, abs, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
	if (!*err)
		note_mount_source(abs, source);
	/* debugfs has tracefs on its tracing directory (the kernel's automount, made at once). */
	const char *tracefs = emulated_path("tracefs");
	if (!*err && !strcmp(type, "debugfs") && tracefs) {
		char tracing[4200];
		snprintf(tracing, sizeof(tracing), "%s/tracing", abs);
		/* (its name is the filesystem's; noted too, as its mount id may have had another's) */
		if (mount(tracefs, tracing, NULL, MS_BIND, NULL) == 0)
			note_mount_source(tracing, "tracefs");
	}
	return 0;
}

/*
 * umount(2) of the emulator's debugfs: the tracefs on its tracing directory
 * goes first, as the kernel expires its automount when debugfs is
 * unmounted (else the call would fail with EBUSY). The call goes on.
 */
static void umount_debugfs(const struct seccomp_notif *req)
{
	pid_t pid = (pid_t)req->pid;
	char target[4096], abs[4096], tracing[4200];
	const char *debugfs = emulated_path("debugfs"), *tracefs = emulated_path("tracefs");
	if (!debugfs || !tracefs || read_string(pid, req->data.args[0], target, sizeof(target)) < 0 || !same_mount_ns(pid))
		return;
	resolve(pid, AT_FDCWD, target, abs, sizeof(abs));
	snprintf(tracing, sizeof(tracing), "%s/tracing", abs);
	if (is_root_of(abs, debugfs) && is_root_of(tracing, tracefs))
		umount2(tracing, MNT_DETACH);
}

static void handle(const struct seccomp_notif *req)
{
	pid_t pid = (pid_t)req->pid;
	const __u64 *arg = req->data.args;
	uint64_t a[6];
	memcpy(a, arg, sizeof(a));
	static char s0[4096], s1[4096], abs[4096];
	s0[0] = s1[0] = abs[0] = 0;
	struct stat st;
	int exists = 0;
	long ret = 0;
	/* An open or symlink nothing in the emulated kernel could see run goes on unreported. */
	int quiet = !reporting;
	switch (req->data.nr) {
	case NR_OPEN:
	case NR_CREAT:
	case NR_OPENAT:
	case NR_OPENAT2: {
		if (quiet)
			return;
		int at = req->data.nr == NR_OPENAT || req->data.nr == NR_OPENAT2;
		long flags = req->data.nr == NR_CREAT ? (O_CREAT | O_WRONLY | O_TRUNC) : (long)arg[at ? 2 : 1];
		if (req->data.nr == NR_OPENAT2) {
			struct open_how how = {0};
			if (read_mem(pid, arg[2], &how, sizeof(how)) == 0) {
				a[2] = how.flags;
				a[3] = how.mode;
				flags = (long)how.flags;
			}
		}
		if (read_string(pid, arg[at ? 1 : 0], s0, sizeof(s0)) < 0)
			return;
		resolve(pid, at ? (int64_t)arg[0] : AT_FDCWD, s0, abs, sizeof(abs));
		if (is_served(abs))
			return;
		ret = predict_open(pid, abs, flags, &st, &exists);
		break;
	}
	case NR_CHDIR:
		if (read_string(pid, arg[0], s0, sizeof(s0)) < 0)
			return;
		resolve(pid, AT_FDCWD, s0, abs, sizeof(abs));
		/* A chdir into a served directory: stat() would be a request on the mount, which the caller did not make. */
		if (is_served(abs))
			break;
		exists = stat(abs, &st) == 0;
		ret = !exists ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
		break;
	case NR_FCHDIR: {
		base_dir(pid, (int64_t)(int)arg[0], abs, sizeof(abs));
		if (!abs[0]) {
			ret = -EBADF;
			break;
		}
		if (is_served(abs))
			break;
		exists = stat(abs, &st) == 0;
		ret = !exists ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
		break;
	}
	case NR_SYMLINK:
	case NR_SYMLINKAT: {
		if (quiet)
			return;
		int at = req->data.nr == NR_SYMLINKAT;
		if (read_string(pid, arg[0], s0, sizeof(s0)) < 0 || read_string(pid, arg[at ? 2 : 1], s1, sizeof(s1)) < 0)
			return;
		resolve(pid, at ? (int64_t)(int)arg[1] : AT_FDCWD, s1, abs, sizeof(abs));
		if (is_served(abs))
			return;
		if (lstat(abs, &st) == 0) {
			exists = 1;
			ret = -EEXIST;
		} else {
			char dir[4096];
			struct stat ds;
			parent_of(abs, dir, sizeof(dir));
			ret = stat(dir, &ds) < 0 ? -errno : S_ISDIR(ds.st_mode) ? 0 : -ENOTDIR;
		}
		break;
	}
	case NR_EXECVE:
	case NR_EXECVEAT: {
		/* The path as passed is what the exec's filename will be; the exec itself is reported by the proc connector. */
		int at = req->data.nr == NR_EXECVEAT;
		struct tracee *tr = tracee_of(pid, 0);
		if (tr)
			note_seen(tr, pid);
		if (read_string(pid, arg[at ? 1 : 0], s0, sizeof(s0)) < 0)
			return;
		resolve(pid, at ? (int64_t)(int)arg[0] : AT_FDCWD, s0, abs, sizeof(abs));
		if (is_served(abs))
			return;
		exists = stat(abs, &st) == 0;
		ret = !exists ? -errno : S_ISREG(st.st_mode) && (st.st_mode & 0111) ? 0 : -EACCES;
		/*
		 * One that fails names no exec, and while calls are not traced nothing
		 * could see it run: a shell's PATH search makes several per command.
		 */
		if (ret && !observing)
			return;
		break;
	}
	default:
		return;
	}
	report(req, ret, a, exists ? &st : NULL, s0, s1, abs);
}

#include "mount_tables.c"

/*
 * splice(2) from a file the emulator serves: FUSE splices a FOPEN_DIRECT_IO
 * file through the page cache, which a file of size 0 (trace_pipe_raw)
 * ends at once (every splice returns 0), unless the file is O_DIRECT: then
 * each splice is a read of the file. The caller's open file gets O_DIRECT
 * (through a copy of its descriptor: the same open file), and the call goes on.
 */
static void direct_splice(const struct seccomp_notif *req)
{
	char what[32], path[4096];
	snprintf(what, sizeof(what), "fd/%d", (int)req->data.args[0]);
	proc_link((pid_t)req->pid, what, path, sizeof(path));
	if (!path[0] || !is_served(path))
		return;
	int pidfd = (int)syscall(SYS_pidfd_open, req->pid, 0);
	int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)req->data.args[0], 0);
	int fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_DIRECT))
		fcntl(fd, F_SETFL, fl | O_DIRECT);
	if (fd >= 0)
		close(fd);
	if (pidfd >= 0)
		close(pidfd);
}

/* ---- tracing every call (ptrace) ------------------------------------------------- */

/* How long the supervisor waits, idle, before it writes a batch that is not full (ms). */
#define FLUSH_MS 2

static int observe_fd = -1; /* --observe FILE: "2 GEN PID" while the emulator can see system calls */
static int tracing;         /* the command is traced (ptrace) */
static unsigned observe_gen; /* the last switch to 1 acted on */
static pid_t observe_requester; /* the thread whose request on the mount made it (its answer waits for the ack) */

/*
 * The file holds "0", "1 GEN PID" or "2 GEN PID": GEN counts the rises, PID
 * is the thread whose request made the rise. Written in place, never
 * truncated, so a read never finds it empty. Sets observing and reporting.
 */
static void read_observe(unsigned *gen)
{
	char s[40] = "";
	ssize_t n = observe_fd >= 0 ? pread(observe_fd, s, sizeof(s) - 1, 0) : -1;
	int level = n < 1 ? 0 : s[0] - '0';
	observing = level >= 2;
	reporting = level >= 1;
	if (!reporting)
		return;
	s[n] = 0;
	int requester = 0;
	*gen = 0;
	sscanf(s + 1, "%u %d", gen, &requester);
	observe_requester = requester;
}

static struct tracee *tracee_of(pid_t tid, int make);

/*
 * While calls are not traced, a process only needs following into its
 * children and out of its life: each stop is a round trip through this
 * supervisor, and its exec stops serve traced calls only (their order, the
 * comm they name). Its fork and exit stops say, before its parent goes on
 * or can reap it, what the proc connector may say too late.
 */
#define OPTS_FOLLOW (PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT)
#define OPTS_TRACED (OPTS_FOLLOW | PTRACE_O_TRACEEXEC)

static void resume(pid_t tid, int sig)
{
	struct tracee *t = tracee_of(tid, 1);
	if (t) {
		t->stepping = observing;
		t->interrupted = 0;
		long want = observing ? OPTS_TRACED : OPTS_FOLLOW;
		if (t->opts != want && ptrace(PTRACE_SETOPTIONS, tid, 0, want) == 0) {
			/* Execs went unseen: its comm is read again. */
			if (observing)
				t->comm[0] = 0;
			t->opts = want;
		}
	}
	ptrace(observing ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, sig);
}

/* Where a call's file is: an fd argument (which one), a path argument, a path relative to a dirfd argument. */
enum file_arg { ARG_NONE, ARG_FD0, ARG_FD4, ARG_PATH0, ARG_AT1 };

static enum file_arg file_arg_of(long nr)
{
	switch (nr) {
	case 0: case 1: case 3: case 5: case 8: case 16: case 17: case 18: case 19: case 20: case 40: case 72: case 73: case 74: case 75:
	case 77: case 78: case 81: case 91: case 93: case 138: case 187: case 190: case 193: case 196: case 199: case 217: case 221:
	case 275: case 276: case 277: case 285: case 295: case 296: case 306: case 326: case 327: case 328:
	/* connect ... getsockopt (but socketpair), accept4, recvmmsg, sendmmsg: their socket names the protocol. */
	case 42: case 43: case 44: case 45: case 46: case 47: case 48: case 49: case 50: case 51: case 52: case 54: case 55:
	case 288: case 299: case 307:
		return ARG_FD0;
	case 9:
		return ARG_FD4;
	case 2: case 4: case 6: case 21: case 76: case 80: case 82: case 83: case 84: case 85: case 86: case 87: case 89: case 90: case 92:
	case 94: case 132: case 133: case 137: case 161: case 188: case 189: case 191: case 192: case 194: case 195: case 197: case 198: case 235:
		return ARG_PATH0;
	case 257: case 258: case 259: case 260: case 261: case 262: case 263: case 264: case 265: case 267: case 268: case 269: case 280:
	case 303: case 316: case 332: case 437: case 439: case 452:
		return ARG_AT1;
	default:
		return ARG_NONE;
	}
}

/*
 * The file a call is on, as the caller names it: its fd's target (into
 * `abs`), or its path argument (as given into `path`, resolved into `abs`);
 * both empty when it takes none or they cannot be read. Returns the fd, or -1.
 */
static long call_file(pid_t tid, long nr, const uint64_t *a, char *path, char *abs, size_t n)
{
	path[0] = abs[0] = 0;
	switch (file_arg_of(nr)) {
	case ARG_FD0:
	case ARG_FD4: {
		int fd = (int)a[file_arg_of(nr) == ARG_FD4 ? 4 : 0];
		if (fd < 0)
			return -1;
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", fd);
		proc_link(tid, what, abs, n);
		return fd;
	}
	case ARG_PATH0:
		if (read_string(tid, a[0], path, n) == 0)
			resolve(tid, AT_FDCWD, path, abs, n);
		break;
	case ARG_AT1:
		if (read_string(tid, a[1], path, n) == 0)
			resolve(tid, (int64_t)(int)a[0], path, abs, n);
		break;
	case ARG_NONE:
		break;
	}
	return -1;
}

/* Calls around which the proc connector reports a fork, an exec or an exit: what came before goes first. */
static int is_lifecycle(long nr)
{
	return nr == 56 || nr == 57 || nr == 58 || nr == 59 || nr == 60 || nr == 231 || nr == 322 || nr == 435;
}

static void on_entry(pid_t tid, struct tracee *t, const struct __ptrace_syscall_info *si)
{
	end_call(t);
	t->in_call = 1;
	t->nr = (long)si->entry.nr;
	memcpy(t->args, si->entry.args, sizeof(t->args));
	static char path[4096], abs[4096];
	long fd = call_file(tid, t->nr, t->args, path, abs, sizeof(abs));
	if (fd >= 0 && strncmp(abs, "socket:", 7) == 0)
		socket_protocol(tid, (int)fd, abs, sizeof(abs));
	if (path[0])
		t->data_addr = t->args[file_arg_of(t->nr) == ARG_AT1 ? 1 : 0];
	if (abs[0] == '/' && is_served(abs)) {
		/* The emulator runs it as FUSE requests: what this process did before comes first. */
		t->skip = 1;
		flush_batch();
		return;
	}
	escape(abs, t->file, sizeof(t->file));
	if (path[0]) {
		size_t len = strlen(path) + 1;
		escape_bytes((const unsigned char *)path, len < USER_DATA_MAX ? len : USER_DATA_MAX, t->data, sizeof(t->data));
	}
	if (may_block(t->nr) && run_ns(tid, &t->call_run_ns) == 0) {
		t->call_ns = monotonic_ns();
		t->call_timed = 1;
	}
	if (t->nr == 56 || t->nr == 57 || t->nr == 58 || t->nr == 435) {
		char line[64];
		int n = snprintf(line, sizeof(line), "B %d %ld\n", tid, t->nr);
		add_line(line, (size_t)n);
	}
	if (is_lifecycle(t->nr))
		flush_batch();
}

static void on_exit_stop(pid_t tid, struct tracee *t, const struct __ptrace_syscall_info *si)
{
	/* A call on a served file is FUSE's, but for its S line (a chdir there: FUSE never hears of it). */
	if (!t->in_call || (t->skip && !t->s_head)) {
		end_call(t);
		return;
	}
	char line[4200];
	int n;
	if (t->s_head)
		n = snprintf(line, sizeof(line), "%s%lld%s", t->s_head, (long long)si->exit.rval, t->s_tail);
	else {
		if (!t->comm[0]) {
			char comm[32];
			proc_file_line(tid, "comm", comm, sizeof(comm));
			escape(comm, t->comm, sizeof(t->comm));
			t->ppid = proc_ppid(tid);
		}
		const uint64_t *a = t->args;
		/* read, pread64: what the kernel filled; write, pwrite64: what the program passed. */
		long long rval = (long long)si->exit.rval;
		uint64_t want = (t->nr == 0 || t->nr == 17) ? (rval > 0 ? (uint64_t)rval : 0) : (t->nr == 1 || t->nr == 18) ? a[2] : 0;
		if (want) {
			unsigned char buf[USER_DATA_MAX];
			size_t len = want < USER_DATA_MAX ? (size_t)want : USER_DATA_MAX;
			t->data[0] = 0;
			if (read_mem(tid, a[1], buf, len) == 0) {
				t->data_addr = a[1];
				escape_bytes(buf, len, t->data, sizeof(t->data));
			}
		}
		char data[sizeof(t->data) + 24] = "";
		if (t->data[0])
			snprintf(data, sizeof(data), "\t%llx %s", (unsigned long long)t->data_addr, t->data);
		long long slept = t->call_timed ? asleep_since(tid, t->call_ns, t->call_run_ns) : -1;
		/* One that slept is woken as it is reported: with the priority it has (a chrt before its exec may be read too late otherwise). */
		char sched[32] = "";
		int priority, policy;
		if (slept > 0 && sched_of(tid, &priority, &policy) == 0)
			snprintf(sched, sizeof(sched), " %d %d", priority, policy);
		n = snprintf(line, sizeof(line), "T %d %ld %lld %llx %llx %llx %llx %llx %llx %d %lld%s\t%s\t%s%s\n", tid, t->nr, rval,
			     (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2], (unsigned long long)a[3],
			     (unsigned long long)a[4], (unsigned long long)a[5], t->ppid, slept, sched, t->file, t->comm, data);
	}
	end_call(t);
	if (n > 0 && n < (int)sizeof(line))
		add_line(line, (size_t)n);
}

/* Whether a thread is running (not asleep in a call): /proc/TID/stat's state. */
/* 1 running, 0 not, -1 gone (no /proc entry: exited and reaped without our seeing it). */
static int is_running(pid_t tid)
{
	char stat[512];
	const char *f = proc_stat_fields(tid, stat, sizeof(stat));
	if (!stat[0])
		return -1;
	return f && f[0] == 'R';
}

/*
 * Calls a thread may sleep in that a stop restarts unseen (they return
 * -ERESTARTSYS, -ERESTARTNOHAND or use the restart block): reads and writes
 * (a pipe, a terminal), poll and select, waits, sleeps, futexes, pause,
 * sigsuspend, a FIFO's open. Others end with EINTR when stopped (epoll_wait,
 * sigtimedwait, a socket read with a timeout): their sleepers are left alone.
 */
static int restarts_unseen(long nr)
{
	switch (nr) {
	case 0: case 1: case 2: case 7: case 17: case 18: case 19: case 20: case 23: case 34: case 35: case 61: case 73:
	case 130: case 202: case 230: case 247: case 257: case 270: case 271:
		return 1;
	default:
		return 0;
	}
}

/*
 * Whether a thread asleep in a call may be stopped: the call restarts
 * unseen, and it is not a request to the emulator, which ends a blocked one
 * (a trace_pipe read) with EINTR when FUSE tells it of the interruption.
 * Judged by the call's number and the file it is on, as /proc/TID/syscall
 * gives them.
 */
static int asleep_off_mount(pid_t tid)
{
	char sc[512];
	proc_file_line(tid, "syscall", sc, sizeof(sc));
	if (sc[0] < '0' || sc[0] > '9')
		return 0;
	char *p = sc;
	long nr = strtol(p, &p, 10);
	if (!restarts_unseen(nr))
		return 0;
	uint64_t a[6];
	for (int i = 0; i < 6; i++)
		a[i] = strtoull(p, &p, 16);
	static char path[4096], abs[4096];
	call_file(tid, nr, a, path, abs, sizeof(abs));
	enum file_arg kind = file_arg_of(nr);
	if ((kind == ARG_PATH0 || kind == ARG_AT1) && !path[0])
		return 0; /* its path could not be read: judged on the mount */
	return !(abs[0] == '/' && is_served(abs));
}

/*
 * Observation is on: tracees resumed before it stop (PTRACE_EVENT_STOP) and
 * go on under PTRACE_SYSCALL. Running ones, ones asleep in a call off the
 * mount that restarts unseen (a shell's wait, perf's child waiting on a pipe
 * before it execs the command, whose calls would otherwise go unseen), and
 * the requester: its request on the mount is answered only after the ack
 * (the daemon ignores the interrupt), so it stops before its next
 * instruction. One asleep in a request to the emulator could see it fail
 * with EINTR (a blocked trace_pipe read); it is retried every RETRY_MS.
 * Returns how many are left to stop.
 */
#define RETRY_MS 10
static int to_stop; /* tracees resumed before observation turned on may be left */
static int interrupt_running(pid_t requester)
{
	int left = 0;
	/* Threads gone without an exit status for us: forgotten after the scan (removal moves entries). */
	pid_t gone[256];
	unsigned ngone = 0;
	for (unsigned i = 0; i < MAX_TRACEES; i++) {
		struct tracee *t = &tracees[i];
		if (!t->tid || t->stepping || t->interrupted)
			continue;
		int running = is_running(t->tid);
		if (running < 0) {
			if (ngone < sizeof(gone) / sizeof(gone[0]))
				gone[ngone++] = t->tid;
			else
				left++;
			continue;
		}
		if ((t->tid == requester || running || asleep_off_mount(t->tid)) && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
			t->interrupted = 1;
		else
			left++;
	}
	for (unsigned i = 0; i < ngone; i++)
		tracee_gone(gone[i]);
	return left;
}

/* Tells the daemon this supervisor acted on switch GEN: what it reported before is in the FIFO, every tracee will stop. */
static void ack_observe(unsigned gen)
{
	char line[64];
	flush_batch();
	int n = snprintf(line, sizeof(line), "O %d %u\n", (int)getpid(), gen);
	add_line(line, (size_t)n);
	flush_batch();
}

static void on_stop(pid_t tid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		tracee_gone(tid);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	struct tracee *t = tracee_of(tid, 1);
	int sig = WSTOPSIG(status), event = status >> 16;
	if (sig == (SIGTRAP | 0x80)) {
		struct __ptrace_syscall_info si;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) > 0 && t) {
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY)
				on_entry(tid, t, &si);
			else if (si.op == PTRACE_SYSCALL_INFO_EXIT)
				on_exit_stop(tid, t, &si);
		}
		resume(tid, 0);
		return;
	}
	switch (event) {
	case 0:
		/* A signal for the tracee: delivered. */
		resume(tid, sig);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		unsigned long child = 0;
		struct tracee *c;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0 && child && (c = tracee_of((pid_t)child, 1))) {
			if (t && c != t)
				c->opts = t->opts;
			note_seen(c, (pid_t)child);
			/*
			 * The proc connector's line for this fork may reach the daemon after
			 * the parent's next request on the mount: said here, before the
			 * parent goes on, the fork is run first.
			 */
			if (event != PTRACE_EVENT_CLONE) {
				/* And what the parent runs: an exec it made just before may be reported later too. */
				char comm[32], ec[80], line[128];
				proc_file_line(tid, "comm", comm, sizeof(comm));
				escape(comm, ec, sizeof(ec));
				int n = snprintf(line, sizeof(line), "N %d %lu\t%s\n", tid, child, ec);
				add_line(line, (size_t)n);
				flush_batch();
			}
		}
		break;
	}
	case PTRACE_EVENT_EXEC: {
		unsigned long former = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) == 0 && (pid_t)former != tid)
			tracee_gone((pid_t)former);
		if ((t = tracee_of(tid, 1))) {
			t->comm[0] = 0;
			note_seen(t, tid);
		}
		break;
	}
	case PTRACE_EVENT_EXIT: {
		/*
		 * Its calls reach the daemon before its exit does; the one it is in
		 * never returns. The exit is said here, before the parent can reap it:
		 * the proc connector's line for it may reach the daemon after the
		 * parent's next request on the mount.
		 */
		if (t)
			end_call(t);
		unsigned long status = 0;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &status);
		/* And what it runs: an exec it made may be reported after this; and how long it slept since the daemon last learned of it. */
		char comm[32], ec[80], line[160];
		proc_file_line(tid, "comm", comm, sizeof(comm));
		escape(comm, ec, sizeof(ec));
		long long slept = slept_ns(t, tid);
		int n = slept >= 0 ? snprintf(line, sizeof(line), "D %d %lu %lld\t%s\n", tid, status, slept, ec) : snprintf(line, sizeof(line), "D %d %lu\t%s\n", tid, status, ec);
		add_line(line, (size_t)n);
		flush_batch();
		break;
	}
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* A group stop: the process stays stopped, as without a tracer. */
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		break;
	}
	resume(tid, 0);
}

/* ---- the supervisor's loop ------------------------------------------------------------ */

static void supervise(int listener, int inotify_fd)
{
	listener_fd = listener;
	struct seccomp_notif_sizes sz;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (listener >= 0) {
		if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
			_exit(1);
		/*
		 * Each notification is a round trip: the caller waits while this
		 * supervisor runs. Woken on the same CPU, neither side waits for an
		 * interrupt from the other CPU (costly under virtualization). Linux
		 * 6.6+; an older kernel refuses it and nothing changes.
		 */
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
		req = calloc(1, sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req));
		resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp : sizeof(*resp));
		if (!req || !resp)
			_exit(1);
	}
	int sfd = -1;
	if (tracing) {
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	}
	for (;;) {
		if (tracing) {
			int status;
			pid_t tid;
			while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
				on_stop(tid, status);
			if (tid < 0 && errno == ECHILD && listener < 0) {
				/* Every traced process is gone. */
				flush_batch();
				_exit(0);
			}
		}
		if (to_stop)
			to_stop = observing && interrupt_running(0);
		struct pollfd p[3] = {{listener, POLLIN, 0}, {sfd, POLLIN, 0}, {inotify_fd, POLLIN, 0}};
		int r = poll(p, 3, batch_len ? FLUSH_MS : to_stop ? RETRY_MS : -1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (r == 0) {
			flush_batch();
			continue;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) > 0) {
			}
		}
		if (p[2].revents & POLLIN) {
			char ev[4096];
			while (read(inotify_fd, ev, sizeof(ev)) > 0) {
			}
			unsigned gen = observe_gen;
			read_observe(&gen);
			to_stop = observing;
			if (reporting && gen != observe_gen) {
				observe_gen = gen;
				if (observing)
					to_stop = interrupt_running(observe_requester);
				ack_observe(gen);
			}
		}
		if (p[0].revents & POLLIN) {
			memset(req, 0, sz.seccomp_notif);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
				int err = 0, go_on = 1;
				long val = 0;
				if (req->data.nr == NR_SCHED_GETAFFINITY) {
					emulate_getaffinity(req, &val, &err);
					go_on = 0;
				} else if (req->data.nr == NR_SCHED_SETAFFINITY)
					note_setaffinity(req);
				else if (req->data.nr == NR_MOUNT)
					go_on = emulate_mount(req, &err);
				else if (req->data.nr == NR_SPLICE)
					direct_splice(req);
				else if (req->data.nr == NR_UMOUNT2)
					umount_debugfs(req);
				else {
					handle(req);
					if (answer_mount_table(req))
						continue;
				}
				memset(resp, 0, sz.seccomp_notif_resp);
				resp->id = req->id;
				if (go_on)
					resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
				else {
					resp->error = err;
					resp->val = err ? 0 : val;
				}
				/* ENOENT: the caller is gone (killed while waiting). */
				ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
			}
		} else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			/* No process uses the filter any more. */
			flush_batch();
			if (!tracing)
				_exit(0);
			listener = listener_fd = -1;
		}
	}
}

/* ---- main ------------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: syscall_watch FIFO [--served PATH]... [--fs TYPE=PATH]... [--fs-options TYPE=FILE]... [--mount-sources FILE] [--hide PATH]... [--cpus-shown LIST] [--observe FILE] -- CMD [ARG]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		usage();
	/*
	 * Until it execs, the command's process is a fork of whoever started
	 * the watcher, as it would be without one: it (and the supervisor)
	 * carry that one's comm, not this helper's file name.
	 */
	char parent_comm[64];
	proc_file_line(getppid(), "comm", parent_comm, sizeof(parent_comm));
	if (parent_comm[0])
		prctl(PR_SET_NAME, parent_comm, 0, 0, 0);
	const char *fifo_path = argv[1], *observe_path = NULL;
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		char *eq;
		if (!strcmp(argv[i], "--served") && i + 1 < argc && nserved < MAX_SERVED)
			served[nserved++] = argv[++i];
		else if (!strcmp(argv[i], "--observe") && i + 1 < argc)
			observe_path = argv[++i];
		else if (!strcmp(argv[i], "--fs") && i + 1 < argc && nemulated < MAX_FS && (eq = strchr(argv[i + 1], '=')) &&
			 (size_t)(eq - argv[i + 1]) < sizeof(emulated[0].type)) {
			i++;
			memcpy(emulated[nemulated].type, argv[i], (size_t)(eq - argv[i]));
			emulated[nemulated].type[eq - argv[i]] = 0;
			emulated[nemulated++].path = eq + 1;
		} else if (!strcmp(argv[i], "--fs-options") && i + 1 < argc && (eq = strchr(argv[i + 1], '='))) {
			i++;
			for (int f = 0; f < nemulated; f++)
				if (strlen(emulated[f].type) == (size_t)(eq - argv[i]) && !strncmp(emulated[f].type, argv[i], (size_t)(eq - argv[i])))
					emulated[f].options_file = eq + 1;
		} else if (!strcmp(argv[i], "--mount-sources") && i + 1 < argc) {
			mount_sources = argv[++i];
		} else if (!strcmp(argv[i], "--cpus-shown") && i + 1 < argc) {
			shown_cpus_init(argv[++i]);
		} else if (!strcmp(argv[i], "--hide") && i + 1 < argc) {
			if (nhidden < MAX_HIDDEN)
				hidden[nhidden++] = argv[i + 1];
			i++;
		} else
			usage();
	}
	if (i >= argc - 1)
		usage();
	char **cmd = argv + i + 1;

	/* No reader (no daemon): run unwatched rather than block on the FIFO. */
	fifo = open(fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fifo < 0) {
		fprintf(stderr, "syscall_watch: %s: %s (system calls outside the mount are not reported)\n", fifo_path, strerror(errno));
		execvp(cmd[0], cmd);
		fprintf(stderr, "syscall_watch: %s: %s\n", cmd[0], strerror(errno));
		return 127;
	}
	/* Writes wait when the FIFO is full (the daemon drains it often). */
	fcntl(fifo, F_SETFL, fcntl(fifo, F_GETFL) & ~O_NONBLOCK);

	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		perror("syscall_watch: socketpair");
		return 125;
	}
	/* The supervisor is a grandchild: reparented away, it is no child the command could wait for. */
	pid_t cmd_pid = getpid();
	/* Until the supervisor listens, a signal would stop the traced command with nobody to resume it (the middle child's SIGCHLD). */
	sigset_t chld, mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &mask);
	pid_t mid = fork();
	if (mid < 0) {
		perror("syscall_watch: fork");
		return 125;
	}
	if (mid == 0) {
		if (fork() != 0)
			_exit(0);
		setsid();
		for (int s = 1; s < 32; s++)
			if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
				signal(s, SIG_IGN);
		close(sp[0]);
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
			dup2(devnull, 2);
			if (devnull > 2)
				close(devnull);
		}
		/* Nothing else of the command's stays open here (a pipe held open would never see EOF). */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != sp[1] && fd != fifo)
				close(fd);
		/* Traced from the start when the daemon says whether anything sees system calls. */
		int inotify_fd = -1;
		observe_fd = observe_path ? open(observe_path, O_RDONLY | O_CLOEXEC) : -1;
		if (observe_fd >= 0) {
			inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
			if (inotify_fd >= 0 && inotify_add_watch(inotify_fd, observe_path, IN_MODIFY | IN_CLOSE_WRITE) < 0) {
				close(inotify_fd);
				inotify_fd = -1;
			}
			read_observe(&observe_gen);
			to_stop = observing;
			long opts = observing ? OPTS_TRACED : OPTS_FOLLOW;
			tracing = inotify_fd >= 0 && ptrace(PTRACE_SEIZE, cmd_pid, 0, opts) == 0;
			struct tracee *t;
			if (tracing && (t = tracee_of(cmd_pid, 1)))
				t->opts = opts;
		}
		/* The command goes on once it is traced (or will not be). */
		if (write(sp[1], "", 1) != 1)
			_exit(0);
		int listener = recv_fd(sp[1]);
		close(sp[1]);
		if (listener < 0 && !tracing)
			_exit(0);
		if (tracing) {
			/* The daemon waits for this supervisor's acks (O lines) from now on. */
			char hello[32];
			int n = snprintf(hello, sizeof(hello), "W %d\n", (int)getpid());
			add_line(hello, (size_t)n);
			flush_batch();
		}
		supervise(listener, inotify_fd);
		_exit(0);
	}
	close(sp[1]);
	waitpid(mid, NULL, 0);
	char ack;
	if (read(sp[0], &ack, 1) != 1) {
		/* No supervisor: nobody would answer the filter. */
		fprintf(stderr, "syscall_watch: no supervisor (system calls outside the mount are not reported)\n");
		close(sp[0]);
		close(fifo);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		execvp(cmd[0], cmd);
		return 127;
	}
	close(fifo);

	int listener = install_filter();
	if (listener < 0) {
		fprintf(stderr, "syscall_watch: seccomp: %s (system calls outside the mount are not reported)\n", strerror(errno));
		close(sp[0]);
	} else {
		if (send_fd(sp[0], listener) < 0) {
			/* Nobody would answer the filter: the watched calls would fail. */
			perror("syscall_watch: cannot hand the filter to its supervisor");
			return 125;
		}
		close(listener);
		close(sp[0]);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	execvp(cmd[0], cmd);
	fprintf(stderr, "syscall_watch: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}
