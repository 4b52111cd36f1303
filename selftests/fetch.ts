/**
 * The kernel's ftrace selftests of a series, fetched from Debian's
 * `linux-source-X.Y` into a cache outside the repository (only
 * tools/testing/selftests/ftrace is kept), with their `poll` helper built.
 *
 * Where apt looks: the machine's own configuration first (6.12 is in
 * bookworm-security); for a series it does not carry, a private apt
 * configuration in the cache (its own sources.list, lists and archives,
 * passed with -o Dir::…; the system's configuration is never touched) that
 * reaches Debian's newer suites through the archive and keyring the
 * machine's own sources use for its release.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type AptSource, machineArchive, readAptSources, releaseCodename } from './apt_sources.js';
import { newestVersion } from './debian_version.js';

/** Suites of the private configuration: unstable, and backports of the current stable. */
export const PRIVATE_SUITES = ['sid', 'trixie-backports'];

export type AptWhich = 'system' | 'private';

export interface FetchOptions {
  series: string;
  /** Pin a linux-source version (else the recorded choice, else the newest). */
  version?: string;
  /** Choose the newest version again instead of the recorded one. */
  refresh?: boolean;
  cacheRoot?: string;
  /** Progress messages (default: stderr). */
  log?: (msg: string) => void;
}

export interface FetchedSelftests {
  /** The ftrace selftests directory (holds ftracetest and test.d). */
  dir: string;
  series: string;
  version: string;
  /** Where it came from this time. */
  from: 'cache' | AptWhich;
}

/** ${TRACEFS_EMU_CACHE:-${XDG_CACHE_HOME:-~/.cache}/tracefs-emu} */
export function cacheRoot(): string {
  return process.env.TRACEFS_EMU_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tracefs-emu');
}

export function selftestsDir(root: string, series: string, version: string): string {
  return join(root, 'selftests', series, version, 'ftrace');
}

/** apt -o options of a configuration: none for the system's, private dirs in the cache for ours. */
export function aptOptions(which: AptWhich, root: string): string[] {
  const opts = process.getuid?.() === 0 ? ['-o', 'APT::Sandbox::User=root'] : [];
  if (which === 'system') return opts;
  const d = join(root, 'apt');
  return [
    ...opts,
    '-o', `Dir::Etc::sourcelist=${join(d, 'sources.list')}`,
    '-o', `Dir::Etc::sourceparts=${join(d, 'sources.list.d')}`,
    '-o', `Dir::State::Lists=${join(d, 'lists')}`,
    '-o', `Dir::Cache=${join(d, 'cache')}`,
  ];
}

/** The private sources.list: the machine's archive (URI, keyring) with the newer suites. */
export function privateSourcesList(archive: Pick<AptSource, 'uri' | 'signedBy'>, suites = PRIVATE_SUITES): string {
  const opt = archive.signedBy ? `[signed-by=${archive.signedBy}] ` : '';
  return suites.map((s) => `deb ${opt}${archive.uri} ${s} main\n`).join('');
}

function writePrivateConfig(root: string): void {
  const release = releaseCodename();
  if (!release) throw new Error('fetch: no VERSION_CODENAME in /etc/os-release');
  const archive = machineArchive(readAptSources(), release);
  if (!archive) throw new Error(`fetch: no apt source for this machine's release (${release}) in /etc/apt: its archive is needed to reach ${PRIVATE_SUITES.join(', ')}`);
  const d = join(root, 'apt');
  for (const sub of ['sources.list.d', 'lists/partial', 'cache/archives/partial']) mkdirSync(join(d, sub), { recursive: true });
  writeFileSync(join(d, 'sources.list.tmp'), privateSourcesList(archive));
  renameSync(join(d, 'sources.list.tmp'), join(d, 'sources.list'));
}

function run(cmd: string, args: string[], opts: { cwd?: string; log: (m: string) => void; quiet?: boolean }): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { cwd: opts.cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw new Error(`fetch: cannot run ${cmd}: ${r.error.message}`);
  if (r.status !== 0 && !opts.quiet) opts.log(`${cmd} ${args.filter((a) => !a.startsWith('Dir::') && a !== '-o').join(' ')}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
  return { ok: r.status === 0, out: r.stdout };
}

/** Versions of a package that an apt configuration knows (apt-cache madison). */
function versionsOf(pkg: string, which: AptWhich, root: string, log: (m: string) => void): string[] {
  const r = run('apt-cache', [...aptOptions(which, root), 'madison', pkg], { log, quiet: true });
  return parseMadison(r.out, pkg);
}

export function parseMadison(out: string, pkg: string): string[] {
  const vs = new Set<string>();
  for (const line of out.split('\n')) {
    const [name, version] = line.split('|').map((s) => s.trim());
    if (name === pkg && version) vs.add(version);
  }
  return [...vs];
}

function aptUpdate(which: AptWhich, root: string, log: (m: string) => void): boolean {
  if (which === 'private') writePrivateConfig(root);
  log(`apt-get update (${which === 'private' ? `private configuration in ${join(root, 'apt')}: ${PRIVATE_SUITES.join(' ')}` : 'system'})`);
  return run('apt-get', ['-q', ...aptOptions(which, root), 'update'], { log }).ok;
}

interface Choice {
  version: string;
  apt: AptWhich;
}

function readChoice(file: string): Choice | undefined {
  try {
    const t = readFileSync(file, 'utf8');
    const version = /^version (\S+)$/m.exec(t)?.[1];
    const apt = /^apt (system|private)$/m.exec(t)?.[1] as AptWhich | undefined;
    return version && apt ? { version, apt } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where linux-source-X.Y is to be had, and which version: the pinned one or
 * the newest; the machine's apt first, then the private one, then the
 * machine's after an update of its lists.
 */
function choose(pkg: string, root: string, pin: string | undefined, log: (m: string) => void): Choice {
  const pick = (which: AptWhich): Choice | undefined => {
    const vs = versionsOf(pkg, which, root, log);
    const version = pin ? vs.find((v) => v === pin) : newestVersion(vs);
    return version ? { version, apt: which } : undefined;
  };
  const tried: string[] = [];
  for (const step of ['system', 'private', 'system-updated'] as const) {
    const which: AptWhich = step === 'private' ? 'private' : 'system';
    if (step !== 'system' && !aptUpdate(which, root, log)) {
      tried.push(`${step}: update failed`);
      continue;
    }
    const c = pick(which);
    if (c) return c;
    tried.push(`${step}: none`);
  }
  throw new Error(`fetch: no ${pkg}${pin ? ` ${pin}` : ''} found (${tried.join('; ')})`);
}

/** The selftests of a series: from the cache, else downloaded and extracted. */
export async function fetchSelftests(opts: FetchOptions): Promise<FetchedSelftests> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`selftests: ${m}\n`));
  const root = opts.cacheRoot ?? cacheRoot();
  const series = opts.series;
  const pkg = `linux-source-${series}`;
  const seriesDir = join(root, 'selftests', series);
  const choiceFile = join(seriesDir, 'choice');
  const pin = opts.version ?? (process.env.TRACEFS_EMU_SELFTESTS_VERSION || undefined);

  // Offline first: a pinned or recorded version already in the cache.
  const recorded = readChoice(choiceFile);
  const cachedVersion = pin ?? (opts.refresh ? undefined : recorded?.version);
  if (cachedVersion && existsSync(join(selftestsDir(root, series, cachedVersion), 'ftracetest'))) {
    const dir = selftestsDir(root, series, cachedVersion);
    buildPoll(dir, log);
    return { dir, series, version: cachedVersion, from: 'cache' };
  }

  mkdirSync(seriesDir, { recursive: true });
  const choice = !pin && !opts.refresh && recorded ? recorded : choose(pkg, root, pin, log);
  if (!pin) writeFileSync(choiceFile, `series ${series}\nversion ${choice.version}\napt ${choice.apt}\n`);
  const dir = selftestsDir(root, series, choice.version);
  if (!existsSync(join(dir, 'ftracetest'))) await downloadAndExtract(pkg, choice, root, dir, log);
  buildPoll(dir, log);
  return { dir, series, version: choice.version, from: choice.apt };
}

async function downloadAndExtract(pkg: string, choice: Choice, root: string, dir: string, log: (m: string) => void): Promise<void> {
  mkdirSync(root, { recursive: true });
  const tmp = mkdtempSync(join(root, '.dl.'));
  try {
    const spec = `${pkg}=${choice.version}`;
    log(`downloading ${spec} (${choice.apt} apt) for its ftrace selftests`);
    let dl = run('apt-get', ['-q', ...aptOptions(choice.apt, root), 'download', spec], { cwd: tmp, log });
    if (!dl.ok && aptUpdate(choice.apt, root, log)) dl = run('apt-get', ['-q', ...aptOptions(choice.apt, root), 'download', spec], { cwd: tmp, log });
    if (!dl.ok) throw new Error(`fetch: apt-get download ${spec} failed (choose again with --refresh)`);
    const deb = readdirSync(tmp).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`fetch: apt-get download ${spec} left no .deb`);
    const listing = run('dpkg-deb', ['-c', join(tmp, deb)], { log }).out;
    const member = listing
      .split('\n')
      .map((l) => l.split(/\s+/).pop() ?? '')
      .find((m) => m === `./usr/src/${pkg}.tar.xz` || new RegExp(`^\\./usr/src/${pkg.replace(/\./g, '\\.')}\\.tar\\.[a-z0-9]+$`).test(m));
    if (!member) throw new Error(`fetch: no usr/src/${pkg}.tar.* in ${deb}`);
    const z = member.endsWith('.xz') ? '-J' : member.endsWith('.zst') ? '--zstd' : member.endsWith('.gz') ? '-z' : '-j';
    log(`extracting tools/testing/selftests/ftrace from ${member.slice(2)}`);
    const x = join(tmp, 'x');
    mkdirSync(x);
    // deb → data tar → the kernel tarball → only the ftrace selftests, streamed.
    await pipeline(
      'dpkg-deb --fsys-tarfile "$1" | tar -xO "$2" | tar -x "$3" -C "$4" --wildcards "*/tools/testing/selftests/ftrace/*"',
      [join(tmp, deb), member, z, x],
    );
    const top = readdirSync(x).find((d) => existsSync(join(x, d, 'tools/testing/selftests/ftrace/ftracetest')));
    if (!top) throw new Error(`fetch: no tools/testing/selftests/ftrace/ftracetest in ${member}`);
    const staged = join(tmp, 's');
    mkdirSync(staged);
    renameSync(join(x, top, 'tools/testing/selftests/ftrace'), join(staged, 'ftrace'));
    writeFileSync(join(staged, 'version'), `${pkg} ${choice.version}\n`);
    const final = join(dir, '..');
    rmSync(final, { recursive: true, force: true });
    mkdirSync(join(final, '..'), { recursive: true });
    renameSync(staged, final);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function pipeline(script: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn('sh', ['-c', `set -e; ${script}`, 'sh', ...args], { stdio: ['ignore', 'inherit', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fetch: extraction failed (${code}): ${err.trim().slice(-500)}`))));
  });
}

/**
 * The selftests' `poll` helper (their Makefile's TEST_GEN_FILES; run by
 * trigger-hist-poll.tc), compiled with the host's cc as `make` would, when
 * the selftests have poll.c but no poll.
 */
export function buildPoll(dir: string, log: (m: string) => void): boolean {
  const src = join(dir, 'poll.c');
  const out = join(dir, 'poll');
  if (!existsSync(src)) return true;
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) return true;
  const cc = process.env.CC || 'cc';
  const r = spawnSync(cc, ['-O2', '-o', out, src], { encoding: 'utf8' });
  if (r.status !== 0) {
    log(`could not build ${out} with ${cc} (trigger-hist-poll.tc needs it): ${(r.stderr || r.error?.message || '').trim()}`);
    return false;
  }
  return true;
}
