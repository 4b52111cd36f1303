# Run on the real kernel (cwd = tracefs root), output under $KORACLE_OUT:
#   kernel-oracle [--series 6.12] --out DIR run - < tools/kernel-data/probe-offsets.sh
# kprobe-blacklist.txt: /sys/kernel/debug/kprobes/blacklist
O=$KORACLE_OUT
cat /sys/kernel/debug/kprobes/blacklist > $O/kprobe-blacklist.txt
