/**
 * rmdir instances/NAME lets the instance go: nothing shared (the tracer
 * registry's watch for later tracers' option files) keeps its file tree,
 * event files or ring buffers alive. Each ftracetest run makes and removes
 * instances; a watch left behind grew the daemon past its heap limit.
 */
import { describe, expect, it } from 'vitest';
import { nopTracer } from '../../src/trace/tracer.js';
import { setup } from '../helpers/tracefs.js';

describe('instance lifetime', () => {
  it('rmdir drops the instance from the tracer registry watchers, and a later tracer reaches only live arrays', async () => {
    const { fs, tracing, read } = setup();
    const before = tracing.tracers.onRegister.size;
    fs.mkdir('instances/a');
    fs.mkdir('instances/b');
    expect(tracing.tracers.onRegister.size).toBe(before + 2);
    fs.rmdir('instances/a');
    expect(tracing.tracers.onRegister.size).toBe(before + 1);
    // the live instance still gets a later tracer's option files
    tracing.tracers.register({ ...nopTracer, name: 'emu_test', options: [{ name: 'emu_test_opt', default: false }] });
    expect(await read('instances/b/options/emu_test_opt')).toBe('0\n');
    fs.rmdir('instances/b');
    expect(tracing.tracers.onRegister.size).toBe(before);
  });
});
