import { describe, expect, it } from 'vitest';
import { profileOf } from '../../src/kernel/series.js';
import type { EventField } from '../../src/trace/event_type.js';
import { compileFilter, runFilter } from '../../src/trace/events/filter/filter_parser.js';

const fields: EventField[] = [
  { type: 'char[16]', name: 'prev_comm', offset: 8, size: 16, signed: false },
  { type: 'pid_t', name: 'prev_pid', offset: 24, size: 4, signed: true },
  { type: 'long', name: 'prev_state', offset: 32, size: 8, signed: true },
  { type: 'unsigned char', name: 'u8', offset: 40, size: 1, signed: false },
  { type: '__data_loc char[]', name: 'name', offset: 44, size: 4, signed: false },
];

function rec(comm: string, pid: number, state: bigint, u8: number, name: string): Buffer {
  const b = Buffer.alloc(48 + name.length + 1);
  b.write(comm, 8, 'latin1');
  b.writeInt32LE(pid, 24);
  b.writeBigInt64LE(state, 32);
  b.writeUInt8(u8, 40);
  b.writeUInt32LE(((name.length + 1) << 16) | 48, 44);
  b.write(name, 48, 'latin1');
  b.writeInt32LE(pid, 4);
  return b;
}

function keeps(filter: string, data: Buffer, cpu = 0, comm = 'sh'): boolean {
  return runFilter(compileFilter(filter, { fields, profile: profileOf('7.2') }), { data, cpu, comm });
}

describe('filter evaluation', () => {
  const r = rec('bash', -5, 0x402n, 200, 'names_cache');
  it.each([
    ['prev_pid == -5', true],
    ['prev_pid < 0', true],
    ['prev_pid > -6 && prev_pid <= -5', true],
    ['prev_pid != -5', false],
    ['prev_state & 2', true],
    ['prev_state & 1', false],
    ['u8 > 100', true],
    ['u8 == 200', true],
    ['prev_comm == "bash"', true],
    ['prev_comm == "bas"', false],
    ['prev_comm ~ "ba*"', true],
    ['prev_comm ~ "*as*"', true],
    ['prev_comm ~ "b?sh"', true],
    ['prev_comm ~ "[ab]ash"', true],
    ['prev_comm ~ "!bash"', false],
    ['prev_comm != "zsh"', true],
    ['name == "names_cache"', true],
    ['name ~ "*cache"', true],
    ['name ~ "names*"', true],
    ['common_pid == -5', true],
    ['CPU == 1', true],
    ['cpu != 1', false],
    ['comm == "sh"', true],
    ['COMM ~ "s*"', true],
    ['!(prev_pid == -5)', false],
    ['prev_pid == 1 || prev_comm == "bash"', true],
    ['prev_pid == 1 || prev_comm == "zsh" && u8 == 200', false],
    ['(prev_pid == 1 || prev_comm == "bash") && u8 == 200', true],
    ['!(prev_pid == 1 || u8 == 7)', true],
    ['prev_pid == 0xfffffffb', true],
  ])('%s -> %s', (f, want) => {
    expect(keeps(f as string, r, 1)).toBe(want);
  });
});
