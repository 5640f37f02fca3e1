import { DeadlineClock } from '../../net/timer-wheel.ts';

/** The deadlines of every upstream connection and forwarded request of this process. */
export const requestDeadlines = new DeadlineClock();
