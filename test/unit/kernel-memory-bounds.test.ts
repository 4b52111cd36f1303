import { describe, expect, it } from 'vitest';
import { testEmulator } from '../helpers/emulator.js';

/** Pages mapped in an address space (the count is private; tests look through). */
function pageCount(space: unknown): number {
  return (space as { pages: Map<number, unknown> }).pages.size;
}

describe('emulated memory stays bounded under repeated system calls', () => {
  it('reuses a process read buffer of a page-multiple size', async () => {
    const { fs, kernel } = testEmulator({ callPaths: true, activity: 0 });
    await fs.writeFile('current_tracer', 'function\n'); // system calls run their full paths only when traced
    await fs.readFile('tracing_on');
    const task = [...kernel.tasks.all()].find((t) => t.pid === process.pid)!;
    const before = pageCount(task.mm);
    for (let i = 0; i < 20; i++) await fs.readFile('tracing_on');
    expect(pageCount(task.mm)).toBe(before);
  });

  it('reaches a steady state over rounds of opens of many distinct paths', async () => {
    const { fs, kernel } = testEmulator({ callPaths: true, activity: 0 });
    await fs.writeFile('current_tracer', 'function\n');
    const paths: string[] = [];
    for (const sys of fs.readdir('events')) {
      if (fs.stat(`events/${sys}`).mode & 0o040000)
        for (const ev of fs.readdir(`events/${sys}`)) if (fs.stat(`events/${sys}/${ev}`).mode & 0o040000) paths.push(`events/${sys}/${ev}/id`);
    }
    const rounds: number[] = [];
    for (let r = 0; r < 3; r++) {
      for (const p of paths) await fs.readFile(p).catch(() => undefined);
      rounds.push(pageCount(kernel.kmem.space));
    }
    // Path copies (names_cache), files and dentries are given back: later rounds map no new pages.
    expect(rounds[2]).toBe(rounds[1]);
  }, 120_000);
});
