// The simulated API server ships in src/ (the demo's member clusters run on it); tests use the same one.
export * from '../../../src/demo/kube-sim/index.ts';
