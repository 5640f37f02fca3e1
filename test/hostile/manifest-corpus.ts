/**
 * Hostile manifest files and the exact problem each must produce. Each case is a folder: its files, plus
 * `good.yaml` (a Service `ns/good`) that must load whatever the others hold.
 */
export interface ManifestCase {
  readonly name: string;
  readonly files: Readonly<Record<string, string | Buffer>>;
  /** `file:line: message` of every problem, in order. */
  readonly problems: readonly string[];
  /** Services besides `good` that load. */
  readonly alsoLoaded?: readonly string[];
}

export const service = (name: string, namespace = 'ns') =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  ports: [{port: 80}]\n`;

function billionLaughs(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) {
    const me = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    lines.push(`${me}: &${me} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  return `${lines.join('\n')}\n`;
}

export const MANIFEST_CASES: readonly ManifestCase[] = [
  {
    name: 'an undefined alias',
    files: { 'bad.yaml': `${service('x')}---\nkind: *nope\n` },
    problems: ['bad.yaml:9: Unresolved alias (the anchor must be set before the alias): nope'],
  },
  {
    name: 'a billion-laughs alias bomb',
    files: { 'bomb.yaml': billionLaughs() },
    problems: ['bomb.yaml:1: more than 100 alias expansions (an alias bomb?): the file is refused'],
  },
  {
    name: 'nesting deep enough to overflow a recursive parser',
    files: { 'deep.yaml': `${'['.repeat(50_000)}\n` },
    problems: ['deep.yaml:1: flow collections nest deeper than 256 levels: the file is refused unparsed'],
  },
  {
    name: 'a file over the size limit',
    files: { 'huge.yaml': `# ${'x'.repeat(2 * 1024 * 1024)}\n` },
    problems: [
      `huge.yaml:1: file is ${2 * 1024 * 1024 + 3} bytes, over the 1048576-byte limit (--max-manifest-bytes); refused unread`,
    ],
  },
  {
    name: 'the same object in two files',
    files: { 'z-copy.yaml': service('good'), 'a-first.yaml': service('first') },
    problems: ['z-copy.yaml:1: duplicate Service ns/good: good.yaml:1 has it already; this one is ignored'],
    alsoLoaded: ['first'],
  },
  {
    name: 'the same object twice in one file',
    files: { 'twice.yaml': `${service('twin')}---\n${service('twin')}` },
    problems: ['twice.yaml:9: duplicate Service ns/twin: twice.yaml:1 has it already; this one is ignored'],
    alsoLoaded: ['twin'],
  },
  {
    name: 'invalid UTF-8 and control bytes',
    files: { 'binary.yaml': Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x0a, 0x80, 0x81]) },
    problems: ['binary.yaml:1: a Kubernetes object must be a mapping'],
  },
  {
    name: 'documents that are not objects',
    files: { 'junk.yaml': '- 1\n- 2\n---\n42\n---\n"text"\n' },
    problems: [
      'junk.yaml:1: a Kubernetes object must be a mapping',
      'junk.yaml:4: a Kubernetes object must be a mapping',
      'junk.yaml:6: a Kubernetes object must be a mapping',
    ],
  },
  {
    name: 'a List whose items are not a list',
    files: { 'list.yaml': 'apiVersion: v1\nkind: List\nitems: 7\n' },
    problems: [],
  },
];
