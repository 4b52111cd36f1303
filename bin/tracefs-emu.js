#!/usr/bin/env node
// Entry point: the compiled CLI (npm run build, or scripts/setup.sh, makes it).
import('../dist/src/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli.js')) {
    console.error('tracefs-emu: not built yet; run: sh scripts/setup.sh');
    process.exit(1);
  }
  throw err;
});
