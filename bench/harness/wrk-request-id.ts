/** The request header wrk's script numbers requests with and the nginx backend echoes (see wrk-load.ts). */
export const WRK_REQUEST_ID_HEADER = 'X-Bench-Id';
