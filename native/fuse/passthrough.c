/*
 * Cached files read by the kernel itself. With FUSE passthrough (Linux
 * 6.9+), an open can name a backing file that the kernel then reads on its
 * own: no READ request, and no second one to learn of the end of the file.
 * A cached file's snapshot is written to a memfd, registered once
 * (FUSE_DEV_IOC_BACKING_OPEN) and shared by every file showing the same
 * bytes: all the trigger files of the events show one text, all the filter
 * files another. The file's own attributes stay the tracefs ones (size 0):
 * reads through a backing file are not bounded by them.
 *
 * The kernel's rule: while an inode has a passthrough open, its other opens
 * must name the same backing file (or fail). A release reaches us after
 * the kernel let go, so the opens we count live may be fewer there, never
 * more: an open of an inode we count live names its backing file; a
 * snapshot showing something else then gets FOPEN_DIRECT_IO too, and its
 * reads come here as before.
 */
#define _GNU_SOURCE
#include "passthrough.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

struct pt_backing_map {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
#define PT_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct pt_backing_map)
#define PT_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

#define BUCKETS 1024
/* Backing files no open uses, kept for the next (ftracetest reads the same texts again before every test). */
#define MAX_IDLE 64

typedef struct backing {
  struct backing *next, *idle_prev, *idle_next;
  uint64_t hash;
  int32_t id;
  int fd;
  uint32_t users; /* inodes that hold it */
  size_t len;
  char data[];
} backing_t;

typedef struct pt_inode {
  struct pt_inode *next;
  uint64_t ino;
  backing_t *bk;
  uint32_t live; /* opens through bk whose release has not come */
} pt_inode_t;

typedef struct pt_fh {
  struct pt_fh *next;
  uint64_t fh, ino;
} pt_fh_t;

struct passthrough {
  int devfd;
  int enabled, broken;
  backing_t *backings[BUCKETS];
  pt_inode_t *inodes[BUCKETS];
  pt_fh_t *fhs[BUCKETS];
  backing_t *idle_head, *idle_tail;
  uint32_t nidle;
};

passthrough_t *pt_new(int devfd) {
  passthrough_t *p = calloc(1, sizeof *p);
  if (p) p->devfd = devfd;
  return p;
}

int pt_offered(const void *init_in, size_t len) {
  uint32_t w[5];
  if (len < sizeof w || getenv("TRACEFS_EMU_NO_PASSTHROUGH")) return 0;
  memcpy(w, init_in, sizeof w);
  /* major, minor, max_readahead, flags, flags2 */
  return (w[3] & PROTO_INIT_EXT) && (w[4] & PROTO_INIT2_PASSTHROUGH);
}

void pt_ask(passthrough_t *p, void *init_out, size_t len) {
  if (!p || len < 40) return;
  char *o = init_out;
  uint32_t flags, flags2, depth = 1;
  memcpy(&flags, o + 12, 4);
  memcpy(&flags2, o + 32, 4);
  flags |= PROTO_INIT_EXT;
  flags2 |= PROTO_INIT2_PASSTHROUGH;
  memcpy(o + 12, &flags, 4);
  memcpy(o + 32, &flags2, 4);
  /* One level: backing files on a plain filesystem (shmem), and this one may be stacked on. */
  memcpy(o + 36, &depth, 4);
  p->enabled = 1;
}

static uint64_t hash_of(const char *d, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)d[i]) * 1099511628211ull;
  return h ^ n;
}

static void idle_unlink(passthrough_t *p, backing_t *b) {
  if (b->idle_prev) b->idle_prev->idle_next = b->idle_next;
  else p->idle_head = b->idle_next;
  if (b->idle_next) b->idle_next->idle_prev = b->idle_prev;
  else p->idle_tail = b->idle_prev;
  b->idle_prev = b->idle_next = NULL;
  p->nidle--;
}

static void backing_free(passthrough_t *p, backing_t *b) {
  backing_t **q = &p->backings[b->hash % BUCKETS];
  while (*q && *q != b) q = &(*q)->next;
  if (*q) *q = b->next;
  uint32_t id = (uint32_t)b->id;
  /* Opens already through it keep it: the kernel holds the file. */
  ioctl(p->devfd, PT_DEV_IOC_BACKING_CLOSE, &id);
  close(b->fd);
  free(b);
}

/* The backing file showing data[len]: found, or made and registered; NULL if the kernel refuses. */
static backing_t *backing_get(passthrough_t *p, const char *data, size_t len) {
  uint64_t h = hash_of(data, len);
  for (backing_t *b = p->backings[h % BUCKETS]; b; b = b->next)
    if (b->hash == h && b->len == len && !memcmp(b->data, data, len)) {
      if (!b->users) idle_unlink(p, b);
      b->users++;
      return b;
    }
  int fd = memfd_create("tracefs-emu-file", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return NULL;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, data + done, len - done);
    if (n <= 0) {
      close(fd);
      return NULL;
    }
    done += (size_t)n;
  }
  /* Shown by many files at once: nothing may change it (a writable shared mapping of one of them would). */
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
    close(fd);
    return NULL;
  }
  struct pt_backing_map map = { .fd = fd };
  int id = ioctl(p->devfd, PT_DEV_IOC_BACKING_OPEN, &map);
  if (id < 0) {
    /* EPERM: the kernel did not take passthrough after all; nothing else will work either. */
    if (errno == EPERM || errno == ENOTTY || errno == EINVAL) p->broken = 1;
    close(fd);
    return NULL;
  }
  backing_t *b = malloc(sizeof *b + len);
  if (!b) {
    uint32_t u = (uint32_t)id;
    ioctl(p->devfd, PT_DEV_IOC_BACKING_CLOSE, &u);
    close(fd);
    return NULL;
  }
  memset(b, 0, sizeof *b);
  b->hash = h;
  b->id = id;
  b->fd = fd;
  b->users = 1;
  b->len = len;
  memcpy(b->data, data, len);
  b->next = p->backings[h % BUCKETS];
  p->backings[h % BUCKETS] = b;
  return b;
}

static void backing_put(passthrough_t *p, backing_t *b) {
  if (--b->users) return;
  b->idle_prev = p->idle_tail;
  b->idle_next = NULL;
  if (p->idle_tail) p->idle_tail->idle_next = b;
  else p->idle_head = b;
  p->idle_tail = b;
  if (++p->nidle > MAX_IDLE) {
    backing_t *old = p->idle_head;
    idle_unlink(p, old);
    backing_free(p, old);
  }
}

static pt_inode_t **inode_slot(passthrough_t *p, uint64_t ino) {
  pt_inode_t **q = &p->inodes[ino % BUCKETS];
  while (*q && (*q)->ino != ino) q = &(*q)->next;
  return q;
}

int pt_open_snapshot(passthrough_t *p, uint64_t ino, const char *data, size_t len, proto_open_out_t *o) {
  if (!p || !p->enabled || p->broken) return 0;
  pt_inode_t **q = inode_slot(p, ino), *in = *q;
  if (in) {
    backing_t *b = in->bk;
    int same = b->len == len && !memcmp(b->data, data, len);
    o->open_flags = PROTO_FOPEN_PASSTHROUGH | (same ? 0 : PROTO_FOPEN_DIRECT_IO);
    o->backing_id = b->id;
    in->live++;
    return 1;
  }
  backing_t *b = backing_get(p, data, len);
  if (!b) return 0;
  in = malloc(sizeof *in);
  if (!in) {
    backing_put(p, b);
    return 0;
  }
  in->next = NULL;
  in->ino = ino;
  in->bk = b;
  in->live = 1;
  *q = in;
  o->open_flags = PROTO_FOPEN_PASSTHROUGH;
  o->backing_id = b->id;
  return 1;
}

void pt_close(passthrough_t *p, uint64_t ino) {
  if (!p) return;
  pt_inode_t **q = inode_slot(p, ino), *in = *q;
  if (!in || --in->live) return;
  *q = in->next;
  backing_put(p, in->bk);
  free(in);
}

int pt_open_other(passthrough_t *p, uint64_t ino, uint64_t fh, proto_open_out_t *o) {
  if (!p) return 0;
  pt_inode_t *in = *inode_slot(p, ino);
  if (!in) return 0;
  pt_fh_t *f = malloc(sizeof *f);
  if (!f) return 0;
  f->fh = fh;
  f->ino = ino;
  f->next = p->fhs[fh % BUCKETS];
  p->fhs[fh % BUCKETS] = f;
  in->live++;
  o->open_flags = PROTO_FOPEN_PASSTHROUGH | PROTO_FOPEN_DIRECT_IO;
  o->backing_id = in->bk->id;
  return 1;
}

void pt_release_fh(passthrough_t *p, uint64_t fh) {
  if (!p) return;
  pt_fh_t **q = &p->fhs[fh % BUCKETS];
  while (*q && (*q)->fh != fh) q = &(*q)->next;
  pt_fh_t *f = *q;
  if (!f) return;
  *q = f->next;
  pt_close(p, f->ino);
  free(f);
}
