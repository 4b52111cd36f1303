/**
 * The tracefs benchmark (through a real FUSE mount): adding and removing an
 * fprobe event next to a no-op write on the same mount, and trace_pipe
 * throughput next to reading a static file of the same size.
 */
export interface TracefsBenchResult {
  results: unknown;
  text: string;
}

export async function runTracefsBench(_o: { ops: number }): Promise<TracefsBenchResult> {
  return { results: { skipped: 'needs the dynamic_events file (dynevent branch)' }, text: 'tracefs: skipped (dynamic_events not available yet)' };
}
