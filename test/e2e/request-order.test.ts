/**
 * The kernel releases a tracefs file before close() returns; over FUSE the
 * RELEASE is sent asynchronously, and the patched binding hands requests to
 * JS in the kernel's order, so whatever a release does (set_ftrace_filter
 * applies its hash, an event file lets its event go) is done before the
 * same process's next request is served.
 */
import { describe, expect, it } from 'vitest';
import { Dir, File } from '../../src/tracefs/node.js';
import { fuseUnavailable, mountedEmulator, sh } from '../helpers/e2e.js';

const skip = fuseUnavailable();
if (skip) console.warn(`e2e-request-order: skipped: ${skip}`);

describe.skipIf(!!skip)(`requests in the kernel's order${skip ? ` (skipped: ${skip})` : ''}`, () => {
  /** What the `order` file saw: o(pen), w(rite), r(elease), in the order JS served them. */
  const seen: string[] = [];
  const mnt = mountedEmulator('tfe-order-', (emu) =>
    emu.fs.root.add(
      new File('order', 0o600, {
        open: () => void seen.push('o'),
        write: (_f, data) => (seen.push('w'), data.length),
        release: () => void seen.push('r'),
      }),
    ),
  );

  it('each release is served before the next open of the same shell', async () => {
    seen.length = 0;
    const r = await sh(`i=0; while [ $i -lt 200 ]; do echo x > ${mnt.dir}/order; i=$((i+1)); done`);
    expect(r.code).toBe(0);
    expect(seen.join('')).toBe('owr'.repeat(200));
  });

  it('set_ftrace_filter reads back what was just written, every time', async () => {
    const r = await sh(`cd ${mnt.dir}; bad=0; i=0; while [ $i -lt 100 ]; do
      echo sched_tick > set_ftrace_filter; read l < set_ftrace_filter; [ "$l" = sched_tick ] || bad=$((bad+1))
      echo schedule > set_ftrace_filter; read l < set_ftrace_filter; [ "$l" = schedule ] || bad=$((bad+1))
      i=$((i+1)); done; echo > set_ftrace_filter; echo $bad`);
    expect(r.stdout.trim()).toBe('0');
  });

  it('a kprobe event disabled through its enable file can be removed at once', async () => {
    const r = await sh(`cd ${mnt.dir}; bad=0; i=0; while [ $i -lt 30 ]; do
      echo 'p:myevent kernel_clone' > kprobe_events || bad=$((bad+1))
      echo 1 > events/kprobes/myevent/enable; echo 0 > events/kprobes/myevent/enable
      echo > kprobe_events || bad=$((bad+1))
      i=$((i+1)); done; echo $bad`);
    expect(r.stdout.trim()).toBe('0');
    expect((mnt.emu.fs.root.get('events') as Dir).get('kprobes')).toBeUndefined();
  });
});

const asRoot = process.getuid?.() === 0;

describe.skipIf(!!skip || !asRoot)('process events before the next request', () => {
  const mnt = mountedEmulator('tfe-order-proc-', undefined, { host: { procEvents: true } });

  it('the forks of a shell\'s commands are in the trace it reads right after them', async () => {
    const r = await sh(`cd ${mnt.dir}; echo 1 > events/sched/sched_process_fork/enable
      i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done
      grep -c "sched_process_fork: comm=sh pid=$$ " trace; echo 0 > events/sched/sched_process_fork/enable`);
    // Twenty /bin/true, and the grep that reads the trace.
    expect(r.stdout.trim()).toBe('21');
  });
});
