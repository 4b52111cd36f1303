/*
 * tracefs-emu's FUSE session: the kernel's requests are read from /dev/fuse
 * and answered on Node's event loop, through libfuse's low-level API.
 *
 * One thread does it all: the channel's fd is non-blocking and polled by
 * libuv; each request is decoded by libfuse and handed to one JS function
 * with its numbers in a shared Float64Array (no JS objects made per
 * request); JS answers whenever it is ready (a blocking read answers
 * later) through the reply functions, by the request's slot. Requests thus
 * reach JS in the order the kernel queued them, with no thread hand-off.
 *
 * Only the notices that invalidate or delete a directory entry are sent from a
 * thread of their own: the kernel takes the directory's lock for them,
 * which a request we have not answered yet may hold.
 *
 * Cached files (below) are answered here without JS; where the kernel offers
 * FUSE passthrough, their opens name a backing file the kernel then reads by
 * itself (passthrough.c).
 */
#define FUSE_USE_VERSION 26
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <node_api.h>
#include <uv.h>

#include "fuse_proto.h"
#include "passthrough.h"

/* What JS is told a request is (fuse_session.ts has the same list). */
enum op {
  OP_LOOKUP = 1,
  OP_FORGET,
  OP_GETATTR,
  OP_SETATTR,
  OP_OPENDIR,
  OP_READDIR,
  OP_RELEASEDIR,
  OP_OPEN,
  OP_READ,
  OP_WRITE,
  OP_RELEASE,
  OP_MKDIR,
  OP_RMDIR,
  OP_ACCESS,
  OP_STATFS,
  OP_POLL,
  OP_INTERRUPT,
};

/* Slots of the shared argument array. */
enum arg {
  A_SLOT, A_INO, A_PID, A_UID, A_GID, A_FH, A_FLAGS, A_SIZE, A_OFF, A_MODE,
  A_SET, A_ATTR_UID, A_ATTR_GID, A_ATIME, A_MTIME, A_INTERRUPTED,
  /* Set by JS: which opens of cached files may be answered here now (enum gate). */
  A_GATE,
  /* Set by JS, per emulated CPU: the pid of the task running there if its opens may be answered here under GATE_CURRENT, else 0. */
  A_CURRENT,
  A_NARGS = A_CURRENT + 64
};

/*
 * GATE_ALL: nothing in the emulated kernel can see a system call on the
 * mount now. GATE_CURRENT: only the scheduler can, and a task already
 * running on its CPU makes no switch by calling: its opens are answered here.
 */
enum gate { GATE_NONE, GATE_ALL, GATE_CURRENT };

/* Attributes JS puts in the shared array before reply_attr / reply_entry. */
enum attr { R_INO, R_MODE, R_NLINK, R_UID, R_GID, R_SIZE, R_ATIME, R_MTIME, R_CTIME, R_NODEID, R_ENTRY_TIMEOUT, R_ATTR_TIMEOUT, R_NATTR };

#define MAX_FORGETS 256

/*
 * Cached files: what JS said a file shows while it stays unchanged, with
 * its attributes. While nothing in the emulated kernel can see a system
 * call on the mount make a difference (A_GATE), a read-only open of such a
 * file, its reads, fstat and release are answered here without a trip to
 * JS; JS drops an entry as soon as the file would show something else.
 */
typedef struct snap {
  uint32_t refs;
  /* What an open of it holds (an instance, kept from removal while its files are open): counted in `gopens`; 0 for nothing. */
  uint32_t group;
  size_t len;
  double attrs[R_NATTR];
  char data[];
} snap_t;

typedef struct cached {
  struct cached *next;
  fuse_ino_t ino;
  snap_t *snap;
} cached_t;

#define CACHE_BUCKETS 4096
/* File handles of files opened here: above every handle JS gives out, and exact in a double. */
#define NATIVE_FH (1ull << 50)

/* Requests answered here, by kind (nativeCounts()). */
/* N_PASSTHROUGH: opens among N_OPEN whose reads the kernel did itself from a backing file (passthrough.c). */
enum native_count { N_OPEN, N_READ, N_RELEASE, N_GETATTR, N_PASSTHROUGH, N_COUNTS };

typedef struct notice {
  struct notice *next;
  fuse_ino_t parent;
  /* 0: inval_entry; else notify_delete of this child. */
  fuse_ino_t child;
  size_t len;
  char name[];
} notice_t;

typedef struct session {
  napi_env env;
  napi_ref self;
  napi_ref dispatch;
  napi_ref on_end;
  napi_ref on_notices;
  napi_ref args_ref;
  double *args;
  double *attrs;
  napi_ref attrs_ref;
  double *forgets;
  napi_ref forgets_ref;
  napi_async_context async;

  struct fuse_chan *ch;
  /* The channel FUSE_INIT is answered through: it asks for passthrough in libfuse's reply. */
  struct fuse_chan *init_ch;
  struct fuse_session *se;
  passthrough_t *pt;
  char *mountpoint;
  uv_poll_t poll;
  int polling;
  int ended;
  char *buf;
  size_t bufsize;

  /* Pending requests by slot; free slots are chained through `next_free`. */
  fuse_req_t *reqs;
  uint32_t *next_free;
  uint8_t *interrupted;
  /* The node of each pending open (its reply may have to name the node's backing file). */
  fuse_ino_t *slot_ino;
  uint32_t cap;
  uint32_t free_head;

  /* Poll handles by file handle. */
  struct fuse_pollhandle **polls;
  uint32_t npolls;

  /* inval_entry notices, sent by their own thread. */
  pthread_t notifier;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  notice_t *head, *tail;
  int stop;
  uint64_t queued, sent;
  uv_async_t notices_done;
  int notifier_started;

  /* Cached files by node id, and the snapshots open through native handles (free slots chained). */
  cached_t *cache[CACHE_BUCKETS];
  snap_t **nfh;
  uint32_t *nfh_next;
  /* Whether each native handle's open went through a backing file (pt_close() at its release). */
  uint8_t *nfh_pt;
  uint32_t nfh_cap, nfh_free;
  double ncounts[N_COUNTS];
  /* Files open through native handles, by group (openCount()). */
  uint32_t *gopens;
  uint32_t ngroups;
} session_t;

#define NAPI_OK(call)                                        \
  do {                                                       \
    if ((call) != napi_ok) {                                 \
      napi_throw_error(env, NULL, "tracefs_fuse: " #call);   \
      return NULL;                                           \
    }                                                        \
  } while (0)

/* ---------------------------------------------------------------- slots */

static uint32_t slot_take(session_t *s, fuse_req_t req) {
  if (s->free_head == UINT32_MAX) {
    uint32_t cap = s->cap ? s->cap * 2 : 64;
    s->reqs = realloc(s->reqs, cap * sizeof *s->reqs);
    s->next_free = realloc(s->next_free, cap * sizeof *s->next_free);
    s->interrupted = realloc(s->interrupted, cap);
    s->slot_ino = realloc(s->slot_ino, cap * sizeof *s->slot_ino);
    for (uint32_t i = s->cap; i < cap; i++) {
      s->reqs[i] = NULL;
      s->next_free[i] = i + 1 < cap ? i + 1 : UINT32_MAX;
    }
    s->free_head = s->cap;
    s->cap = cap;
  }
  uint32_t i = s->free_head;
  s->free_head = s->next_free[i];
  s->reqs[i] = req;
  s->interrupted[i] = 0;
  s->slot_ino[i] = 0;
  return i;
}

static fuse_req_t slot_give(session_t *s, uint32_t i) {
  if (i >= s->cap || !s->reqs[i]) return NULL;
  fuse_req_t req = s->reqs[i];
  s->reqs[i] = NULL;
  s->next_free[i] = s->free_head;
  s->free_head = i;
  return req;
}

/* ---------------------------------------------------------------- cached files */

static void snap_put(snap_t *sn) {
  if (sn && --sn->refs == 0) free(sn);
}

static cached_t **cache_slot(session_t *s, fuse_ino_t ino) {
  cached_t **p = &s->cache[ino % CACHE_BUCKETS];
  while (*p && (*p)->ino != ino) p = &(*p)->next;
  return p;
}

static snap_t *cache_get(session_t *s, fuse_ino_t ino) {
  cached_t *c = *cache_slot(s, ino);
  return c ? c->snap : NULL;
}

static void cache_drop(session_t *s, fuse_ino_t ino) {
  cached_t **p = cache_slot(s, ino);
  cached_t *c = *p;
  if (!c) return;
  *p = c->next;
  snap_put(c->snap);
  free(c);
}

static void cache_set(session_t *s, fuse_ino_t ino, snap_t *sn) {
  cached_t **p = cache_slot(s, ino);
  if (*p) {
    snap_put((*p)->snap);
    (*p)->snap = sn;
    return;
  }
  cached_t *c = malloc(sizeof *c);
  c->next = NULL;
  c->ino = ino;
  c->snap = sn;
  *p = c;
}

static void group_count(session_t *s, uint32_t group, int delta) {
  if (!group) return;
  if (group >= s->ngroups) {
    uint32_t n = s->ngroups ? s->ngroups : 16;
    while (n <= group) n *= 2;
    s->gopens = realloc(s->gopens, n * sizeof *s->gopens);
    memset(s->gopens + s->ngroups, 0, (n - s->ngroups) * sizeof *s->gopens);
    s->ngroups = n;
  }
  s->gopens[group] += delta;
}

static uint32_t nfh_take(session_t *s, snap_t *sn) {
  if (s->nfh_free == s->nfh_cap) {
    uint32_t cap = s->nfh_cap ? s->nfh_cap * 2 : 64;
    s->nfh = realloc(s->nfh, cap * sizeof *s->nfh);
    s->nfh_next = realloc(s->nfh_next, cap * sizeof *s->nfh_next);
    s->nfh_pt = realloc(s->nfh_pt, cap);
    for (uint32_t i = s->nfh_cap; i < cap; i++) {
      s->nfh[i] = NULL;
      s->nfh_pt[i] = 0;
      s->nfh_next[i] = i + 1;
    }
    s->nfh_free = s->nfh_cap;
    s->nfh_cap = cap;
  }
  uint32_t i = s->nfh_free;
  s->nfh_free = s->nfh_next[i];
  s->nfh[i] = sn;
  sn->refs++;
  group_count(s, sn->group, 1);
  return i;
}

static snap_t *nfh_get(session_t *s, uint64_t fh) {
  if (!(fh & NATIVE_FH)) return NULL;
  uint64_t i = fh & ~NATIVE_FH;
  return i < s->nfh_cap ? s->nfh[i] : NULL;
}

static void nfh_give(session_t *s, uint64_t fh, fuse_ino_t ino) {
  uint32_t i = (uint32_t)(fh & ~NATIVE_FH);
  if (i >= s->nfh_cap || !s->nfh[i]) return;
  if (s->nfh_pt[i]) pt_close(s->pt, ino);
  s->nfh_pt[i] = 0;
  group_count(s, s->nfh[i]->group, -1);
  snap_put(s->nfh[i]);
  s->nfh[i] = NULL;
  s->nfh_next[i] = s->nfh_free;
  s->nfh_free = i;
}

static void fill_stat(const double *a, struct stat *st);

/* ---------------------------------------------------------------- to JS */

static void call_js(session_t *s, napi_ref fn_ref, int argc, napi_value *argv) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, self, res;
  if (napi_get_reference_value(env, fn_ref, &fn) == napi_ok && napi_get_reference_value(env, s->self, &self) == napi_ok) {
    napi_make_callback(env, s->async, self, fn, argc, argv, &res);
  }
  napi_close_handle_scope(env, scope);
}

/* Hands a request to JS: `op`, its slot and caller in the args array, and an optional name or data. */
static void dispatch(session_t *s, fuse_req_t req, int op, const char *name, const void *data, size_t len) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  const struct fuse_ctx *ctx = fuse_req_ctx(req);
  s->args[A_PID] = ctx->pid;
  s->args[A_UID] = ctx->uid;
  s->args[A_GID] = ctx->gid;
  napi_value argv[3];
  napi_create_uint32(env, op, &argv[0]);
  if (name) napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &argv[1]);
  else napi_get_undefined(env, &argv[1]);
  if (data) {
    void *copy;
    napi_create_buffer_copy(env, len, data, &copy, &argv[2]);
  } else napi_get_undefined(env, &argv[2]);
  napi_value fn, self, res;
  if (napi_get_reference_value(env, s->dispatch, &fn) == napi_ok && napi_get_reference_value(env, s->self, &self) == napi_ok) {
    napi_make_callback(env, s->async, self, fn, 3, argv, &res);
  }
  napi_close_handle_scope(env, scope);
}

static session_t *sess(fuse_req_t req) { return fuse_req_userdata(req); }

static void on_interrupt(fuse_req_t req, void *data) {
  session_t *s = sess(req);
  uint32_t slot = (uint32_t)(uintptr_t)data;
  if (slot >= s->cap || s->reqs[slot] != req) return;
  s->interrupted[slot] = 1;
  s->args[A_SLOT] = slot;
  napi_handle_scope scope;
  if (napi_open_handle_scope(s->env, &scope) != napi_ok) return;
  napi_value argv[3];
  napi_create_uint32(s->env, OP_INTERRUPT, &argv[0]);
  napi_get_undefined(s->env, &argv[1]);
  napi_get_undefined(s->env, &argv[2]);
  call_js(s, s->dispatch, 3, argv);
  napi_close_handle_scope(s->env, scope);
}

/* A request that may wait: the kernel may interrupt it (its caller got a signal). */
static uint32_t begin_waitable(session_t *s, fuse_req_t req) {
  uint32_t slot = slot_take(s, req);
  s->args[A_SLOT] = slot;
  s->args[A_INTERRUPTED] = 0;
  fuse_req_interrupt_func(req, on_interrupt, (void *)(uintptr_t)slot);
  s->args[A_SLOT] = slot;
  s->args[A_INTERRUPTED] = s->interrupted[slot];
  return slot;
}

static uint32_t begin(session_t *s, fuse_req_t req) {
  uint32_t slot = slot_take(s, req);
  s->args[A_SLOT] = slot;
  s->args[A_INTERRUPTED] = 0;
  return slot;
}

/* ---------------------------------------------------------------- operations */

static void ll_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  conn->want |= FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_BIG_WRITES;
  conn->max_write = 131072;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = parent;
  dispatch(s, req, OP_LOOKUP, name, NULL, 0);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  session_t *s = sess(req);
  while (count) {
    size_t n = count > MAX_FORGETS ? MAX_FORGETS : count;
    for (size_t i = 0; i < n; i++) {
      s->forgets[2 * i] = forgets[i].ino;
      s->forgets[2 * i + 1] = forgets[i].nlookup;
    }
    s->args[A_SIZE] = n;
    s->args[A_SLOT] = -1;
    dispatch(s, req, OP_FORGET, NULL, NULL, 0);
    forgets += n;
    count -= n;
  }
  fuse_reply_none(req);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, unsigned long nlookup) {
  struct fuse_forget_data one = { .ino = ino, .nlookup = nlookup };
  ll_forget_multi(req, 1, &one);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  snap_t *sn = fi ? nfh_get(s, fi->fh) : NULL;
  if (!sn) sn = cache_get(s, ino);
  if (sn) {
    struct stat st;
    fill_stat(sn->attrs, &st);
    s->ncounts[N_GETATTR]++;
    fuse_reply_attr(req, &st, sn->attrs[R_ATTR_TIMEOUT]);
    return;
  }
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi ? (double)fi->fh : -1;
  dispatch(s, req, OP_GETATTR, NULL, NULL, 0);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi ? (double)fi->fh : -1;
  s->args[A_SET] = to_set;
  s->args[A_MODE] = attr->st_mode;
  s->args[A_ATTR_UID] = (to_set & FUSE_SET_ATTR_UID) ? (double)attr->st_uid : -1;
  s->args[A_ATTR_GID] = (to_set & FUSE_SET_ATTR_GID) ? (double)attr->st_gid : -1;
  s->args[A_SIZE] = attr->st_size;
  s->args[A_ATIME] = attr->st_atim.tv_sec * 1e3 + attr->st_atim.tv_nsec / 1e6;
  s->args[A_MTIME] = attr->st_mtim.tv_sec * 1e3 + attr->st_mtim.tv_nsec / 1e6;
  dispatch(s, req, OP_SETATTR, NULL, NULL, 0);
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FLAGS] = fi->flags;
  dispatch(s, req, OP_OPENDIR, NULL, NULL, 0);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  s->args[A_SIZE] = size;
  s->args[A_OFF] = off;
  dispatch(s, req, OP_READDIR, NULL, NULL, 0);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  dispatch(s, req, OP_RELEASEDIR, NULL, NULL, 0);
}

/* Whether the gate JS set lets an open by the caller of `req` be answered here. */
static int gate_open(session_t *s, fuse_req_t req) {
  double gate = s->args[A_GATE];
  if (gate == GATE_ALL) return 1;
  if (gate != GATE_CURRENT) return 0;
  double pid = fuse_req_ctx(req)->pid;
  for (int i = A_CURRENT; i < A_NARGS; i++)
    if (s->args[i] == pid) return 1;
  return 0;
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  snap_t *sn = (fi->flags & O_ACCMODE) == O_RDONLY && !(fi->flags & O_TRUNC) && gate_open(s, req) ? cache_get(s, ino) : NULL;
  if (sn) {
    uint32_t i = nfh_take(s, sn);
    fi->fh = NATIVE_FH | i;
    s->ncounts[N_OPEN]++;
    proto_open_out_t o = { .fh = fi->fh };
    int res;
    if (!(fi->flags & O_DIRECT) && pt_open_snapshot(s->pt, ino, sn->data, sn->len, &o)) {
      s->nfh_pt[i] = 1;
      if (!(o.open_flags & PROTO_FOPEN_DIRECT_IO)) s->ncounts[N_PASSTHROUGH]++;
      struct iovec iov = { &o, sizeof o };
      res = fuse_reply_iov(req, &iov, 1);
    } else {
      fi->direct_io = 1;
      fi->keep_cache = 0;
      fi->nonseekable = 0;
      res = fuse_reply_open(req, fi);
    }
    /* ENOENT: the caller gave up meanwhile, and the kernel will send no release for it. */
    if (res == -ENOENT) nfh_give(s, fi->fh, ino);
    return;
  }
  s->slot_ino[begin_waitable(s, req)] = ino;
  s->args[A_INO] = ino;
  s->args[A_FLAGS] = fi->flags;
  dispatch(s, req, OP_OPEN, NULL, NULL, 0);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  snap_t *sn = nfh_get(s, fi->fh);
  if (sn) {
    size_t from = off < 0 ? 0 : (size_t)off > sn->len ? sn->len : (size_t)off;
    size_t n = sn->len - from < size ? sn->len - from : size;
    s->ncounts[N_READ]++;
    fuse_reply_buf(req, sn->data + from, n);
    return;
  }
  begin_waitable(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  s->args[A_FLAGS] = fi->flags;
  s->args[A_SIZE] = size;
  s->args[A_OFF] = off;
  dispatch(s, req, OP_READ, NULL, NULL, 0);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  if (fi->fh & NATIVE_FH) {
    fuse_reply_err(req, EBADF);
    return;
  }
  begin_waitable(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  s->args[A_FLAGS] = fi->flags;
  s->args[A_SIZE] = size;
  s->args[A_OFF] = off;
  dispatch(s, req, OP_WRITE, NULL, buf, size);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  session_t *s = sess(req);
  if (fi->fh & NATIVE_FH) {
    nfh_give(s, fi->fh, ino);
    s->ncounts[N_RELEASE]++;
    fuse_reply_err(req, 0);
    return;
  }
  pt_release_fh(s->pt, fi->fh);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  s->args[A_FLAGS] = fi->flags;
  dispatch(s, req, OP_RELEASE, NULL, NULL, 0);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = parent;
  s->args[A_MODE] = mode;
  dispatch(s, req, OP_MKDIR, name, NULL, 0);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = parent;
  dispatch(s, req, OP_RMDIR, name, NULL, 0);
}

static void ll_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_MODE] = mask;
  dispatch(s, req, OP_ACCESS, NULL, NULL, 0);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino) {
  session_t *s = sess(req);
  begin(s, req);
  s->args[A_INO] = ino;
  dispatch(s, req, OP_STATFS, NULL, NULL, 0);
}

static void ll_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
  session_t *s = sess(req);
  if (fi->fh & NATIVE_FH) {
    /* A cached file has no poll of its own: always ready, as tracefs answers for such files. */
    if (ph) fuse_pollhandle_destroy(ph);
    fuse_reply_poll(req, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
    return;
  }
  if (ph) {
    uint64_t fh = fi->fh;
    if (fh >= s->npolls) {
      uint32_t n = s->npolls ? s->npolls : 64;
      while (n <= fh) n *= 2;
      s->polls = realloc(s->polls, n * sizeof *s->polls);
      memset(s->polls + s->npolls, 0, (n - s->npolls) * sizeof *s->polls);
      s->npolls = n;
    }
    if (s->polls[fh]) fuse_pollhandle_destroy(s->polls[fh]);
    s->polls[fh] = ph;
  }
  begin(s, req);
  s->args[A_INO] = ino;
  s->args[A_FH] = fi->fh;
  dispatch(s, req, OP_POLL, NULL, NULL, 0);
}

/* What tracefs refuses whatever the file: answered here, without a trip to JS. */
static void ll_eperm_entry(fuse_req_t req, fuse_ino_t parent, const char *name) {
  (void)parent; (void)name;
  fuse_reply_err(req, EPERM);
}
static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  (void)parent; (void)name; (void)mode; (void)rdev;
  fuse_reply_err(req, EPERM);
}
static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  (void)link; (void)parent; (void)name;
  fuse_reply_err(req, EPERM);
}
static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname) {
  (void)parent; (void)name; (void)newparent; (void)newname;
  fuse_reply_err(req, EPERM);
}
static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  (void)ino; (void)newparent; (void)newname;
  fuse_reply_err(req, EPERM);
}
static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi) {
  (void)parent; (void)name; (void)mode; (void)fi;
  fuse_reply_err(req, EACCES);
}

static const struct fuse_lowlevel_ops ops = {
  .init = ll_init,
  .lookup = ll_lookup,
  .forget = ll_forget,
  .forget_multi = ll_forget_multi,
  .getattr = ll_getattr,
  .setattr = ll_setattr,
  .mknod = ll_mknod,
  .mkdir = ll_mkdir,
  .unlink = ll_eperm_entry,
  .rmdir = ll_rmdir,
  .symlink = ll_symlink,
  .rename = ll_rename,
  .link = ll_link,
  .open = ll_open,
  .read = ll_read,
  .write = ll_write,
  .release = ll_release,
  .opendir = ll_opendir,
  .readdir = ll_readdir,
  .releasedir = ll_releasedir,
  .statfs = ll_statfs,
  .access = ll_access,
  .create = ll_create,
  .poll = ll_poll,
};

/* ---------------------------------------------------------------- the loop */

static void end_session(session_t *s) {
  if (s->ended) return;
  s->ended = 1;
  if (s->polling) {
    uv_poll_stop(&s->poll);
    s->polling = 0;
  }
  napi_handle_scope scope;
  if (napi_open_handle_scope(s->env, &scope) != napi_ok) return;
  call_js(s, s->on_end, 0, NULL);
  napi_close_handle_scope(s->env, scope);
}

static void on_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  session_t *s = h->data;
  if (status < 0) {
    end_session(s);
    return;
  }
  /* A bounded batch, so that timers and other I/O get their turn under load. */
  for (int i = 0; i < 64 && !s->ended; i++) {
    struct fuse_chan *ch = s->ch;
    int res = fuse_chan_recv(&ch, s->buf, s->bufsize);
    if (res == -EAGAIN || res == -EINTR) return;
    if (res <= 0 || fuse_session_exited(s->se)) {
      end_session(s);
      return;
    }
    /* A FUSE_INIT that offers passthrough: libfuse answers it through a channel that asks for it. */
    uint32_t opcode;
    memcpy(&opcode, s->buf + 4, 4);
    if (opcode == PROTO_FUSE_INIT && s->init_ch && (size_t)res > PROTO_IN_HEADER_SIZE && pt_offered(s->buf + PROTO_IN_HEADER_SIZE, (size_t)res - PROTO_IN_HEADER_SIZE)) ch = s->init_ch;
    fuse_session_process(s->se, s->buf, res, ch);
  }
}

/*
 * libfuse 2 knows no INIT flags past 32 bits: its answer to an INIT that
 * offers passthrough is sent through this channel's send, which asks for it
 * (and for nothing else).
 */
static int init_send(struct fuse_chan *ch, const struct iovec iov[], size_t count) {
  session_t *s = fuse_chan_data(ch);
  /* fuse_out_header (len, error, unique), then fuse_init_out, which libfuse sends in its 24-byte form. */
  struct { uint32_t len; int32_t error; uint64_t unique; } head;
  char out[64];
  if (count == 2 && iov[0].iov_len == sizeof head && iov[1].iov_len <= sizeof out) {
    memcpy(&head, iov[0].iov_base, sizeof head);
    memset(out, 0, sizeof out);
    memcpy(out, iov[1].iov_base, iov[1].iov_len);
    pt_ask(s->pt, out, sizeof out);
    head.len = sizeof head + sizeof out;
    struct iovec v[2] = { { &head, sizeof head }, { out, sizeof out } };
    ssize_t n = writev(fuse_chan_fd(ch), v, 2);
    return n < 0 ? -errno : 0;
  }
  ssize_t n = writev(fuse_chan_fd(ch), iov, (int)count);
  return n < 0 ? -errno : 0;
}

static int init_receive(struct fuse_chan **chp, char *buf, size_t size) {
  (void)chp; (void)buf; (void)size;
  return -EIO;
}

static struct fuse_chan_ops init_ops = { .receive = init_receive, .send = init_send };

/* ---------------------------------------------------------------- notices */

static void *notifier_main(void *arg) {
  session_t *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head && !s->stop) pthread_cond_wait(&s->cond, &s->lock);
    if (!s->head && s->stop) break;
    notice_t *n = s->head;
    s->head = n->next;
    if (!s->head) s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    /* ENOENT (not cached) and the like are expected: the kernel forgot it first. */
    if (n->child) fuse_lowlevel_notify_delete(s->ch, n->parent, n->child, n->name, n->len);
    else fuse_lowlevel_notify_inval_entry(s->ch, n->parent, n->name, n->len);
    free(n);
    pthread_mutex_lock(&s->lock);
    s->sent++;
    if (!s->head) uv_async_send(&s->notices_done);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

static void on_notices_done(uv_async_t *h) {
  session_t *s = h->data;
  napi_handle_scope scope;
  if (napi_open_handle_scope(s->env, &scope) != napi_ok) return;
  napi_value argv[1];
  pthread_mutex_lock(&s->lock);
  double sent = (double)s->sent;
  pthread_mutex_unlock(&s->lock);
  napi_create_double(s->env, sent, &argv[0]);
  call_js(s, s->on_notices, 1, argv);
  napi_close_handle_scope(s->env, scope);
}

/* ---------------------------------------------------------------- JS API */

static session_t *unwrap(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv) {
  napi_value self;
  void *data;
  if (napi_get_cb_info(env, info, argc, argv, &self, NULL) != napi_ok) return NULL;
  if (napi_unwrap(env, self, &data) != napi_ok) return NULL;
  return data;
}

static int32_t i32(napi_env env, napi_value v) {
  int32_t x = 0;
  napi_get_value_int32(env, v, &x);
  return x;
}

static double f64(napi_env env, napi_value v) {
  double x = 0;
  napi_get_value_double(env, v, &x);
  return x;
}

static fuse_req_t req_of(napi_env env, session_t *s, napi_value slot) {
  if (!s) return NULL;
  return slot_give(s, (uint32_t)i32(env, slot));
}

static void fill_stat(const double *a, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_ino = (ino_t)a[R_INO];
  st->st_mode = (mode_t)a[R_MODE];
  st->st_nlink = (nlink_t)a[R_NLINK];
  st->st_uid = (uid_t)a[R_UID];
  st->st_gid = (gid_t)a[R_GID];
  st->st_size = (off_t)a[R_SIZE];
  st->st_blksize = 4096;
  double t[3] = { a[R_ATIME], a[R_MTIME], a[R_CTIME] };
  struct timespec *ts[3] = { &st->st_atim, &st->st_mtim, &st->st_ctim };
  for (int i = 0; i < 3; i++) {
    ts[i]->tv_sec = (time_t)(t[i] / 1e3);
    ts[i]->tv_nsec = (long)((t[i] - ts[i]->tv_sec * 1e3) * 1e6);
  }
}

/* A reply function's start: its arguments, and the request of the slot in the first (none: answered already). */
#define REPLY_ARGS(n)                                \
  size_t argc = (n);                                 \
  napi_value argv[(n)];                              \
  session_t *s = unwrap(env, info, &argc, argv);     \
  fuse_req_t req = req_of(env, s, argv[0]);          \
  if (!req) return NULL

/* replyErr(slot, errno) */
static napi_value js_reply_err(napi_env env, napi_callback_info info) {
  REPLY_ARGS(2);
  fuse_reply_err(req, i32(env, argv[1]));
  return NULL;
}

/* replyEntry(slot): the entry in the attrs array. */
static napi_value js_reply_entry(napi_env env, napi_callback_info info) {
  REPLY_ARGS(1);
  struct fuse_entry_param e;
  memset(&e, 0, sizeof e);
  fill_stat(s->attrs, &e.attr);
  e.ino = (fuse_ino_t)s->attrs[R_NODEID];
  e.generation = 1;
  e.entry_timeout = s->attrs[R_ENTRY_TIMEOUT];
  e.attr_timeout = s->attrs[R_ATTR_TIMEOUT];
  fuse_reply_entry(req, &e);
  return NULL;
}

/* replyAttr(slot): the attributes in the attrs array. */
static napi_value js_reply_attr(napi_env env, napi_callback_info info) {
  REPLY_ARGS(1);
  struct stat st;
  fill_stat(s->attrs, &st);
  fuse_reply_attr(req, &st, s->attrs[R_ATTR_TIMEOUT]);
  return NULL;
}

/* replyOpen(slot, fh, directIo, keepCache, nonseekable[, cacheDir]) */
static napi_value js_reply_open(napi_env env, napi_callback_info info) {
  REPLY_ARGS(6);
  uint32_t slot = (uint32_t)f64(env, argv[0]);
  if (argc > 5 && i32(env, argv[5])) {
    /* A directory whose listing the kernel keeps from one opendir to the next until told otherwise (libfuse 2 has no flag for it). */
    proto_open_out_t o = { .fh = (uint64_t)f64(env, argv[1]), .open_flags = PROTO_FOPEN_KEEP_CACHE | PROTO_FOPEN_CACHE_DIR };
    struct iovec iov = { &o, sizeof o };
    napi_value r;
    napi_get_boolean(env, fuse_reply_iov(req, &iov, 1) != -ENOENT, &r);
    return r;
  }
  struct fuse_file_info fi;
  memset(&fi, 0, sizeof fi);
  fi.fh = (uint64_t)f64(env, argv[1]);
  fi.direct_io = i32(env, argv[2]) != 0;
  fi.keep_cache = i32(env, argv[3]) != 0;
  fi.nonseekable = i32(env, argv[4]) != 0;
  int res;
  proto_open_out_t o = { .fh = fi.fh };
  /* A node with a passthrough open (a cached file): every open of it names the same backing file. */
  if (!fi.keep_cache && !fi.nonseekable && slot < s->cap && pt_open_other(s->pt, s->slot_ino[slot], fi.fh, &o)) {
    struct iovec iov = { &o, sizeof o };
    res = fuse_reply_iov(req, &iov, 1);
    if (res == -ENOENT) pt_release_fh(s->pt, fi.fh);
  } else res = fuse_reply_open(req, &fi);
  /* ENOENT: the caller gave up meanwhile, and the kernel will send no release for it. */
  napi_value r;
  napi_get_boolean(env, res != -ENOENT, &r);
  return r;
}

/* replyData(slot, buffer, length) */
static napi_value js_reply_data(napi_env env, napi_callback_info info) {
  REPLY_ARGS(3);
  void *data = NULL;
  size_t len = 0;
  napi_get_buffer_info(env, argv[1], &data, &len);
  int32_t n = i32(env, argv[2]);
  if (n >= 0 && (size_t)n < len) len = (size_t)n;
  fuse_reply_buf(req, data, len);
  return NULL;
}

/* replyWrite(slot, count) */
static napi_value js_reply_write(napi_env env, napi_callback_info info) {
  REPLY_ARGS(2);
  fuse_reply_write(req, (size_t)f64(env, argv[1]));
  return NULL;
}

/* replyPoll(slot, revents) */
static napi_value js_reply_poll(napi_env env, napi_callback_info info) {
  REPLY_ARGS(2);
  fuse_reply_poll(req, (unsigned)i32(env, argv[1]));
  return NULL;
}

/* replyStatfs(slot, bsize, namemax) */
static napi_value js_reply_statfs(napi_env env, napi_callback_info info) {
  REPLY_ARGS(3);
  struct statvfs sv;
  memset(&sv, 0, sizeof sv);
  sv.f_bsize = sv.f_frsize = (unsigned long)i32(env, argv[1]);
  sv.f_namemax = (unsigned long)i32(env, argv[2]);
  fuse_reply_statfs(req, &sv);
  return NULL;
}

/*
 * replyDir(slot, names, inos, modes, offset, size): the entries from
 * `offset` on that fit in `size` bytes (offsets are indexes + 1).
 */
static napi_value js_reply_dir(napi_env env, napi_callback_info info) {
  REPLY_ARGS(6);
  uint32_t count = 0;
  napi_get_array_length(env, argv[1], &count);
  double *inos = NULL;
  int32_t *modes = NULL;
  size_t ilen = 0, mlen = 0;
  napi_typedarray_type t;
  napi_value ab;
  size_t boff;
  napi_get_typedarray_info(env, argv[2], &t, &ilen, (void **)&inos, &ab, &boff);
  napi_get_typedarray_info(env, argv[3], &t, &mlen, (void **)&modes, &ab, &boff);
  size_t off = (size_t)f64(env, argv[4]);
  size_t size = (size_t)f64(env, argv[5]);
  char *buf = malloc(size);
  size_t used = 0;
  char name[1024];
  for (size_t i = off; i < count && i < ilen && i < mlen; i++) {
    napi_value v;
    size_t nlen = 0;
    if (napi_get_element(env, argv[1], (uint32_t)i, &v) != napi_ok) break;
    if (napi_get_value_string_utf8(env, v, name, sizeof name, &nlen) != napi_ok) break;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = (ino_t)inos[i];
    st.st_mode = (mode_t)modes[i];
    size_t need = fuse_add_direntry(req, NULL, 0, name, NULL, 0);
    if (used + need > size) break;
    fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)(i + 1));
    used += need;
  }
  fuse_reply_buf(req, buf, used);
  free(buf);
  return NULL;
}

/* cacheFile(nodeid, buffer[, group]): what the file shows while it stays unchanged, with the attributes in the attrs array; an open of it counts in `group` (openCount). */
static napi_value js_cache_file(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  session_t *s = unwrap(env, info, &argc, argv);
  void *data = NULL;
  size_t len = 0;
  if (!s || napi_get_buffer_info(env, argv[1], &data, &len) != napi_ok) return NULL;
  snap_t *sn = malloc(sizeof *sn + len);
  sn->refs = 1;
  sn->group = argc > 2 ? (uint32_t)f64(env, argv[2]) : 0;
  sn->len = len;
  memcpy(sn->attrs, s->attrs, sizeof sn->attrs);
  memcpy(sn->data, data, len);
  cache_set(s, (fuse_ino_t)f64(env, argv[0]), sn);
  return NULL;
}

/* uncache(nodeid): the file may show something else now (files open through the cache keep what they had). */
static napi_value js_uncache(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  session_t *s = unwrap(env, info, &argc, argv);
  if (s) cache_drop(s, (fuse_ino_t)f64(env, argv[0]));
  return NULL;
}

/* openCount(group): files of that group open through native handles now. */
static napi_value js_open_count(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  session_t *s = unwrap(env, info, &argc, argv);
  uint32_t g = s ? (uint32_t)f64(env, argv[0]) : 0;
  napi_value v;
  napi_create_uint32(env, s && g && g < s->ngroups ? s->gopens[g] : 0, &v);
  return v;
}

/* nativeCounts(): [open, read, release, getattr] answered from cached files so far. */
static napi_value js_native_counts(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  session_t *s = unwrap(env, info, &argc, NULL);
  napi_value arr, v;
  napi_create_array_with_length(env, N_COUNTS, &arr);
  for (uint32_t i = 0; i < N_COUNTS; i++) {
    napi_create_double(env, s ? s->ncounts[i] : 0, &v);
    napi_set_element(env, arr, i, v);
  }
  return arr;
}

/* notifyPoll(fh): wakes the pollers of an open file; false if none wait. */
static napi_value js_notify_poll(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  session_t *s = unwrap(env, info, &argc, argv);
  napi_value r;
  int woke = 0;
  uint32_t fh = (uint32_t)f64(env, argv[0]);
  if (s && !s->ended && fh < s->npolls && s->polls[fh]) {
    fuse_lowlevel_notify_poll(s->polls[fh]);
    fuse_pollhandle_destroy(s->polls[fh]);
    s->polls[fh] = NULL;
    woke = 1;
  }
  napi_get_boolean(env, woke, &r);
  return r;
}

/* forgetPoll(fh): the file is gone, so is its poll handle. */
static napi_value js_forget_poll(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  session_t *s = unwrap(env, info, &argc, argv);
  uint32_t fh = (uint32_t)f64(env, argv[0]);
  if (s && fh < s->npolls && s->polls[fh]) {
    fuse_pollhandle_destroy(s->polls[fh]);
    s->polls[fh] = NULL;
  }
  return NULL;
}

/* Queues a notice for the notifier thread; returns its number. */
static napi_value queue_notice(napi_env env, session_t *s, napi_value parent, napi_value child, napi_value name) {
  napi_value r;
  if (!s || s->ended) {
    napi_create_double(env, -1, &r);
    return r;
  }
  size_t len = 0;
  napi_get_value_string_utf8(env, name, NULL, 0, &len);
  notice_t *n = malloc(sizeof *n + len + 1);
  n->next = NULL;
  n->parent = (fuse_ino_t)f64(env, parent);
  n->child = child ? (fuse_ino_t)f64(env, child) : 0;
  n->len = len;
  napi_get_value_string_utf8(env, name, n->name, len + 1, &len);
  pthread_mutex_lock(&s->lock);
  if (s->tail) s->tail->next = n;
  else s->head = n;
  s->tail = n;
  double q = (double)++s->queued;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
  napi_create_double(env, q, &r);
  return r;
}

/* invalEntry(parent, name): the entry's dentry goes. */
static napi_value js_inval_entry(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  session_t *s = unwrap(env, info, &argc, argv);
  return queue_notice(env, s, argv[0], NULL, argv[1]);
}

/* notifyDelete(parent, child, name): the entry goes and the child's inode is unlinked (forgotten once unused). */
static napi_value js_notify_delete(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  session_t *s = unwrap(env, info, &argc, argv);
  return queue_notice(env, s, argv[0], argv[1], argv[2]);
}

/* invalInode(nodeid[, pages]): sent at once (the kernel takes no lock for it); with pages, what it cached of the contents (a directory's listing) goes too; 0 or -errno. */
static napi_value js_inval_inode(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  session_t *s = unwrap(env, info, &argc, argv);
  napi_value r;
  int res = -ENOTCONN;
  int pages = argc > 1 && i32(env, argv[1]);
  if (s && !s->ended) res = fuse_lowlevel_notify_inval_inode(s->ch, (fuse_ino_t)f64(env, argv[0]), pages ? 0 : -1, 0);
  napi_create_int32(env, res, &r);
  return r;
}

/*
 * unmount(): detaches the mount lazily (umount2 MNT_DETACH as root, else
 * fusermount -u -z), keeping /dev/fuse open: files still open go on being
 * served, and the session ends when the kernel lets go of the last one.
 */
static napi_value js_unmount(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  session_t *s = unwrap(env, info, &argc, NULL);
  if (s && s->mountpoint && !s->ended) fuse_unmount(s->mountpoint, NULL);
  return NULL;
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env; (void)hint;
  session_t *s = data;
  /* The session object lives as long as the process that mounted it in practice. */
  (void)s;
}

/*
 * new Session(mountpoint, options, dispatch, onEnd, onNotices, args, attrs, forgets)
 * Mounts (fuse_mount: mount(2) as root, else fusermount) and starts serving.
 */
static napi_value js_session(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8], self;
  NAPI_OK(napi_get_cb_info(env, info, &argc, argv, &self, NULL));
  if (argc < 8) {
    napi_throw_type_error(env, NULL, "Session(mountpoint, options, dispatch, onEnd, onNotices, args, attrs, forgets)");
    return NULL;
  }
  session_t *s = calloc(1, sizeof *s);
  s->env = env;
  s->free_head = UINT32_MAX;
  char mnt[4096], opts[4096];
  size_t len;
  NAPI_OK(napi_get_value_string_utf8(env, argv[0], mnt, sizeof mnt, &len));
  NAPI_OK(napi_get_value_string_utf8(env, argv[1], opts, sizeof opts, &len));
  NAPI_OK(napi_create_reference(env, argv[2], 1, &s->dispatch));
  NAPI_OK(napi_create_reference(env, argv[3], 1, &s->on_end));
  NAPI_OK(napi_create_reference(env, argv[4], 1, &s->on_notices));
  napi_typedarray_type t;
  napi_value ab;
  size_t n, off;
  NAPI_OK(napi_get_typedarray_info(env, argv[5], &t, &n, (void **)&s->args, &ab, &off));
  NAPI_OK(napi_get_typedarray_info(env, argv[6], &t, &n, (void **)&s->attrs, &ab, &off));
  NAPI_OK(napi_get_typedarray_info(env, argv[7], &t, &n, (void **)&s->forgets, &ab, &off));
  NAPI_OK(napi_create_reference(env, argv[5], 1, &s->args_ref));
  NAPI_OK(napi_create_reference(env, argv[6], 1, &s->attrs_ref));
  NAPI_OK(napi_create_reference(env, argv[7], 1, &s->forgets_ref));
  napi_value name;
  NAPI_OK(napi_create_string_utf8(env, "tracefs_fuse", NAPI_AUTO_LENGTH, &name));
  NAPI_OK(napi_async_init(env, NULL, name, &s->async));

  char *fargv[] = { "tracefs-emu", "-o", opts, NULL };
  struct fuse_args args = FUSE_ARGS_INIT(opts[0] ? 3 : 1, fargv);
  s->ch = fuse_mount(mnt, &args);
  if (!s->ch) {
    fuse_opt_free_args(&args);
    napi_throw_error(env, "EMOUNT", "fuse_mount failed");
    free(s);
    return NULL;
  }
  s->mountpoint = strdup(mnt);
  s->se = fuse_lowlevel_new(&args, &ops, sizeof ops, s);
  fuse_opt_free_args(&args);
  if (!s->se) {
    fuse_unmount(mnt, s->ch);
    napi_throw_error(env, "EMOUNT", "fuse_lowlevel_new failed");
    free(s);
    return NULL;
  }
  fuse_session_add_chan(s->se, s->ch);
  s->bufsize = fuse_chan_bufsize(s->ch);
  s->buf = malloc(s->bufsize);
  int fd = fuse_chan_fd(s->ch);
  s->pt = pt_new(fd);
  s->init_ch = fuse_chan_new(&init_ops, fd, s->bufsize, s);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

  uv_loop_t *loop;
  NAPI_OK(napi_get_uv_event_loop(env, &loop));
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  uv_async_init(loop, &s->notices_done, on_notices_done);
  s->notices_done.data = s;
  uv_unref((uv_handle_t *)&s->notices_done);
  if (pthread_create(&s->notifier, NULL, notifier_main, s) == 0) s->notifier_started = 1;
  uv_poll_init(loop, &s->poll, fd);
  s->poll.data = s;
  uv_poll_start(&s->poll, UV_READABLE, on_readable);
  s->polling = 1;

  NAPI_OK(napi_wrap(env, self, s, finalize, NULL, NULL));
  NAPI_OK(napi_create_reference(env, self, 1, &s->self));
  return self;
}

/* The file descriptor of /dev/fuse (for diagnostics). */
static napi_value js_fd(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  session_t *s = unwrap(env, info, &argc, NULL);
  napi_value r;
  napi_create_int32(env, s && s->ch ? fuse_chan_fd(s->ch) : -1, &r);
  return r;
}

/* close(): after the session ended, let its handles and thread go. */
static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  session_t *s = unwrap(env, info, &argc, NULL);
  if (!s || !s->se) return NULL;
  if (s->polling) {
    uv_poll_stop(&s->poll);
    s->polling = 0;
  }
  if (s->notifier_started) {
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->notifier, NULL);
    s->notifier_started = 0;
  }
  /* Answer what is still pending, so libfuse frees it. */
  for (uint32_t i = 0; i < s->cap; i++) {
    if (s->reqs[i]) fuse_reply_err(slot_give(s, i), ENOTCONN);
  }
  uv_close((uv_handle_t *)&s->notices_done, NULL);
  fuse_session_remove_chan(s->ch);
  fuse_chan_destroy(s->ch);
  s->ch = NULL;
  fuse_session_destroy(s->se);
  s->se = NULL;
  free(s->mountpoint);
  s->mountpoint = NULL;
  return NULL;
}

/*
 * readAvailable(fd, buffer): what a non-blocking fd has now — the number of
 * bytes read, 0 when nothing waits (or at end of file), -errno on an error.
 * For draining the host events FIFO before each request without the cost
 * of an exception per empty read.
 */
static napi_value js_read_available(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], r;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return NULL;
  void *data = NULL;
  size_t len = 0;
  if (napi_get_buffer_info(env, argv[1], &data, &len) != napi_ok) return NULL;
  ssize_t n;
  do n = read(i32(env, argv[0]), data, len);
  while (n < 0 && errno == EINTR);
  napi_create_int32(env, n >= 0 ? (int32_t)n : (errno == EAGAIN ? 0 : -errno), &r);
  return r;
}

/*
 * The C heap of the process (Node's buffers and the addon's own): what
 * malloc holds and what of it is free. glibc keeps freed chunks in its
 * arenas, so after a busy run the process's RSS stays at the run's peak
 * unless they are given back (trimHeap).
 */
static napi_value js_heap_stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r, v;
  napi_create_object(env, &r);
#ifdef __GLIBC__
  struct mallinfo2 mi = mallinfo2();
  napi_create_double(env, (double)(mi.arena + mi.hblkhd), &v);
  napi_set_named_property(env, r, "held", v);
  napi_create_double(env, (double)(mi.uordblks + mi.hblkhd), &v);
  napi_set_named_property(env, r, "inUse", v);
  napi_create_double(env, (double)mi.fordblks, &v);
  napi_set_named_property(env, r, "free", v);
#endif
  return r;
}

/* Gives the C heap's free pages back to the system (1 if any went). */
static napi_value js_trim_heap(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r;
#ifdef __GLIBC__
  napi_get_boolean(env, malloc_trim(0) != 0, &r);
#else
  napi_get_boolean(env, false, &r);
#endif
  return r;
}

static napi_value init_module(napi_env env, napi_value exports) {
  napi_property_descriptor methods[] = {
    { "replyErr", NULL, js_reply_err, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyEntry", NULL, js_reply_entry, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyAttr", NULL, js_reply_attr, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyOpen", NULL, js_reply_open, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyData", NULL, js_reply_data, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyWrite", NULL, js_reply_write, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyPoll", NULL, js_reply_poll, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyStatfs", NULL, js_reply_statfs, NULL, NULL, NULL, napi_default_method, NULL },
    { "replyDir", NULL, js_reply_dir, NULL, NULL, NULL, napi_default_method, NULL },
    { "notifyPoll", NULL, js_notify_poll, NULL, NULL, NULL, napi_default_method, NULL },
    { "forgetPoll", NULL, js_forget_poll, NULL, NULL, NULL, napi_default_method, NULL },
    { "invalEntry", NULL, js_inval_entry, NULL, NULL, NULL, napi_default_method, NULL },
    { "notifyDelete", NULL, js_notify_delete, NULL, NULL, NULL, napi_default_method, NULL },
    { "invalInode", NULL, js_inval_inode, NULL, NULL, NULL, napi_default_method, NULL },
    { "unmount", NULL, js_unmount, NULL, NULL, NULL, napi_default_method, NULL },
    { "close", NULL, js_close, NULL, NULL, NULL, napi_default_method, NULL },
    { "fd", NULL, js_fd, NULL, NULL, NULL, napi_default_method, NULL },
    { "cacheFile", NULL, js_cache_file, NULL, NULL, NULL, napi_default_method, NULL },
    { "uncache", NULL, js_uncache, NULL, NULL, NULL, napi_default_method, NULL },
    { "nativeCounts", NULL, js_native_counts, NULL, NULL, NULL, napi_default_method, NULL },
    { "openCount", NULL, js_open_count, NULL, NULL, NULL, napi_default_method, NULL },
  };
  napi_value cls;
  if (napi_define_class(env, "Session", NAPI_AUTO_LENGTH, js_session, NULL, sizeof methods / sizeof methods[0], methods, &cls) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "Session", cls);
  napi_value fn;
  if (napi_create_function(env, "readAvailable", NAPI_AUTO_LENGTH, js_read_available, NULL, &fn) == napi_ok) napi_set_named_property(env, exports, "readAvailable", fn);
  if (napi_create_function(env, "heapStats", NAPI_AUTO_LENGTH, js_heap_stats, NULL, &fn) == napi_ok) napi_set_named_property(env, exports, "heapStats", fn);
  if (napi_create_function(env, "trimHeap", NAPI_AUTO_LENGTH, js_trim_heap, NULL, &fn) == napi_ok) napi_set_named_property(env, exports, "trimHeap", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init_module)
