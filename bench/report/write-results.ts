import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SuiteResult } from '../harness/results.ts';
import { markdownReport } from './markdown.ts';
import { svgChart } from './svg-chart.ts';

export interface WrittenFiles {
  readonly json: string;
  readonly svg: string;
  readonly markdown: string;
}

/** `<dir>/<name>.json|.svg|.md`; `latest` by default. */
export async function writeResults(result: SuiteResult, dir: string, name = 'latest'): Promise<WrittenFiles> {
  await mkdir(dir, { recursive: true });
  const files = {
    json: join(dir, `${name}.json`),
    svg: join(dir, `${name}.svg`),
    markdown: join(dir, `${name}.md`),
  };
  await writeFile(files.json, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(files.svg, svgChart(result));
  await writeFile(files.markdown, markdownReport(result));
  return files;
}
