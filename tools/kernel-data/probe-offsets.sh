# Run on the real kernel (cwd = tracefs root), output under $KORACLE_OUT:
#   kernel-oracle [--series 6.12] --out DIR run - < tools/kernel-data/probe-offsets.sh
# kprobe-blacklist.txt: /sys/kernel/debug/kprobes/blacklist
# offsets.txt: for the first 200 offsets of a few functions, whether a kprobe
#   can go there ("ok") or the error_log line that says why not.
O=$KORACLE_OUT
cat /sys/kernel/debug/kprobes/blacklist > $O/kprobe-blacklist.txt
for F in vfs_read kernel_clone tracefs_create_dir do_sys_openat2 vfs_write dput kfree schedule do_exit; do
  i=0
  while [ $i -lt 200 ]; do
    if echo "p:kp $F+$i" > kprobe_events 2>/dev/null; then echo "$F $i ok"
    else echo "$F $i $(grep 'error:' error_log | tail -n 1 | sed 's/.*error: //')"; fi
    i=$((i+1))
  done
done > $O/offsets.txt
echo > kprobe_events
