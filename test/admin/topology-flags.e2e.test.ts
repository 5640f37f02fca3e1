import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/flag-values.ts';

describe('topology limits on the command line', () => {
  it('defaults to 16 live streams and 50 endpoints listed per zone', () => {
    const cli = parseCli([], {});
    expect([cli.adminMaxStreams, cli.topologyEndpointLimit]).toEqual([16, 50]);
  });

  it('takes both flags and refuses nonsense', () => {
    const cli = parseCli(['--admin-max-streams', '2', '--topology-endpoint-limit', '500'], {});
    expect([cli.adminMaxStreams, cli.topologyEndpointLimit]).toEqual([2, 500]);
    expect(() => parseCli(['--admin-max-streams', '-1'], {})).toThrow(UsageError);
    expect(() => parseCli(['--topology-endpoint-limit', 'many'], {})).toThrow(/--topology-endpoint-limit/);
  });
});
