import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/kernel/kernel.js';
import { Task } from '../../src/kernel/task.js';
import { SERIES, type Series } from '../../src/kernel/series.js';
import { Fprobe, registerFprobe, unregisterFprobe } from '../../src/ftrace/fprobe.js';
import { Ftrace } from '../../src/ftrace/ftrace.js';
import { Kretprobe } from '../../src/ftrace/kretprobes.js';
import { sprintSymbol } from '../../src/kernel/kallsyms.js';
import { run, READ_PROC_VERSION } from '../helpers/ftrace-driver.js';

function setup(series: Series = '7.2') {
  const kernel = new Kernel({ cpus: 2, series });
  const task = kernel.tasks.add(new Task(300, 300, 'cat', 1));
  const sym = (a: bigint) => sprintSymbol(kernel.symbols, a);
  const ftrace = new Ftrace(kernel);
  return { kernel, ftrace, task, sym, exec: ftrace.exec };
}

describe.each(SERIES)('fprobe on %s', (series) => {
  it('calls entry and exit handlers with the function and its caller', () => {
    const { kernel, ftrace, task, sym, exec } = setup(series);
    const seen: string[] = [];
    const fp = new Fprobe({
      entry: (_fp, ip, ret) => void seen.push(`entry ${sym(ip)} ${sym(ret)}`),
      exit: (_fp, ip, ret, regs) => void seen.push(`exit ${sym(ip)} ${sym(ret)} ${regs.ax}`),
    });
    registerFprobe(ftrace, fp, 'vfs_read');
    run(kernel, task, { fn: 'ksys_read', calls: [{ fn: 'vfs_read', ret: 62 }] });
    expect(seen.length).toBe(2);
    expect(seen[0]).toMatch(/^entry vfs_read\+0x4\/0x[0-9a-f]+ ksys_read\+0x/);
    expect(seen[1]).toMatch(/^exit vfs_read\+0x4\/0x[0-9a-f]+ ksys_read\+0x[0-9a-f]+\/0x[0-9a-f]+ 62$/);
    unregisterFprobe(ftrace, fp);
    run(kernel, task, READ_PROC_VERSION);
    expect(seen.length).toBe(2);
    expect(exec.corruptions).toBe(0);
  });

  it('kretprobe sees the caller', () => {
    const { kernel, ftrace, task, sym, exec } = setup(series);
    const seen: string[] = [];
    const rp = new Kretprobe({ symbol: 'vfs_read', handler: (ri) => void seen.push(`${sym(ri.retAddr)} <- ${sym(ri.funcAddr)}`) });
    ftrace.kprobes.registerKretprobe(rp);
    run(kernel, task, READ_PROC_VERSION);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^ksys_read\+0x[0-9a-f]+\/0x[0-9a-f]+ <- vfs_read\+0x4\//);
    expect(rp.maxactive).toBe(10);
    expect(ftrace.kprobes.listText()).toMatch(/^[0-9a-f]{16}  r  vfs_read\+0x4    \[FTRACE\]\n$/);
    expect(exec.corruptions).toBe(0);
  });
});
