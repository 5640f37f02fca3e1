/** What every backend answers, so direct and proxied runs move the same bytes. */
export const SMALL_BODY = 'hello from the bench backend\n';
export const DOWNLOAD_PATHS = {
  '64k': '/files/64k.bin',
  '1m': '/files/1m.bin',
};
export const FILE_SIZES = {
  [DOWNLOAD_PATHS['64k']]: 64 * 1024,
  [DOWNLOAD_PATHS['1m']]: 1024 * 1024,
};
