import { describe, expect, it } from 'vitest';
import { Executor } from '../../src/kernel/executor.js';
import { AddressSpace } from '../../src/kernel/memory.js';
import type { KernelFunction } from '../../src/kernel/symbols.js';
import { Task } from '../../src/kernel/task.js';

function fn(id: number, name: string, addr: bigint, size = 0x100, fentryOffset = 4): KernelFunction {
  return { id, name, addr, size, type: 'T', traceable: true, fentryOffset };
}

function setup() {
  const fns = [fn(0, 'ksys_read', 0xffffffff81000000n, 0x110), fn(1, 'vfs_read', 0xffffffff81001000n, 0x490), fn(2, 'rw_verify_area', 0xffffffff81002000n)];
  const mem = new AddressSpace();
  const exec = new Executor({ resolve: (n) => fns.find((f) => f.name === n), nrFunctions: fns.length, kernelMemory: mem });
  const task = new Task(100, 100, 'cat', 1);
  task.sp = 0xffffc90000004000n;
  mem.map(task.sp - 0x4000n, 0x4000);
  return { fns, mem, exec, task };
}

describe('call executor', () => {
  it('passes arguments in registers and returns %ax through the call site', () => {
    const { exec, task } = setup();
    exec.define('ksys_read', (x) => x.call('vfs_read', [x.args[0], 0x1000n, 62n]));
    exec.define('vfs_read', (x) => {
      expect(x.regs.get('di')).toBe(3n);
      expect(x.regs.get('dx')).toBe(62n);
      return x.args[2];
    });
    expect(exec.call(task, 'ksys_read', [3n])).toBe(62n);
    expect(task.frames).toHaveLength(0);
    expect(exec.corruptions).toBe(0);
  });

  it('calls ftrace at patched fentry sites with ip = addr + fentry offset and the caller site as parent', () => {
    const { exec, task, fns } = setup();
    const seen: string[] = [];
    exec.fentry = (ip, parent) => seen.push(`${ip.toString(16)}<-${parent.toString(16)}`);
    exec.patchFentry(1, true);
    exec.define('ksys_read', (x) => x.call('vfs_read'));
    exec.call(task, 'ksys_read');
    expect(seen).toHaveLength(1);
    expect(seen[0].startsWith((fns[1].addr + 4n).toString(16))).toBe(true);
  });

  it('follows a replaced return address through its trampoline back to the caller', () => {
    const { exec, task, mem } = setup();
    const TRAMP = 0xffffffff81ff0000n;
    let saved = 0n;
    let retval = -1n;
    exec.patchFentry(1, true);
    exec.fentry = (_ip, _parent, regs) => {
      saved = mem.readU64(regs.sp)!;
      mem.writeU64(regs.sp, TRAMP);
    };
    exec.trampolines.set(TRAMP, (regs) => {
      retval = regs.ax;
      return saved;
    });
    exec.define('ksys_read', (x) => x.call('vfs_read'));
    exec.define('vfs_read', () => 7n);
    expect(exec.call(task, 'ksys_read')).toBe(7n);
    expect(retval).toBe(7n);
    expect(exec.corruptions).toBe(0);
  });

  it('counts a return that does not reach the call site', () => {
    const { exec, task, mem } = setup();
    exec.patchFentry(2, true);
    exec.fentry = (_ip, _p, regs) => mem.writeU64(regs.sp, 0xdeadn);
    exec.call(task, 'rw_verify_area');
    expect(exec.corruptions).toBe(1);
  });

  it('keeps frames open across a sleeping body', async () => {
    const { exec, task } = setup();
    let wake!: () => void;
    exec.define('vfs_read', () => new Promise<bigint>((r) => (wake = () => r(5n))));
    exec.define('ksys_read', async (x) => (await x.call('vfs_read')) + 1n);
    const p = exec.call(task, 'ksys_read');
    expect(task.frames.map((f) => f.fn.name)).toEqual(['ksys_read', 'vfs_read']);
    wake();
    expect(await p).toBe(6n);
    expect(task.frames).toHaveLength(0);
  });

  it('fires breakpoints at their offsets, before and after the fentry site', () => {
    const { exec, task, fns } = setup();
    const hits: number[] = [];
    exec.patchFentry(1, true);
    exec.fentry = () => hits.push(4);
    exec.setBreakpoint(fns[1], 0, () => hits.push(0));
    exec.setBreakpoint(fns[1], 9, (addr) => hits.push(Number(addr - fns[1].addr)));
    exec.call(task, 'vfs_read');
    expect(hits).toEqual([0, 4, 9]);
  });
});

describe('call executor: tail calls, recursion, nesting', () => {
  it('a tail call returns straight to the tail caller\'s caller through the same slot', () => {
    const { exec, task, mem, fns } = setup();
    const seen: string[] = [];
    exec.patchFentry(1, true);
    exec.patchFentry(2, true);
    exec.fentry = (ip, parent, regs, t) => seen.push(`${fns.find((f) => f.addr + 4n === ip)!.name}<-${parent.toString(16)} depth=${t.frames.length} slot=${mem.readU64(regs.sp)!.toString(16)}`);
    exec.define('ksys_read', (x) => x.call('vfs_read'));
    exec.define('vfs_read', (x) => x.tail('rw_verify_area', [9n]));
    exec.define('rw_verify_area', (x) => x.args[0]);
    expect(exec.call(task, 'ksys_read')).toBe(9n);
    // rw_verify_area sits where vfs_read sat: same depth, same return address.
    expect(seen[0]!.split('<-')[1]).toBe(seen[1]!.split('<-')[1]);
    expect(seen[0]!.endsWith('depth=2 slot=' + seen[0]!.split('<-')[1]!.split(' ')[0])).toBe(true);
    expect(seen[1]!).toContain('depth=2');
    expect(task.frames).toHaveLength(0);
    expect(exec.corruptions).toBe(0);
  });

  it('recursion nests frames with distinct return slots, and unwinds them all', () => {
    const { exec, task, mem } = setup();
    const slots: bigint[] = [];
    exec.patchFentry(2, true);
    exec.fentry = (_ip, _p, regs) => slots.push(regs.sp);
    exec.define('rw_verify_area', (x) => (x.args[0]! > 0n ? (x.call('rw_verify_area', [x.args[0]! - 1n]) as bigint) + 1n : 0n));
    expect(exec.call(task, 'rw_verify_area', [5n])).toBe(5n);
    expect(slots).toHaveLength(6);
    for (let i = 1; i < slots.length; i++) expect(slots[i]).toBeLessThan(slots[i - 1]!);
    // Each inner return address is inside rw_verify_area itself.
    expect(mem.readU64(slots[5]!)! >= 0xffffffff81002000n).toBe(true);
    expect(task.frames).toHaveLength(0);
  });
});
