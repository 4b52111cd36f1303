/**
 * The emulator as a laboratory: an fprobe on names and globs with entry and
 * exit handlers, session mode and entry data, and a kretprobe with a
 * maxactive, on a kernel of either series, driven by reads through the
 * tracefs. Run: node dist/examples/return_hooks.js [7.2|7.3|6.12]
 */
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_SERIES,
  Fprobe,
  Kretprobe,
  collectHookStats,
  createEmulator,
  formatHookStats,
  isSeries,
  registerFprobe,
  unregisterFprobe,
  type Series,
} from '../src/index.js';

export async function main(series: Series = DEFAULT_SERIES): Promise<string> {
  const { kernel, ftrace, fs } = createEmulator({ series, cpus: 4, callPaths: true });
  const out: string[] = [];
  const name = (addr: bigint) => {
    const l = kernel.symbols.lookup(addr);
    return l ? `${l.sym.name}+0x${l.offset.toString(16)}` : `0x${addr.toString(16)}`;
  };

  // An fprobe on a glob and a name. Its 8 bytes of entry data are the per-call cookie:
  // the entry handler stamps the time, the exit handler reads it back. Returning
  // non-zero from the entry handler (session mode) skips that call's exit handler.
  const latency = new Map<string, bigint[]>();
  const fp = new Fprobe({
    name: 'lab/read-latency',
    entryDataSize: 8,
    entry: (_fp, ip, _retIp, _regs, data, task) => {
      if (task.pid !== process.pid) return 1;
      data!.writeBigUInt64LE(kernel.clock.nowNs());
      return 0;
    },
    exit: (_fp, ip, _retIp, regs, data) => {
      const fn = name(ip).replace(/\+.*/, '');
      const l = latency.get(fn) ?? [];
      l.push(kernel.clock.nowNs() - data!.readBigUInt64LE());
      latency.set(fn, l);
      void regs.ax;
    },
  });
  registerFprobe(ftrace, fp, 'vfs_read seq_read*');

  // A kretprobe with room for two calls in flight: its handler sees the caller.
  const callers = new Set<string>();
  const rp = new Kretprobe({ symbol: 'vfs_read', maxactive: 2, name: 'lab/vfs_read', handler: (ri) => void callers.add(name(ri.retAddr)) });
  ftrace.kprobes.registerKretprobe(rp);

  // Drive it: this process reads tracefs files, which runs the kernel's read path.
  const me = { pid: process.pid, uid: 0, gid: 0 };
  for (let i = 0; i < 5; i++) {
    await fs.readFile('README', me);
    await fs.readFile('available_tracers', me);
  }

  out.push(`kernel ${series}: fprobe on ${fp.functions.length} functions (${fp.functions.map((f) => f.name).join(' ')})`);
  for (const [fn, ns] of latency) out.push(`  ${fn}: ${ns.length} calls`);
  out.push(`kretprobe vfs_read: ${rp.nhit} returns, ${rp.nmissed} missed, callers: ${[...callers].join(' ')}`);
  out.push('');
  out.push(formatHookStats(collectHookStats(ftrace, { perTaskLimit: 3 })));
  unregisterFprobe(ftrace, fp);
  ftrace.kprobes.unregisterKretprobe(rp);
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = process.argv[2];
  console.log(await main(arg !== undefined && isSeries(arg) ? arg : DEFAULT_SERIES));
}
