/*
 * The mount tables syscall_watch shows (included by syscall_watch.c, whose
 * helpers and options it uses): an open of /proc/mounts, /proc/PID/mounts
 * or /proc/PID/mountinfo is answered with a copy of the caller's table as a
 * kernel would print it — the emulator's FUSE mounts (fuse.TYPE for a --fs
 * TYPE) as TYPE with that filesystem's own options, the namespace's own
 * mounts (--hide) and what is mounted on them left out. FUSE cannot make
 * the kernel print "tracefs" as a type, and /proc/self resolves per
 * process, so no bind mount could show this.
 */
#include <sys/mman.h>

/*
 * The process whose mount table an absolute path names (/proc/mounts,
 * /proc/self/..., /proc/thread-self/..., /proc/PID[/task/TID]/...), or 0;
 * *info: the mountinfo format rather than the mounts one.
 */
static pid_t mount_table_of(const char *abs, pid_t caller, int *info)
{
	if (strncmp(abs, "/proc/", 6))
		return 0;
	const char *rest = abs + 6;
	pid_t pid = caller;
	if (!strncmp(rest, "self/", 5))
		rest += 5;
	else if (!strncmp(rest, "thread-self/", 12))
		rest += 12;
	else if (*rest >= '1' && *rest <= '9') {
		char *end;
		pid = (pid_t)strtol(rest, &end, 10);
		if (*end != '/')
			return 0;
		rest = end + 1;
	}
	if (!strncmp(rest, "task/", 5) && rest[5] >= '1' && rest[5] <= '9') {
		char *end;
		pid = (pid_t)strtol(rest + 5, &end, 10);
		if (*end != '/')
			return 0;
		rest = end + 1;
	}
	if (!strcmp(rest, "mountinfo"))
		*info = 1;
	else if (!strcmp(rest, "mounts"))
		*info = 0;
	else
		return 0;
	return pid;
}

/* Escapes as the mount tables do (space, tab, newline and backslash as \ooo). */
static void mangle(const char *s, char *out, size_t n)
{
	size_t o = 0;
	for (; *s && o + 5 < n; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			o += (size_t)sprintf(out + o, "\\%03o", (unsigned char)*s);
		else
			out[o++] = *s;
	}
	out[o] = 0;
}

/* Notes the source given to the newest mount at `point` (--mount-sources), by its mount id. */
static void note_mount_source(const char *point, const char *source)
{
	if (!mount_sources)
		return;
	char want[4200], line[8192], mp[4200];
	mangle(point, want, sizeof(want));
	long id = -1, mid;
	FILE *in = fopen("/proc/self/mountinfo", "re");
	if (!in)
		return;
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "%ld %*d %*s %*s %4199s", &mid, mp) == 2 && !strcmp(mp, want))
			id = mid;
	fclose(in);
	FILE *out = id >= 0 ? fopen(mount_sources, "ae") : NULL;
	if (!out)
		return;
	char src[1100];
	mangle(source, src, sizeof(src));
	fprintf(out, "%ld %s\n", id, src);
	fclose(out);
}

/* The sources noted for mount ids (the last note of an id wins). */
struct noted_source {
	long id;
	char source[1100];
};

static int read_noted_sources(struct noted_source **notes)
{
	*notes = NULL;
	FILE *in = mount_sources ? fopen(mount_sources, "re") : NULL;
	if (!in)
		return 0;
	int n = 0, cap = 0;
	char line[1200];
	while (fgets(line, sizeof(line), in)) {
		struct noted_source note;
		if (sscanf(line, "%ld %1099s", &note.id, note.source) != 2)
			continue;
		if (n == cap) {
			struct noted_source *more = realloc(*notes, sizeof(**notes) * (size_t)(cap = cap ? cap * 2 : 8));
			if (!more)
				break;
			*notes = more;
		}
		(*notes)[n++] = note;
	}
	fclose(in);
	return n;
}

/* One line of mountinfo, cut into its fields (pointers into the line, NUL-terminated). */
struct mount_line {
	long id, parent;
	char *devno, *root, *point, *opts, *optional, *type, *source, *super;
	/* An emulated filesystem's own options, after the superblock's flags (",gid=1000"). */
	const char *own;
	int emulated, hidden;
};

static int cut_mount_line(char *l, struct mount_line *m)
{
	char *sep = strstr(l, " - ");
	if (!sep)
		return -1;
	*sep = 0;
	char *f[6], *save = NULL;
	f[0] = strtok_r(l, " ", &save);
	for (int n = 1; n < 6; n++)
		f[n] = f[n - 1] ? strtok_r(NULL, " ", &save) : NULL;
	if (!f[5])
		return -1;
	m->optional = save ? save : (char *)"";
	m->id = strtol(f[0], NULL, 10);
	m->parent = strtol(f[1], NULL, 10);
	m->devno = f[2];
	m->root = f[3];
	m->point = f[4];
	m->opts = f[5];
	m->type = strtok_r(sep + 3, " ", &save);
	m->source = strtok_r(NULL, " ", &save);
	m->super = strtok_r(NULL, "", &save);
	if (!m->type || !m->source || !m->super)
		return -1;
	m->emulated = 0;
	m->own = "";
	if (!strncmp(m->type, "fuse.", 5))
		for (int i = 0; i < nemulated; i++)
			if (!strcmp(m->type + 5, emulated[i].type)) {
				m->emulated = 1;
				m->own = emulated[i].options;
			}
	if (m->emulated) {
		/* The filesystem's own options, as the daemon keeps them: none of FUSE's (user_id=, allow_other, ...). */
		m->type += 5;
		m->super[strcspn(m->super, ",")] = 0;
	}
	m->hidden = 0;
	for (int i = 0; i < nhidden; i++)
		if (!strcmp(m->point, hidden[i]))
			m->hidden = 1;
	return 0;
}

static struct mount_line *mount_by_id(struct mount_line *ms, int n, long id)
{
	for (int i = 0; i < n; i++)
		if (ms[i].id == id)
			return &ms[i];
	return NULL;
}

/* Whether an option of a superblock is one /proc/mounts prints before the mount's own (show_sb_opts). */
static int sb_flag_option(const char *o, size_t len)
{
	static const char *const flags[] = {"sync", "dirsync", "mand", "lazytime"};
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strlen(flags[i]) == len && !strncmp(o, flags[i], len))
			return 1;
	return 0;
}

/* A line of /proc/mounts from a mountinfo one: source point type opts 0 0 (the superblock's flags, the mount's, the filesystem's). */
static void print_mounts_line(FILE *out, const struct mount_line *m)
{
	int ro = !strncmp(m->opts, "ro", 2) || !strncmp(m->super, "ro", 2);
	const char *sb_rest = m->super + strcspn(m->super, ",");
	fprintf(out, "%s %s %s %s", m->source, m->point, m->type, ro ? "ro" : "rw");
	for (int flags = 1; flags >= 0; flags--) {
		for (const char *o = sb_rest; *o; o += 1 + strcspn(o + 1, ",")) {
			size_t len = strcspn(o + 1, ",");
			if (sb_flag_option(o + 1, len) == flags)
				fprintf(out, ",%.*s", (int)len, o + 1);
		}
		if (flags)
			fputs(m->opts + strcspn(m->opts, ","), out);
	}
	fputs(m->own, out);
	fputs(" 0 0\n", out);
}

/* Each emulated filesystem's own options, as its daemon keeps them now (one line, e.g. ",gid=1000"). */
static void read_own_options(void)
{
	for (int i = 0; i < nemulated; i++) {
		emulated[i].options[0] = 0;
		FILE *f = emulated[i].options_file ? fopen(emulated[i].options_file, "re") : NULL;
		if (!f)
			continue;
		if (!fgets(emulated[i].options, sizeof(emulated[i].options), f))
			emulated[i].options[0] = 0;
		emulated[i].options[strcspn(emulated[i].options, "\n")] = 0;
		fclose(f);
	}
}

/* The caller's mount table as a kernel would show it, in a new file; -1 if it cannot be read. */
static int mount_table_file(pid_t pid, int info)
{
	read_own_options();
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/mountinfo", pid);
	FILE *in = fopen(p, "re");
	if (!in)
		return -1;
	char *text = NULL;
	size_t cap = 0, len = 0, got;
	do {
		if (len + 4096 + 1 > cap && !(text = realloc(text, cap = (cap + 4096) * 2)))
			break;
		got = fread(text + len, 1, cap - len - 1, in);
		len += got;
	} while (got > 0);
	fclose(in);
	if (!text)
		return -1;
	text[len] = 0;
	int n = 0, cap_lines = 64;
	struct mount_line *ms = malloc(sizeof(*ms) * (size_t)cap_lines);
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l && ms; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap_lines && !(ms = realloc(ms, sizeof(*ms) * (size_t)(cap_lines *= 2))))
			break;
		if (cut_mount_line(l, &ms[n]) == 0)
			n++;
	}
	int fd = -1;
	struct noted_source *notes;
	int nnotes = read_noted_sources(&notes);
	for (int i = 0; ms && i < n; i++)
		for (int j = 0; ms[i].emulated && j < nnotes; j++)
			if (notes[j].id == ms[i].id)
				ms[i].source = notes[j].source;
	if (ms) {
		/* What is mounted on a hidden mount is the namespace's too, but for the emulator's filesystems. */
		for (int changed = 1; changed;) {
			changed = 0;
			for (int i = 0; i < n; i++) {
				struct mount_line *up = mount_by_id(ms, n, ms[i].parent);
				if (!ms[i].hidden && !ms[i].emulated && up && up->hidden && up != &ms[i])
					changed = ms[i].hidden = 1;
			}
		}
		fd = memfd_create(info ? "mountinfo" : "mounts", MFD_CLOEXEC);
		FILE *out = fd < 0 ? NULL : fdopen(dup(fd), "w");
		for (int i = 0; out && i < n; i++) {
			struct mount_line *m = &ms[i];
			if (m->hidden)
				continue;
			if (!info) {
				print_mounts_line(out, m);
				continue;
			}
			long parent = m->parent;
			for (struct mount_line *up = mount_by_id(ms, n, parent); up && up->hidden && up->parent != up->id; up = mount_by_id(ms, n, up->parent))
				parent = up->parent;
			fprintf(out, "%ld %ld %s %s %s %s%s%s - %s %s %s%s\n", m->id, parent, m->devno, m->root, m->point, m->opts, *m->optional ? " " : "",
				m->optional, m->type, m->source, m->super, m->own);
		}
		if (out)
			fclose(out);
	}
	free(ms);
	free(notes);
	free(text);
	return fd;
}

/*
 * An open of a mount table: answered here with the table as a kernel shows
 * it (the file handed to the caller as the call's result). 0: not one (the
 * call goes on).
 */
static int answer_mount_table(const struct seccomp_notif *req)
{
	static char path[4096], abs[4096];
	pid_t pid = (pid_t)req->pid;
	const __u64 *arg = req->data.args;
	long flags;
	int at = req->data.nr == NR_OPENAT || req->data.nr == NR_OPENAT2, info = 0;
	if (req->data.nr == NR_OPEN || req->data.nr == NR_OPENAT)
		flags = (long)arg[at ? 2 : 1];
	else if (req->data.nr == NR_OPENAT2) {
		struct open_how how = {0};
		if (read_mem(pid, arg[2], &how, sizeof(how)) < 0)
			return 0;
		flags = (long)how.flags;
	} else
		return 0;
	if ((flags & (O_ACCMODE | O_PATH | O_DIRECTORY | O_CREAT)) != O_RDONLY || read_string(pid, arg[at ? 1 : 0], path, sizeof(path)) < 0)
		return 0;
	/* A path that ends in a mount table names one ("mounts", "mountinfo"): no other needs its cwd read. */
	if (!strstr(path, "mount"))
		return 0;
	resolve(pid, at ? (int64_t)(int)arg[0] : AT_FDCWD, path, abs, sizeof(abs));
	pid_t of = mount_table_of(abs, pid, &info);
	if (!of || !same_mount_ns(of))
		return 0;
	int fd = mount_table_file(of, info);
	if (fd < 0)
		return 0;
	/* Read-only, as the kernel's file is. */
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int ro = open(self, O_RDONLY | O_CLOEXEC);
	close(fd);
	if (ro < 0)
		return 0;
	struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (__u32)ro, .newfd_flags = (__u32)(flags & O_CLOEXEC)};
	int r = ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(ro);
	/* Failed (the caller is gone, or no ADDFD here): the caller's own open goes on. */
	return r >= 0 || errno == ENOENT;
}
