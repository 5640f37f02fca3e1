import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/flag-values.ts';

/** The provider file's two names: cluster-inventory-api's library flag and KEP-4322's. */
describe('--clusterprofile-provider-file and --clusterprofile-access-provider', () => {
  it.each([
    [['--clusterprofile-provider-file', '/etc/fleet/providers.json']],
    [['--clusterprofile-access-provider', '/etc/fleet/providers.json']],
    [['--clusterprofile-access-provider=/etc/fleet/providers.json']],
    [
      [
        '--clusterprofile-provider-file',
        '/etc/fleet/providers.json',
        '--clusterprofile-access-provider',
        '/etc/fleet/providers.json',
      ],
    ],
  ])('%j turns fleet mode on with that file', (flags) => {
    const cli = parseCli(['--kubernetes', ...flags], {});
    expect(cli.fleet).toEqual({
      providerFile: '/etc/fleet/providers.json',
      execTimeoutMs: 30_000,
      writeExportStatus: false,
    });
  });

  it('either name satisfies the flags that need a provider file', () => {
    const cli = parseCli(
      [
        '--kubernetes',
        '--clusterprofile-access-provider',
        '/p.json',
        '--member-exec-timeout-ms',
        '5000',
        '--write-export-status',
      ],
      {},
    );
    expect(cli.fleet).toMatchObject({
      providerFile: '/p.json',
      execTimeoutMs: 5000,
      writeExportStatus: true,
    });
  });

  it('both names with different files is a usage error naming both', () => {
    const both = () =>
      parseCli(
        [
          '--kubernetes',
          '--clusterprofile-provider-file',
          '/a.json',
          '--clusterprofile-access-provider',
          '/b.json',
        ],
        {},
      );
    expect(both).toThrow(UsageError);
    expect(both).toThrow(
      '--clusterprofile-provider-file /a.json and --clusterprofile-access-provider /b.json disagree: they are one flag by two names, give one',
    );
  });
});
