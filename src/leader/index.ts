export { type LeaderElectionOptions, type LeaderElector, startLeaderElection } from './leader-election.ts';
