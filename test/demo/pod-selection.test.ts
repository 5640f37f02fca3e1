import { describe, expect, it } from 'vitest';
import { selectPods } from '../../src/demo/pod-selection.ts';
import { DEMO_PODS } from '../../src/demo/topology.ts';

const select = (query: string) => selectPods(DEMO_PODS, new URLSearchParams(query));
const names = (query: string) => {
  const selection = select(query);
  return selection.kind === 'pods' ? selection.pods.map((pod) => pod.pod) : selection;
};

describe('which demo pods /demo/stop and /demo/start name', () => {
  it('takes every service of a zone or cluster, as an outage would', () => {
    expect(names('zone=us-east-1a')).toEqual([
      'web-us-east-1a-1',
      'web-us-east-1a-2',
      'web-us-east-1a-3',
      'greeter-us-east-1a-1',
      'greeter-us-east-1a-2',
      'payments-us-east-1a-1',
    ]);
    expect(names('cluster=east-2')).toEqual([
      'web-us-east-1c-1',
      'api-us-east-1c-1',
      'greeter-us-east-1c-1',
      'payments-us-east-1c-1',
    ]);
  });

  it('narrows by every selector given', () => {
    expect(names('service=greeter&cluster=east-1')).toEqual([
      'greeter-us-east-1a-1',
      'greeter-us-east-1a-2',
      'greeter-us-east-1b-1',
    ]);
    expect(names('pod=web-us-east-1a-3')).toEqual(['web-us-east-1a-3']);
  });

  it('answers 404 naming a value that names nothing, and the values there are', () => {
    expect(select('pod=web-us-east-1a-9')).toEqual({
      kind: 'error',
      status: 404,
      message: expect.stringMatching(
        /^no pod named "web-us-east-1a-9" in the demo \(there are: web-us-east-1a-1, /,
      ),
    });
    expect(select('zone=eu-west-1a')).toMatchObject({
      status: 404,
      message: expect.stringContaining('"eu-west-1a"'),
    });
    expect(select('service=api&zone=us-east-1a')).toEqual({
      kind: 'error',
      status: 404,
      message: 'no demo pod has zone=us-east-1a and service=api',
    });
  });

  it('answers 400 with the usage for no selector, an unknown one or one given twice', () => {
    expect(select('')).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^select pods with \?pod=/),
    });
    expect(select('region=us-east')).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^unknown selector region/),
    });
    expect(select('zone=us-east-1a&zone=us-east-1b')).toMatchObject({ status: 400 });
  });
});
