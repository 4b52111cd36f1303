#!/usr/bin/env node
// Extracts the offset scan (tools/probe-defs/offset-scan.sh, run after the
// table by `collect.mjs --extra`) from a raw oracle output into
// test/fixtures/kprobe-offsets-<series>.txt: one line per probe,
// `FUNC p+OFF RESULT` or `FUNC r+4 RESULT`, RESULT being ok, EILSEQ (not an
// instruction boundary), EINVAL (the kernel refused to register), BAD_RETPROBE
// (not the function's entry), or the error_log message.
//
//   node tools/probe-defs/collect.mjs --series 7.2 --raw-dir DIR --extra tools/probe-defs/offset-scan.sh
//   node tools/probe-defs/offsets.mjs --series 7.2 --from-raw DIR/7.2-0.raw
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name) => args[args.indexOf(name) + 1];
const series = opt('--series');
const raw = readFileSync(opt('--from-raw'), 'latin1');
const RESULT = {
  ok: 'ok',
  'Probe point is not an instruction boundary': 'EILSEQ',
  'Failed to register probe event': 'EINVAL',
  'Retprobe address must be an function entry': 'BAD_RETPROBE',
};
const out = [];
for (const l of raw.split('\n')) {
  const m = /^@@(OFF|RET) (\S+) (?:(\d+) )?(.*)$/.exec(l);
  if (!m) continue;
  out.push(`${m[2]} ${m[1] === 'OFF' ? `p+${m[3]}` : 'r+4'} ${RESULT[m[4]] ?? m[4]}`);
}
if (!raw.includes('@@SCANDONE')) throw new Error('the scan did not finish');
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
writeFileSync(join(repo, 'test', 'fixtures', `kprobe-offsets-${series}.txt`), out.join('\n') + '\n');
console.error(`${series}: ${out.length} probes`);
