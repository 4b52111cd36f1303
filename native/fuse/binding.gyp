{
  "targets": [{
    "target_name": "tracefs_fuse",
    "sources": ["tracefs_fuse.c", "passthrough.c"],
    "include_dirs": ["/usr/include/fuse"],
    "libraries": ["-l:libfuse.so.2", "-lpthread"],
    "defines": ["_FILE_OFFSET_BITS=64"],
    "cflags": ["-O2", "-Wall", "-Wno-unused-parameter"]
  }]
}
