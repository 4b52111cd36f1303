/*
 * Cached files read by the kernel itself (FUSE passthrough): see passthrough.c.
 */
#ifndef TRACEFS_FUSE_PASSTHROUGH_H
#define TRACEFS_FUSE_PASSTHROUGH_H

#include <stddef.h>
#include <stdint.h>

#include "fuse_proto.h"

typedef struct passthrough passthrough_t;

passthrough_t *pt_new(int devfd);

/* Whether a raw FUSE_INIT request offers passthrough. */
int pt_offered(const void *init_in, size_t len);

/* Patches libfuse's fuse_init_out (at least 40 bytes) to ask for it; the kernel then allows backing files. */
void pt_ask(passthrough_t *p, void *init_out, size_t len);

/*
 * A read-only open of `ino` answered from a snapshot showing `data`: fills
 * `o` and returns 1 if the open goes through a backing file (the kernel
 * reads it without asking; with PROTO_FOPEN_DIRECT_IO also set, reads still
 * come here), 0 for a plain open. Each 1 is undone by pt_close().
 */
int pt_open_snapshot(passthrough_t *p, uint64_t ino, const char *data, size_t len, proto_open_out_t *o);

/*
 * Any other open of `ino`: while a passthrough open of it may be live, the
 * kernel takes only opens through the same backing file (with
 * PROTO_FOPEN_DIRECT_IO, so that every read and write still comes here).
 * Returns 1 and fills `o` for such an open, remembered by `fh` for
 * pt_release_fh(); 0 for a plain open.
 */
int pt_open_other(passthrough_t *p, uint64_t ino, uint64_t fh, proto_open_out_t *o);

/* An open that pt_open_snapshot() answered was released (or never reached its caller). */
void pt_close(passthrough_t *p, uint64_t ino);

/* A file opened by pt_open_other() was released (or never reached its caller): no-op for others. */
void pt_release_fh(passthrough_t *p, uint64_t fh);

#endif
