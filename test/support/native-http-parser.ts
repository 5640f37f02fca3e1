import { createRequire } from 'node:module';
import type { NativeParserClass } from '../../src/proxy/upstream/http1-response-reader.ts';

/** Node's parser, or undefined on a Node that no longer exposes it (the tests that compare with it skip it then). */
export const nativeHttpParser: NativeParserClass | undefined = (() => {
  try {
    const parser = (createRequire(import.meta.url)('_http_common') as { HTTPParser?: NativeParserClass })
      .HTTPParser;
    return typeof parser === 'function' && typeof parser.kOnBody === 'number' ? parser : undefined;
  } catch {
    return undefined;
  }
})();
