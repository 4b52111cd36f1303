/*
 * Makes the system calls a shell, coreutils, sleep, ping, trace-cmd and perf
 * make besides read, write, open, close, mmap, stat and the socket calls,
 * one group per run, for kernel-paths-calls.sh's capture: the guest's
 * busybox makes few of them, and not on demand. Built static on the host by
 * guest-binary.sh and shipped in the job script.
 *
 *   calls mem | sig | proc | sleep | pty | file DIR | paths DIR | pipe DIR | null DIR
 *
 * (installed as /tmp/calls: its comm, `calls`, fits the trace's column).
 * One kind of file per run, so that calls.mjs knows a call's kind by its run.
 * Each call goes through syscall(2), so that it is that system call and no
 * other (glibc turns some into others, or into the vDSO). The whole is done
 * ROUNDS times: under the oracle's emulated CPU a timer tick or a first-touch
 * page fault lands in many calls, and calls.mjs takes the first call that
 * none hit. A call that fails unexpectedly is reported on stderr and ends
 * the program; the ones meant to fail (ioctl TCGETS on a file) are checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <asm/prctl.h>

#define ROUNDS 3

static long check(long r, const char *what)
{
	if (r < 0) {
		perror(what);
		exit(1);
	}
	return r;
}

/* A call that must fail with `want`. */
static void fails(long r, int want, const char *what)
{
	if (r != -1 || errno != want) {
		fprintf(stderr, "%s: %ld (errno %d), not errno %d\n", what, r, errno, want);
		exit(1);
	}
}

static char buf[4096];

/* brk up and back; an anonymous mapping protected in part, advised, grown and unmapped. */
static void mem(void)
{
	long cur = check(syscall(SYS_brk, 0), "brk");
	check(syscall(SYS_brk, cur + 65536), "brk");
	check(syscall(SYS_brk, cur), "brk");
	char *p = (char *)syscall(SYS_mmap, 0, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		check(-1, "mmap");
	memset(p, 1, 4 * 4096);
	check(syscall(SYS_mprotect, p, 4096, PROT_READ), "mprotect");
	check(syscall(SYS_madvise, p + 4096, 4096, MADV_DONTNEED), "madvise");
	/* (mremap moves one mapping: the part mprotect left as it was) */
	char *q = (char *)syscall(SYS_mremap, p + 2 * 4096, 2 * 4096, 4 * 4096, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		check(-1, "mremap");
	check(syscall(SYS_munmap, q, 4 * 4096), "munmap");
	check(syscall(SYS_munmap, p, 2 * 4096), "munmap");
}

static volatile int caught;
static void on_usr1(int sig)
{
	caught = sig;
}

static char altstack[65536];

/* A handler set, a mask changed and put back, an alternate stack, kill(0) to oneself, a signal taken (rt_sigreturn). */
static void sig(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	check(sigaction(SIGUSR1, &sa, &old), "rt_sigaction");
	sigset_t set, was;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	check(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &was, 8), "rt_sigprocmask");
	check(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &was, NULL, 8), "rt_sigprocmask");
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	check(syscall(SYS_sigaltstack, &ss, NULL), "sigaltstack");
	check(syscall(SYS_kill, getpid(), 0), "kill");
	caught = 0;
	check(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1), "tgkill");
	if (caught != SIGUSR1)
		check(-1, "signal not taken");
}

static int word;
static int tid_word;

/* The identity, limits, clock and scheduling calls; a wait4 that finds its child alive. */
static void proc(void)
{
	struct utsname u;
	struct sysinfo si;
	struct tms t;
	struct timespec ts;
	struct rlimit rl;
	cpu_set_t cpus;
	syscall(SYS_getpid);
	syscall(SYS_getppid);
	syscall(SYS_gettid);
	syscall(SYS_getuid);
	syscall(SYS_geteuid);
	syscall(SYS_getgid);
	syscall(SYS_getegid);
	syscall(SYS_getpgrp);
	check(syscall(SYS_setpgid, 0, 0), "setpgid");
	check(syscall(SYS_uname, &u), "uname");
	check(syscall(SYS_sysinfo, &si), "sysinfo");
	syscall(SYS_umask, 022);
	check(syscall(SYS_getrandom, buf, 16, GRND_NONBLOCK), "getrandom");
	check(syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl), "prlimit64");
	check(syscall(SYS_set_tid_address, &tid_word), "set_tid_address");
	void *head;
	size_t len;
	check(syscall(SYS_get_robust_list, 0, &head, &len), "get_robust_list");
	check(syscall(SYS_set_robust_list, head, len), "set_robust_list");
	unsigned long fs;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(fs)); /* glibc's thread pointer points at itself */
	check(syscall(SYS_arch_prctl, ARCH_SET_FS, fs), "arch_prctl");
	check(syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), "futex");
	check(syscall(SYS_sched_getaffinity, 0, sizeof(cpus), &cpus), "sched_getaffinity");
	check(syscall(SYS_sched_yield), "sched_yield");
	check(syscall(SYS_times, &t), "times");
	check(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts), "clock_gettime");
	int p[2];
	check(pipe(p), "pipe");
	pid_t child = (pid_t)check(fork(), "fork");
	if (!child) {
		close(p[1]);
		read(p[0], buf, 1);
		_exit(0);
	}
	close(p[0]);
	int st;
	check(syscall(SYS_wait4, -1, &st, WNOHANG, NULL), "wait4");
	close(p[1]);
	check(waitpid(child, &st, 0), "waitpid");
}

/* Two sleeps of 10 ms. */
static void sleeps(void)
{
	struct timespec ts = { .tv_nsec = 10000000 };
	check(syscall(SYS_nanosleep, &ts, NULL), "nanosleep");
	check(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL), "clock_nanosleep");
}

static void path(char *out, const char *dir, const char *name)
{
	snprintf(out, 256, "%s/%s", dir, name);
}

/* DIR/file, opened. */
static int open_file(const char *dir, int flags)
{
	char f[256];
	path(f, dir, "file");
	return (int)check(open(f, flags), "open");
}

/* On DIR/file (on tmpfs, holding a few bytes): fstat, lseek, pread64, pwrite64, ioctl TCGETS, fcntl, dup*. */
static void file(const char *dir)
{
	struct stat st;
	struct termios tio;
	int fd = open_file(dir, O_RDWR);
	check(syscall(SYS_fstat, fd, &st), "fstat");
	check(syscall(SYS_lseek, fd, 0, SEEK_SET), "lseek");
	check(syscall(SYS_pread64, fd, buf, 6, 0), "pread64");
	check(syscall(SYS_pwrite64, fd, "hello\n", 6, 0), "pwrite64");
	fails(syscall(SYS_ioctl, fd, TCGETS, &tio), ENOTTY, "ioctl");
	check(syscall(SYS_fcntl, fd, F_GETFL), "fcntl");
	check(syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC), "fcntl");
	close((int)check(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 10), "fcntl"));
	close((int)check(syscall(SYS_dup, fd), "dup"));
	close((int)check(syscall(SYS_dup2, fd, 20), "dup2"));
	close((int)check(syscall(SYS_dup3, fd, 21, O_CLOEXEC), "dup3"));
	close(fd);
}

/* The path calls in DIR (on tmpfs); getcwd. */
static void paths(const char *dir)
{
	char f[256], link[256], d[256], a[256], b[256];
	path(f, dir, "file");
	path(link, dir, "link");
	path(d, dir, "dir");
	path(a, dir, "a");
	path(b, dir, "b");
	check(syscall(SYS_access, f, R_OK), "access");
	check(syscall(SYS_faccessat2, AT_FDCWD, f, R_OK, AT_EACCESS), "faccessat2");
	struct statx sx;
	check(syscall(SYS_statx, AT_FDCWD, f, 0, STATX_BASIC_STATS, &sx), "statx");
	check(symlink(f, link), "symlink");
	check(syscall(SYS_readlink, link, buf, sizeof(buf)), "readlink");
	check(syscall(SYS_readlinkat, AT_FDCWD, link, buf, sizeof(buf)), "readlinkat");
	check(syscall(SYS_unlinkat, AT_FDCWD, link, 0), "unlinkat");
	check(syscall(SYS_mkdirat, AT_FDCWD, d, 0755), "mkdirat");
	check(syscall(SYS_unlinkat, AT_FDCWD, d, AT_REMOVEDIR), "unlinkat");
	close((int)check(open(a, O_WRONLY | O_CREAT, 0644), "open"));
	check(syscall(SYS_rename, a, b), "rename");
	check(syscall(SYS_renameat2, AT_FDCWD, b, AT_FDCWD, a, 0), "renameat2");
	check(syscall(SYS_unlinkat, AT_FDCWD, a, 0), "unlinkat");
	check(syscall(SYS_getcwd, buf, sizeof(buf)), "getcwd");
}

/* A pipe made by pipe2: fstat, lseek (ESPIPE), ioctl TCGETS (ENOTTY), sendfile of DIR/file into it. */
static void on_pipe(const char *dir)
{
	struct stat st;
	struct termios tio;
	int p[2];
	int fd = open_file(dir, O_RDONLY);
	check(syscall(SYS_pipe2, p, O_CLOEXEC), "pipe2");
	check(syscall(SYS_fstat, p[0], &st), "fstat");
	fails(syscall(SYS_lseek, p[0], 0, SEEK_CUR), ESPIPE, "lseek");
	fails(syscall(SYS_ioctl, p[1], TCGETS, &tio), ENOTTY, "ioctl");
	off_t off = 0;
	check(syscall(SYS_sendfile, p[1], fd, &off, 6), "sendfile");
	check(read(p[0], buf, sizeof(buf)), "read");
	close(p[0]);
	close(p[1]);
	close(fd);
}

/* /dev/null: fstat, lseek, ioctl TCGETS (ENOTTY), sendfile of DIR/file to it. */
static void on_null(const char *dir)
{
	struct stat st;
	struct termios tio;
	int fd = open_file(dir, O_RDONLY);
	int null = (int)check(open("/dev/null", O_WRONLY), "open");
	check(syscall(SYS_fstat, null, &st), "fstat");
	check(syscall(SYS_lseek, null, 0, SEEK_SET), "lseek");
	fails(syscall(SYS_ioctl, null, TCGETS, &tio), ENOTTY, "ioctl");
	off_t off = 0;
	check(syscall(SYS_sendfile, null, fd, &off, 6), "sendfile");
	close(null);
	close(fd);
}

/* A terminal: the other end of a pseudo-terminal, as a shell's is: ioctl TCGETS (isatty), fstat. */
static void on_pty(void)
{
	struct stat st;
	struct termios tio;
	int ptm = (int)check(open("/dev/ptmx", O_RDWR | O_NOCTTY), "open");
	check(grantpt(ptm) | unlockpt(ptm), "unlockpt");
	int pts = (int)check(open(ptsname(ptm), O_RDWR | O_NOCTTY), "open");
	check(syscall(SYS_ioctl, pts, TCGETS, &tio), "ioctl");
	check(syscall(SYS_fstat, pts, &st), "fstat");
	close(pts);
	close(ptm);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	for (int i = 0; i < ROUNDS; i++) {
		if (!strcmp(mode, "mem"))
			mem();
		else if (!strcmp(mode, "sig"))
			sig();
		else if (!strcmp(mode, "proc"))
			proc();
		else if (!strcmp(mode, "sleep"))
			sleeps();
		else if (!strcmp(mode, "pty"))
			on_pty();
		else if (argc > 2 && !strcmp(mode, "file"))
			file(argv[2]);
		else if (argc > 2 && !strcmp(mode, "paths"))
			paths(argv[2]);
		else if (argc > 2 && !strcmp(mode, "pipe"))
			on_pipe(argv[2]);
		else if (argc > 2 && !strcmp(mode, "null"))
			on_null(argv[2]);
		else {
			fprintf(stderr, "usage: calls mem | sig | proc | sleep | pty | file DIR | paths DIR | pipe DIR | null DIR\n");
			return 2;
		}
	}
	return 0;
}
