/**
 * Runs every micro benchmark (bench/micro/*.bench.ts and the load-balancing ones in bench/) one after the
 * other, each in its own process with --expose-gc, pinned to one core when taskset is available.
 *
 *   node --import tsx bench/micro/run.ts [name-filter]
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCommand, pinnedArgv } from '../harness/affinity.ts';

const projectDir = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const filter = process.argv[2] ?? '';
const microDir = join(projectDir, 'bench/micro');
const files = [
  ...readdirSync(microDir)
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => join(microDir, f)),
  join(projectDir, 'bench/lb-picker.bench.ts'),
].filter((f) => f.includes(filter));

const cpus = hasCommand('taskset') ? '0' : '';
let failed = 0;
for (const file of files) {
  process.stdout.write(`\n### ${relative(projectDir, file)}\n`);
  const [command, args] = pinnedArgv(cpus, process.execPath, ['--import', 'tsx', '--expose-gc', file]);
  const result = spawnSync(command, args, { cwd: projectDir, stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
