# Oracle prelude shared by the call-path snippets (kernel-paths.sh,
# kernel-paths-host.sh, kernel-paths-calls.sh): a capture instance whose function_graph follows
# this shell and its children, and `op NAME CMD` writing the graph of one
# operation to OUTDIR. Run it before the snippet:
#   cat tools/oracle/capture.sh tools/oracle/SNIPPET.sh | kernel-oracle [--series S] --out OUTDIR run -
O=$KORACLE_OUT
C=instances/cap

# capture_begin PREFIX: files are op-PREFIX-NAME.txt.gz (op-NAME.txt.gz for ''); the guest's mounts go to mounts.txt.
capture_begin() {
  P=$1
  cat /proc/mounts > $O/mounts.txt
  mkdir $C
  echo 16384 > $C/buffer_size_kb
  echo 1 > $C/options/function-fork
  echo 1 > $C/options/funcgraph-proc
  echo $$ > $C/set_ftrace_pid
  echo function_graph > $C/current_tracer
}

op() {
  name=$1; shift
  echo > $C/trace
  echo 1 > $C/tracing_on
  eval "$@"
  echo 0 > $C/tracing_on
  cat $C/trace | gzip > $O/op-${P:+$P-}$name.txt.gz
}

capture_end() {
  echo nop > $C/current_tracer
  rmdir $C
  ls -la $O
}
