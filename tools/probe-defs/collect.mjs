#!/usr/bin/env node
// Collects the differential table of probe definitions from a real kernel.
//
//   node tools/probe-defs/collect.mjs --series 7.2 [--raw out.txt] [--from-raw out.txt] [--extra snippet.sh]
//
// --extra appends a shell snippet to the same boot, after the table (its
// output follows the @@DONE line of the raw output: one boot for several
// questions).
// Generates one shell script for every row of rows.mjs, runs it once through
// the kernel oracle (one boot; $KERNEL_ORACLE, else ../shared/tools/kernel-oracle
// beside the repository), parses the output and writes
// test/fixtures/probe-defs.<series>.json. Strings are byte strings: one char per
// byte (latin1), as the kernel sees them.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import rows from './rows.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const ORACLE = process.env.KERNEL_ORACLE ?? join(repo, '..', 'shared', 'tools', 'kernel-oracle');

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const series = opt('--series') ?? '7.2';
const sections = opt('--sections')?.split(',');
/** Rows to run (all, or those of --sections: a trial run that writes nothing). */
const selected = rows.map((r, i) => i).filter((i) => !sections || sections.includes(rows[i].section));

/** glibc strerror() text (what busybox cat prints) → errno name. */
const STRERROR = {
  'Operation not permitted': 'EPERM',
  'No such file or directory': 'ENOENT',
  'Input/output error': 'EIO',
  'No such device or address': 'ENXIO',
  'Argument list too long': 'E2BIG',
  'Bad file descriptor': 'EBADF',
  'Cannot allocate memory': 'ENOMEM',
  'Permission denied': 'EACCES',
  'Bad address': 'EFAULT',
  'Device or resource busy': 'EBUSY',
  'File exists': 'EEXIST',
  'No such device': 'ENODEV',
  'Not a directory': 'ENOTDIR',
  'Is a directory': 'EISDIR',
  'Invalid argument': 'EINVAL',
  'File too large': 'EFBIG',
  'No space left on device': 'ENOSPC',
  'Numerical result out of range': 'ERANGE',
  'File name too long': 'ENAMETOOLONG',
  'Function not implemented': 'ENOSYS',
  'Operation not supported': 'EOPNOTSUPP',
  'Cannot assign requested address': 'EADDRNOTAVAIL',
  'Operation canceled': 'ECANCELED',
  'Invalid or incomplete multibyte or wide character': 'EILSEQ',
  'Unknown error 524': 'ENOTSUPP',
};

/** Single-quotes a byte string for sh; {{ADDR:sym}} becomes a command substitution. */
function shQuote(s) {
  const parts = s.split(/(\{\{ADDR:[^}]+\}\})/);
  return parts
    .map((p) => {
      const m = /^\{\{ADDR:([^}]+)\}\}$/.exec(p);
      if (m) return `"$(addr ${m[1]})"`;
      return p === '' ? '' : `'${p.replaceAll("'", `'\\''`)}'`;
    })
    .join('') || "''";
}

function script() {
  const out = [];
  out.push(String.raw`
addr() { awk -v s="$1" '$3==s {print "0x"$1; exit}' /proc/kallsyms; }
w() {
  msg=$(cat /tmp/d 2>&1 >> "$1"); rc=$?
  echo "@@RC $rc"; [ -n "$msg" ] && echo "@@MSG $msg"
  return 0
}
reset() {
  grep '^e:' dynamic_events | sed 's/^e:\([^ ]*\).*/-:\1/' > /tmp/r
  [ -s /tmp/r ] && cat /tmp/r >> dynamic_events
  echo > dynamic_events || echo "@@RESETFAIL"
}
echo "@@KERNEL $(uname -r) $(nproc)"
`);
  for (const i of selected) {
    const row = rows[i];
    out.push(`echo "@@ROW ${i}"; reset`);
    for (const s of row.setup ?? []) {
      out.push(`printf '%s' ${shQuote(s.def)} > /tmp/d; echo "@@SETUP"; w ${s.file}`);
    }
    // busybox grep -f matches everything with an empty pattern file: keep one line in it
    out.push('echo @@none > /tmp/before; cat dynamic_events >> /tmp/before; echo > error_log');
    out.push(`printf '%s' ${shQuote(row.def)} > /tmp/d; echo "@@DEF"; cat /tmp/d; echo`);
    out.push(`echo "@@WRITE"; w ${row.file}`);
    out.push('echo "@@ERRLOG"; cat error_log; echo "@@DYN"; cat dynamic_events');
    if (row.file !== 'dynamic_events') out.push(`echo "@@FILE"; cat ${row.file}`);
    out.push(String.raw`grep -vxFf /tmp/before dynamic_events | awk '{print $1}' | sed 's/^[^:]*://' | while read ge; do echo "@@FMT $ge"; cat "events/$ge/format"; done`);
    out.push('echo "@@END"');
  }
  out.push('echo "@@DONE"');
  const extra = opt('--extra');
  if (extra) out.push(readFileSync(extra, 'latin1'));
  return out.join('\n') + '\n';
}

function parseErrorLog(lines) {
  const entries = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^\[\s*\d+\.\d+\] (.*?): error: (.*)$/.exec(lines[i]);
    if (!m) continue;
    const cmdLine = lines[i + 1] ?? '';
    const caretLine = lines[i + 2] ?? '';
    const PREFIX = '  Command: ';
    entries.push({
      subsystem: m[1],
      message: m[2],
      command: cmdLine.startsWith(PREFIX) ? cmdLine.slice(PREFIX.length) : cmdLine,
      caret: caretLine.indexOf('^') - PREFIX.length,
    });
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
  let writeState = null;
  const finishWrite = (target, rc, msg) => {
    const text = msg?.replace(/^cat: write error: /, '');
    target.errno = rc === 0 ? 0 : STRERROR[text] ?? `?${text}`;
  };
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
      cur = { id: `${row.section}/${i}`, section: row.section, file: row.file, def: '', setup: [], errno: null, errorLog: [], listing: [], formats: {} };
      if (row.def.includes('{{')) cur.template = row.def;
      if (row.file !== 'dynamic_events') cur.fileListing = [];
      result.rows.push(cur);
      mode = null;
      continue;
    }
    if (line === '@@DONE') break;
    if (line === '@@RESETFAIL') throw new Error(`reset failed before ${cur?.id}`);
    if (line === '@@SETUP') {
      const i = cur.setup.length;
      const s = rows[Number(cur.id.split('/').pop())].setup[i];
      writeState = { file: s.file, def: s.def, errno: null };
      cur.setup.push(writeState);
      mode = 'setup';
      continue;
    }
    if (line === '@@DEF') {
      // the definition may span lines; `echo` added the last newline
      const parts = [];
      while (lines[li + 1] !== '@@WRITE') parts.push(lines[++li]);
      cur.def = parts.join('\n');
      mode = null;
      continue;
    }
    if (line === '@@WRITE') { writeState = cur; mode = 'write'; continue; }
    if (line.startsWith('@@RC ')) {
      const rc = Number(line.slice(5));
      const next = lines[li + 1] ?? '';
      let msg;
      if (next.startsWith('@@MSG ')) { msg = next.slice(6); li++; }
      finishWrite(writeState, rc, msg);
      continue;
    }
    if (line === '@@ERRLOG') { mode = 'errlog'; cur._errlog = []; continue; }
    if (line === '@@DYN') { mode = 'dyn'; continue; }
    if (line === '@@FILE') { mode = 'file'; continue; }
    if (line.startsWith('@@FMT ')) { mode = 'fmt'; fmtKey = line.slice(6); cur.formats[fmtKey] = ''; continue; }
    if (line === '@@END') {
      cur.errorLog = parseErrorLog(cur._errlog);
      delete cur._errlog;
      for (const k of Object.keys(cur.formats)) if (cur.formats[k] === '') delete cur.formats[k];
      mode = null;
      continue;
    }
    switch (mode) {
      case 'errlog': cur._errlog.push(line); break;
      case 'dyn': cur.listing.push(line); break;
      case 'file': cur.fileListing.push(line); break;
      case 'fmt': cur.formats[fmtKey] += line + '\n'; break;
      default: break;
    }
  }
  return result;
}

let raw;
const fromRaw = opt('--from-raw');
if (fromRaw) {
  raw = readFileSync(fromRaw, 'latin1');
} else {
  const sh = script();
  raw = execFileSync(ORACLE, ['--series', series, '--timeout', '3000', 'run', '-'], {
    input: Buffer.from(sh, 'latin1'),
    maxBuffer: 1 << 30,
    stdio: ['pipe', 'pipe', 'inherit'],
  }).toString('latin1');
  const rawOut = opt('--raw');
  if (rawOut) writeFileSync(rawOut, raw, 'latin1');
}
const data = parse(raw);
if (data.rows.length !== selected.length) throw new Error(`got ${data.rows.length} of ${selected.length} rows`);
if (sections) {
  console.log(JSON.stringify(data.rows, null, 1));
  process.exit(0);
}
const out = {
  series,
  kernel: data.kernel,
  cpus: data.cpus,
  collectedBy: 'tools/probe-defs/collect.mjs',
  rows: data.rows,
};
writeFileSync(join(repo, 'test', 'fixtures', `probe-defs.${series}.json`), Buffer.from(JSON.stringify(out, null, 1) + '\n', 'latin1'));
const accepted = data.rows.filter((r) => r.errno === 0).length;
console.error(`${series}: ${data.rows.length} rows (${accepted} accepted), kernel ${data.kernel}, ${data.cpus} cpus`);
