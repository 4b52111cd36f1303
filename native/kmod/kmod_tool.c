/*
 * modprobe, insmod, rmmod and lsmod of `tracefs-emu exec`, as kmod's, on the
 * emulated kernel: loads and unloads go to the daemon's `module` control
 * command (the emulated kernel's init_module / delete_module), lsmod shows
 * its /proc/modules. A small program, so that a traced modprobe makes a few
 * dozen system calls as kmod's does, not a JavaScript runtime's thousands.
 *
 *   kmod_tool TOOL --release RELEASE -- ARGS...   (TRACEFS_EMU_CONTROL: the socket)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *tool = "modprobe";

static void err(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "%s: ", tool);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* Appends `s` as a JSON string (quoted, escaped) at req[n]; returns the new length. */
static int json_str(char *req, int n, int cap, const char *s)
{
	req[n++] = '"';
	for (const char *p = s; *p && n < cap - 16; p++) {
		if (*p == '"' || *p == '\\')
			req[n++] = '\\', req[n++] = *p;
		else if ((unsigned char)*p < 0x20)
			n += snprintf(req + n, (size_t)(cap - n), "\\u%04x", *p);
		else
			req[n++] = *p;
	}
	req[n++] = '"';
	return n;
}

/*
 * One request, one line back: the daemon's answer (malloc'd), or NULL.
 * `params`: a load's NAME=VALUE words (a bare NAME is a boolean set).
 */
static char *ask(const char *socket_path, const char *op, const char *name, const char *const *params, int nparams)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (fd < 0 || strlen(socket_path) >= sizeof(sa.sun_path))
		return NULL;
	strcpy(sa.sun_path, socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return NULL;
	}
	char req[4096];
	int room = (int)sizeof(req) - 8;
	int n = snprintf(req, sizeof(req), "{\"id\":1,\"cmd\":\"module\",\"args\":{\"op\":\"%s\"", op);
	if (name) {
		n += snprintf(req + n, sizeof(req) - (size_t)n, ",\"name\":");
		n = json_str(req, n, room, name);
	}
	if (nparams > 0) {
		n += snprintf(req + n, sizeof(req) - (size_t)n, ",\"params\":{");
		for (int i = 0; i < nparams && n < room - 64; i++) {
			char key[256];
			const char *eq = strchr(params[i], '=');
			size_t klen = eq ? (size_t)(eq - params[i]) : strlen(params[i]);
			if (klen >= sizeof(key))
				klen = sizeof(key) - 1;
			memcpy(key, params[i], klen);
			key[klen] = 0;
			if (i)
				req[n++] = ',';
			n = json_str(req, n, room, key);
			req[n++] = ':';
			n = json_str(req, n, room, eq ? eq + 1 : "Y");
		}
		req[n++] = '}';
	}
	n += snprintf(req + n, sizeof(req) - (size_t)n, "}}\n");
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return NULL;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = 0;
		if (memchr(buf, '\n', len))
			break;
	}
	close(fd);
	buf[len] = 0;
	return len ? buf : (free(buf), NULL);
}

/* The JSON string value of "key" in an answer, unescaped (malloc'd), or NULL. */
static char *field(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	const char *p = strstr(json, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	char *out = malloc(strlen(p) + 1), *o = out;
	for (; *p && *p != '"'; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case 'r': *o++ = '\r'; break;
		case 'u': {
			unsigned c = 0;
			if (sscanf(p + 1, "%4x", &c) == 1)
				p += 4;
			*o++ = c < 0x80 ? (char)c : '?';
			break;
		}
		case 0: p--; break;
		default: *o++ = *p;
		}
	}
	*o = 0;
	return out;
}

/* lsmod's table from /proc/modules' lines: name size refs holders state addr. */
static void lsmod(const char *text)
{
	printf("Module                  Size  Used by\n");
	char *copy = strdup(text), *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[256] = "", size[64] = "", refs[64] = "", holders[1024] = "";
		if (sscanf(line, "%255s %63s %63s %1023s", name, size, refs, holders) < 3)
			continue;
		size_t hl = strlen(holders);
		if (hl && holders[hl - 1] == ',')
			holders[--hl] = 0;
		printf("%-19s %8s  %s%s%s\n", name, size, refs, hl && strcmp(holders, "-") ? " " : "", hl && strcmp(holders, "-") ? holders : "");
	}
	free(copy);
}

/* The name the kernel keeps a module by: a path's directory and .ko* dropped, '-' as '_'. */
static void kernel_name(const char *arg, char *out, size_t cap)
{
	const char *base = strrchr(arg, '/');
	base = base ? base + 1 : arg;
	snprintf(out, cap, "%s", base);
	char *ko = strstr(out, ".ko");
	if (ko && (ko[3] == 0 || (ko[3] == '.' && !strchr(ko + 4, '.'))))
		*ko = 0;
	for (char *p = out; *p; p++)
		if (*p == '-')
			*p = '_';
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	tool = argv[1];
	const char *release = "";
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--release") && i + 1 < argc)
			release = argv[++i];
	char **args = argv + (i < argc ? i + 1 : argc);
	int nargs = (int)(argv + argc - args);
	const char *sock = getenv("TRACEFS_EMU_CONTROL");
	if (!sock || !*sock) {
		err("no emulator daemon (TRACEFS_EMU_CONTROL unset)%s%s", "", "");
		return 1;
	}
	if (!strcmp(tool, "lsmod")) {
		char *ans = ask(sock, "list", NULL, NULL, 0);
		char *text = ans ? field(ans, "text") : NULL;
		if (!text) {
			err("ERROR: no answer from the emulator daemon%s%s", "", "");
			return 1;
		}
		lsmod(text);
		return 0;
	}
	int quiet = 0, remove = !strcmp(tool, "rmmod"), nwords = 0;
	const char *words[256];
	for (int a = 0; a < nargs; a++) {
		const char *s = args[a];
		if (s[0] != '-') {
			if (nwords < 256)
				words[nwords++] = s;
		} else if (!strcmp(s, "--quiet"))
			quiet = 1;
		else if (!strcmp(s, "--remove"))
			remove |= !strcmp(tool, "modprobe");
		else if (s[1] != '-') {
			quiet |= strchr(s, 'q') != NULL;
			remove |= !strcmp(tool, "modprobe") && strchr(s, 'r') != NULL;
		}
	}
	/* modprobe loads one module (the rest are its parameters) and removes several; insmod takes a path and parameters. */
	int ntargets = remove ? nwords : nwords > 0;
	if (!ntargets) {
		err("%s%s", !strcmp(tool, "insmod") ? "ERROR: missing filename." : !strcmp(tool, "rmmod") ? "ERROR: missing module name." : "ERROR: missing parameters. See -h.", "");
		return 1;
	}
	for (int t = 0; t < ntargets; t++) {
		const char *arg = words[t];
		char name[256];
		kernel_name(arg, name, sizeof(name));
		char *ans = remove ? ask(sock, "unload", name, NULL, 0) : ask(sock, "load", name, words + 1, nwords - 1);
		if (!ans) {
			err("ERROR: no answer from the emulator daemon%s%s", "", "");
			return 1;
		}
		if (strstr(ans, "\"ok\":true"))
			continue;
		char *code = field(ans, "errno");
		if (!code) {
			char *msg = field(ans, "error");
			err("ERROR: %s%s", msg ? msg : "failed", "");
			return 1;
		}
		if (!strcmp(tool, "modprobe") && !remove && !strcmp(code, "EEXIST"))
			continue; /* already loaded: nothing to do */
		if (quiet)
			return 1;
		if (!strcmp(tool, "insmod"))
			err("ERROR: could not insert module %s: %s", arg, !strcmp(code, "EEXIST") ? "File exists" : "No such file or directory");
		else if (remove && !strcmp(code, "EBUSY"))
			err("ERROR: Module %s is in use%s", name, "");
		else if (!strcmp(tool, "rmmod"))
			err("ERROR: Module %s is not currently loaded%s", name, "");
		else if (remove)
			err("FATAL: Module %s is not currently loaded%s", name, "");
		else {
			char where[512];
			snprintf(where, sizeof(where), "/lib/modules/%s", release);
			err("FATAL: Module %s not found in directory %s", arg, where);
		}
		return 1;
	}
	return 0;
}
