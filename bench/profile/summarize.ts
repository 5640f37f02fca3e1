import { summarizeProfileFile } from './summarize-cpuprofile.ts';

/** Usage: node --import tsx bench/profile/summarize.ts <file.cpuprofile> [top] */
const [file, top] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node --import tsx bench/profile/summarize.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
process.stdout.write(await summarizeProfileFile(file, top ? Number(top) : 30));
