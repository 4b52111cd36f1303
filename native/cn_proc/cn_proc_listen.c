/*
 * cn_proc_listen: the kernel's process events (the proc connector,
 * NETLINK_CONNECTOR / CN_IDX_PROC) as text lines on stdout, for tracefs-emu
 * to mirror every fork, exec and exit of the machine — processes that never
 * touch the mount included. Needs CAP_NET_ADMIN in the initial network
 * namespace. Lines (fields separated by one space; comm and exe last):
 *
 *   F cpu ppid ptgid pid tgid        fork (a thread when pid != tgid)
 *   E cpu pid tgid comm\tfilename    exec: the new comm, and the file it ran as
 *                                    execve() named it (argv[0] looked up in
 *                                    the process's PATH; else /proc/pid/exe)
 *   C cpu pid tgid comm              comm changed (prctl PR_SET_NAME)
 *   X cpu pid tgid code              exit (code as wait(2) encodes it)
 *   R                                listening
 *
 * Exits when stdout is closed (its reader went away) or on an error.
 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void read_small(const char *path, char *buf, size_t n, int link)
{
	ssize_t r = link ? readlink(path, buf, n - 1) : -1;
	if (!link) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(buf, (int)n, f))
				r = (ssize_t)strlen(buf);
			fclose(f);
		}
	}
	if (r < 0)
		r = 0;
	buf[r] = 0;
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = 0;
}

/* The path execve() was most likely given: argv[0] if it has a slash, else its first match in the process's PATH. */
static void exec_filename(int pid, char *out, size_t n)
{
	char path[64], argv0[1024] = "", env[65536];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	FILE *f = fopen(path, "r");
	if (f) {
		size_t r = fread(argv0, 1, sizeof(argv0) - 1, f);
		argv0[r] = 0;
		fclose(f);
	}
	out[0] = 0;
	if (strchr(argv0, '/')) {
		snprintf(out, n, "%s", argv0);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	f = fopen(path, "r");
	size_t len = 0;
	if (f) {
		len = fread(env, 1, sizeof(env) - 1, f);
		fclose(f);
	}
	env[len] = 0;
	for (size_t i = 0; argv0[0] && i < len; i += strlen(env + i) + 1) {
		if (strncmp(env + i, "PATH=", 5) != 0)
			continue;
		char *dirs = env + i + 5, *save = NULL;
		for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(out, n, "%s/%s", *d ? d : ".", argv0);
			if (access(out, X_OK) == 0)
				return;
		}
		break;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	read_small(path, out, n, 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int s = socket(PF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	if (s < 0) {
		perror("cn_proc_listen: socket");
		return 1;
	}
	/* Bursts of thousands of processes overflow the default buffer: room for more (root may exceed rmem_max). */
	int rcvbuf = 8 << 20;
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = (unsigned)getpid() };
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("cn_proc_listen: bind");
		return 1;
	}
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req;
	memset(&req, 0, sizeof(req));
	req.nl.nlmsg_len = sizeof(req);
	req.nl.nlmsg_type = NLMSG_DONE;
	req.nl.nlmsg_pid = (unsigned)getpid();
	req.cn.id.idx = CN_IDX_PROC;
	req.cn.id.val = CN_VAL_PROC;
	req.cn.len = sizeof(req.op);
	req.op = PROC_CN_MCAST_LISTEN;
	if (send(s, &req, sizeof(req), 0) < 0) {
		perror("cn_proc_listen: send");
		return 1;
	}
	printf("R\n");
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = recv(s, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Events were dropped: the reader must look for itself (an exit it will not hear of). */
			if (errno == ENOBUFS) {
				printf("L\n");
				continue;
			}
			perror("cn_proc_listen: recv");
			return 1;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
			struct cn_msg *cn = NLMSG_DATA(h);
			if (cn->id.idx != CN_IDX_PROC)
				continue;
			struct proc_event *ev = (struct proc_event *)cn->data;
			char path[64], comm[64], exe[4096];
			switch (ev->what) {
			case PROC_EVENT_FORK:
				printf("F %u %d %d %d %d\n", ev->cpu, ev->event_data.fork.parent_pid, ev->event_data.fork.parent_tgid,
				       ev->event_data.fork.child_pid, ev->event_data.fork.child_tgid);
				break;
			case PROC_EVENT_EXEC:
				snprintf(path, sizeof(path), "/proc/%d/comm", ev->event_data.exec.process_pid);
				read_small(path, comm, sizeof(comm), 0);
				exec_filename(ev->event_data.exec.process_pid, exe, sizeof(exe));
				printf("E %u %d %d %s\t%s\n", ev->cpu, ev->event_data.exec.process_pid, ev->event_data.exec.process_tgid, comm, exe);
				break;
			case PROC_EVENT_COMM:
				memcpy(comm, ev->event_data.comm.comm, 16);
				comm[16] = 0;
				for (char *p = comm; *p; p++)
					if (*p == '\n' || *p == '\t')
						*p = ' ';
				printf("C %u %d %d %s\n", ev->cpu, ev->event_data.comm.process_pid, ev->event_data.comm.process_tgid, comm);
				break;
			case PROC_EVENT_EXIT:
				printf("X %u %d %d %u\n", ev->cpu, ev->event_data.exit.process_pid, ev->event_data.exit.process_tgid,
				       ev->event_data.exit.exit_code);
				break;
			default:
				break;
			}
		}
		if (ferror(stdout))
			return 0;
	}
}
