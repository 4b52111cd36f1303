/*
 * What the FUSE protocol has that libfuse 2's headers lack (linux/fuse.h,
 * protocol 7.40): answers libfuse cannot build are sent as raw bytes.
 */
#ifndef TRACEFS_FUSE_PROTO_H
#define TRACEFS_FUSE_PROTO_H

#include <stdint.h>

#define PROTO_FUSE_INIT 26
/* struct fuse_in_header: len, opcode, unique, nodeid, uid, gid, pid, padding. */
#define PROTO_IN_HEADER_SIZE 40

/* INIT flags: the extended form, and FUSE_PASSTHROUGH (bit 37 of the 64-bit flags, so bit 5 of flags2). */
#define PROTO_INIT_EXT (1u << 30)
#define PROTO_INIT2_PASSTHROUGH (1u << 5)

/* fuse_open_out's open_flags. */
#define PROTO_FOPEN_DIRECT_IO (1u << 0)
#define PROTO_FOPEN_KEEP_CACHE (1u << 1)
#define PROTO_FOPEN_CACHE_DIR (1u << 3)
#define PROTO_FOPEN_PASSTHROUGH (1u << 7)

/* fuse_open_out: the padding became the backing file's id. */
typedef struct proto_open_out {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
} proto_open_out_t;

#endif
