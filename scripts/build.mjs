// npm run build: compile src/ to dist/ (tsconfig.build.json), then copy what tsc does not emit: the topology
// page's static files (src/admin/ui), served by the admin server from beside its compiled module.
import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
cpSync('src/admin/ui', 'dist/admin/ui', { recursive: true });
