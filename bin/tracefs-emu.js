#!/usr/bin/env node
// Entry point: the compiled CLI (npm run build, or scripts/setup.sh, makes it):
// the library's commands, then the repository's selftests, bench and fuzz.
const entry = new URL('../dist/src/cli/index.js', import.meta.url);
const cli = await import(entry.href).catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && err.url === entry.href) {
    console.error('tracefs-emu: not built yet; run: sh scripts/setup.sh');
    process.exit(1);
  }
  throw err;
});
const { selftestsCommand } = await import('../dist/selftests/command.js');
const { benchCommand } = await import('../dist/bench/command.js');
const { fuzzCommand } = await import('../dist/bench/fuzz.js');
await cli.runCli([...cli.COMMANDS, selftestsCommand, benchCommand, fuzzCommand]);
