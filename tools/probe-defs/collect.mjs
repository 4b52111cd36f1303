#!/usr/bin/env node
// Collects the differential table of probe definitions from a real kernel.
//
//   npx tsc -p tsconfig.json        # generate.mjs reads the emulator's model from dist/
//   node tools/probe-defs/collect.mjs --series 7.2 [--gen 10000] [--seed 17]
//        [--boots 4] [--raw-dir DIR] [--sample N] [--out FILE] [--extra snippet.sh]
//
// The rows are the hand-written ones of rows.mjs followed by --gen rows of the
// seeded grammar of generate.mjs (default 10000, seed 17: the committed tables).
// They run through the kernel oracle ($KERNEL_ORACLE, else
// ../shared/tools/kernel-oracle beside the repository) in --boots boots, one
// after the other (default one: the 11,000 rows took 3 to 8 minutes of TCG on
// a loaded 2-core machine, 6.12 the slowest; a boot must stay under its 3000 s
// limit). Each row is written by guest-writer.c, built static here with cc and
// shipped in the job script: no shell fork per step (a shell script spent
// about 0.3 s per row starting cat, grep and awk). The raw output
// of boot k is kept as DIR/SERIES-k.raw (default: a temporary directory) and
// reused when it is there, so an interrupted collection resumes.
// --sample N runs only the first N generated rows (one boot, prints a summary and the
// boot time, writes no table): to size the boots.
// --extra appends a shell snippet to the last boot, after the table (its output
// follows the @@DONE line of the raw output).
//
// Writes test/fixtures/probe-defs.SERIES.json.br (or --out FILE, to try another
// seed without touching the committed table): brotli'd JSON, one object per
// row with only what the check compares (empty fields left out). Strings are
// byte strings: one char per byte (latin1), as the kernel sees them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import handRows from './rows.mjs';
import { generate } from './generate.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const ORACLE = process.env.KERNEL_ORACLE ?? join(repo, '..', 'shared', 'tools', 'kernel-oracle');

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const series = opt('--series') ?? '7.2';
const seed = Number(opt('--seed') ?? 17);
const genCount = Number(opt('--gen') ?? 10000);
const sample = opt('--sample') === undefined ? undefined : Number(opt('--sample'));
const boots = sample ? 1 : Number(opt('--boots') ?? 1);
const rawDir = opt('--raw-dir') ?? mkdtempSync(join(tmpdir(), 'probe-defs-'));
mkdirSync(rawDir, { recursive: true });

const generated = await generate({ seed, count: genCount });
const rows = sample ? generated.slice(0, sample) : [...handRows, ...generated];

/** errno numbers of x86_64 Linux → names. */
const ERRNO = {
  1: 'EPERM', 2: 'ENOENT', 3: 'ESRCH', 4: 'EINTR', 5: 'EIO', 6: 'ENXIO', 7: 'E2BIG', 8: 'ENOEXEC', 9: 'EBADF',
  11: 'EAGAIN', 12: 'ENOMEM', 13: 'EACCES', 14: 'EFAULT', 16: 'EBUSY', 17: 'EEXIST', 19: 'ENODEV', 20: 'ENOTDIR',
  21: 'EISDIR', 22: 'EINVAL', 25: 'ENOTTY', 27: 'EFBIG', 28: 'ENOSPC', 30: 'EROFS', 33: 'EDOM', 34: 'ERANGE',
  36: 'ENAMETOOLONG', 38: 'ENOSYS', 39: 'ENOTEMPTY', 75: 'EOVERFLOW', 84: 'EILSEQ', 95: 'EOPNOTSUPP',
  99: 'EADDRNOTAVAIL', 125: 'ECANCELED', 524: 'ENOTSUPP',
};
const errnoName = (n) => (n === 0 ? 0 : ERRNO[n] ?? `E#${n}`);

/** The guest helper, static so that it needs nothing from the guest. */
function writerBinary() {
  const out = join(rawDir, 'guest-writer');
  execFileSync('cc', ['-static', '-O2', '-s', '-o', out, join(here, 'guest-writer.c')], { stdio: 'inherit' });
  return readFileSync(out);
}

const hex = (s) => Buffer.from(s, 'latin1').toString('hex');

function script(indexes, bin, extra) {
  const input = [];
  for (const i of indexes) {
    const row = rows[i];
    input.push(`R ${i}`);
    for (const s of row.setup ?? []) input.push(`S ${s.file} ${hex(s.def)}`);
    input.push(`D ${row.file} ${hex(row.def)}`);
  }
  const b64 = bin.toString('base64').replace(/.{76}/g, '$&\n');
  return [
    "base64 -d > /tmp/gw <<'@@BIN'", b64, '@@BIN', 'chmod +x /tmp/gw',
    "cat > /tmp/rows <<'@@ROWS'", ...input, '@@ROWS',
    '/tmp/gw < /tmp/rows',
    extra ?? '',
  ].join('\n') + '\n';
}

function parseErrorLog(lines) {
  const entries = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^\[\s*\d+\.\d+\] (.*?): error: (.*)$/.exec(lines[i]);
    if (!m) continue;
    const cmdLine = lines[i + 1] ?? '';
    const caretLine = lines[i + 2] ?? '';
    const PREFIX = '  Command: ';
    const command = cmdLine.startsWith(PREFIX) ? cmdLine.slice(PREFIX.length) : cmdLine;
    const caret = caretLine.indexOf('^') - PREFIX.length;
    // a caret past the command comes from a pointer difference (parse_btf_field()
    // subtracting from NULL): not reproducible, compared by presence only
    entries.push({ subsystem: m[1], message: m[2], command, caret: caret > command.length + 1 ? null : caret });
    i += 2;
  }
  return entries;
}

function parse(raw) {
  const lines = raw.split('\n');
  const result = { kernel: '', cpus: 0, rows: [] };
  let cur = null;
  let mode = null;
  let fmtKey = null;
  let target = null;
  let buf = {};
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li];
    if (line.startsWith('@@KERNEL ')) {
      const [, k, c] = line.split(' ');
      result.kernel = k;
      result.cpus = Number(c);
      continue;
    }
    if (line.startsWith('@@ROW ')) {
      const i = Number(line.slice(6));
      const row = rows[i];
      cur = { id: `${row.section}/${i}`, file: row.file, def: '', setup: [], errno: null };
      if (row.def.includes('{{')) cur.template = row.def;
      buf = { errlog: [], dyn: [], file: [], formats: {} };
      result.rows.push(cur);
      mode = null;
      continue;
    }
    if (line === '@@DONE') break;
    if (line === '@@RESETFAIL') throw new Error(`reset failed before ${cur?.id}`);
    if (line === '@@SETUP') {
      const s = rows[Number(cur.id.split('/').pop())].setup[cur.setup.length];
      target = { file: s.file, def: s.def, errno: null };
      cur.setup.push(target);
      continue;
    }
    if (line === '@@DEF') {
      // the definition may span lines; the helper added the last newline
      const parts = [];
      while (lines[li + 1] !== '@@WRITE') parts.push(lines[++li]);
      cur.def = parts.join('\n');
      continue;
    }
    if (line.startsWith('@@ADDR ')) {
      const [, sym, addr] = line.split(' ');
      (cur.addrs ??= {})[sym] = addr ?? '';
      continue;
    }
    if (line === '@@WRITE') { target = cur; continue; }
    if (line.startsWith('@@ERRNO ')) { target.errno = errnoName(Number(line.slice(8))); continue; }
    if (line === '@@ERRLOG') { mode = 'errlog'; continue; }
    if (line === '@@DYN') { mode = 'dyn'; continue; }
    if (line === '@@FILE') { mode = 'file'; continue; }
    if (line.startsWith('@@FMT ')) { mode = 'fmt'; fmtKey = line.slice(6); buf.formats[fmtKey] = ''; continue; }
    if (line === '@@END') {
      const log = parseErrorLog(buf.errlog);
      if (log.length) cur.errorLog = log;
      if (buf.dyn.length) cur.listing = buf.dyn;
      if (cur.file !== 'dynamic_events' && buf.file.length) cur.fileListing = buf.file;
      const fmts = Object.entries(buf.formats).filter(([, t]) => t !== '');
      if (fmts.length) cur.formats = Object.fromEntries(fmts);
      if (!cur.setup.length) delete cur.setup;
      mode = null;
      continue;
    }
    switch (mode) {
      case 'errlog': buf.errlog.push(line); break;
      case 'dyn': buf.dyn.push(line); break;
      case 'file': buf.file.push(line); break;
      case 'fmt': buf.formats[fmtKey] += line + '\n'; break;
      default: break;
    }
  }
  return result;
}

const bin = writerBinary();
const all = rows.map((_, i) => i);
const per = Math.ceil(all.length / boots);
const parsed = [];
for (let b = 0; b < boots; b++) {
  const indexes = all.slice(b * per, (b + 1) * per);
  const rawPath = join(rawDir, `${series}-${b}${sample ? '-sample' : ''}.raw`);
  let raw;
  if (existsSync(rawPath) && !sample) {
    raw = readFileSync(rawPath, 'latin1');
  } else {
    const t0 = Date.now();
    raw = execFileSync(ORACLE, ['--series', series, '--timeout', '3000', 'run', '-'], {
      input: Buffer.from(script(indexes, bin, b === boots - 1 && opt('--extra') ? readFileSync(opt('--extra'), 'latin1') : ''), 'latin1'),
      maxBuffer: 1 << 30,
      stdio: ['pipe', 'pipe', 'inherit'],
    }).toString('latin1');
    writeFileSync(rawPath, raw, 'latin1');
    console.error(`${series} boot ${b + 1}/${boots}: ${indexes.length} rows in ${((Date.now() - t0) / 1000).toFixed(0)} s (${rawPath})`);
  }
  const data = parse(raw);
  if (data.rows.length !== indexes.length) throw new Error(`boot ${b}: got ${data.rows.length} of ${indexes.length} rows (${rawPath})`);
  parsed.push(data);
}
const data = { kernel: parsed[0].kernel, cpus: parsed[0].cpus, rows: parsed.flatMap((p) => p.rows) };
const accepted = data.rows.filter((r) => r.errno === 0).length;
const messages = new Set(data.rows.flatMap((r) => (r.errorLog ?? []).map((e) => e.message)));
console.error(`${series}: ${data.rows.length} rows (${accepted} accepted, ${messages.size} distinct error_log messages), kernel ${data.kernel}, ${data.cpus} cpus`);
if (sample) process.exit(0);
/** The kernel package the oracle booted, as its `info` tells it (`linux-image-X.Y.Z+debN-amd64 VERSION`). */
const info = execFileSync(ORACLE, ['--series', series, 'info']).toString();
const image = /^kernel:\s+(\S+ \S+)/m.exec(info)?.[1] ?? '?';
const out = {
  series,
  image,
  kernel: data.kernel,
  cpus: data.cpus,
  collected: new Date().toISOString().slice(0, 10),
  collectedBy: `tools/probe-defs/collect.mjs --gen ${genCount} --seed ${seed}`,
  rows: data.rows,
};
const json = Buffer.from(JSON.stringify(out), 'latin1');
writeFileSync(opt('--out') ?? join(repo, 'test', 'fixtures', `probe-defs.${series}.json.br`), brotliCompressSync(json, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: json.length } }));
