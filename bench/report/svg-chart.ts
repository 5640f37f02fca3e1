import type { SuiteResult } from '../harness/results.ts';
import { formatInt, preferredRows } from './format.ts';

const COLORS: Readonly<Record<string, string>> = {
  direct: '#9e9e9e',
  gateway: '#1f77b4',
  nginx: '#2ca02c',
  haproxy: '#17becf',
  'http-proxy': '#ff7f0e',
  undici: '#9467bd',
  splice: '#8c564b',
  'node-h2': '#e377c2',
};

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

function colorOf(config: string): string {
  const kind = Object.keys(COLORS).find((k) => config === k || config.startsWith(`${k}-`));
  return COLORS[kind ?? 'gateway'] ?? '#1f77b4';
}

/** A horizontal bar chart of req/s per config, one panel per scenario; plain SVG, no dependency. */
export function svgChart(result: SuiteResult): string {
  const width = 960;
  const labelWidth = 300;
  const valueWidth = 150;
  const barArea = width - labelWidth - valueWidth - 20;
  const barHeight = 18;
  const gap = 6;
  const parts: string[] = [];
  let y = 40;
  parts.push(
    `<text x="10" y="24" font-size="16" font-weight="bold">${escapeXml(`clusterset-gateway bench: req/s (${result.machine.cpuModel}, ${result.machine.cores} cores, Node ${result.machine.node})`)}</text>`,
  );
  for (const scenario of result.scenarios) {
    const rows = preferredRows(scenario);
    const max = Math.max(1, ...rows.map((r) => r.rps ?? 0));
    y += 18;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${escapeXml(scenario.title)}</text>`);
    y += 8;
    for (const row of rows) {
      const top = y;
      const mid = top + barHeight / 2 + 4;
      parts.push(
        `<text x="${labelWidth - 8}" y="${mid}" font-size="12" text-anchor="end">${escapeXml(row.label)}</text>`,
      );
      if (row.status === 'ok' && row.rps !== undefined) {
        const w = Math.max(1, Math.round((row.rps / max) * barArea));
        parts.push(
          `<rect x="${labelWidth}" y="${top}" width="${w}" height="${barHeight}" fill="${colorOf(row.config)}"><title>${escapeXml(`${row.label}: ${formatInt(row.rps)} req/s (${row.tool})`)}</title></rect>`,
          `<text x="${labelWidth + w + 6}" y="${mid}" font-size="12">${escapeXml(`${formatInt(row.rps)} req/s (${row.tool})`)}</text>`,
        );
      } else {
        parts.push(
          `<text x="${labelWidth}" y="${mid}" font-size="12" fill="#888">${escapeXml(`skipped: ${row.reason ?? ''}`.slice(0, 90))}</text>`,
        );
      }
      y += barHeight + gap;
    }
    y += 6;
  }
  const height = y + 10;
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="#ffffff"/>
${parts.join('\n')}
</svg>
`;
}
