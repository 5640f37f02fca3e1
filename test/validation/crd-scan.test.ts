import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { describeCrd } from '../../src/validation/crd-entry.ts';
import {
  crdChannelEntries,
  crdFiles,
  DEFAULT_CRD_DIR,
  EXPERIMENTAL_CRD_DIR,
  loadCrdChannel,
} from '../../src/validation/crd-loader.ts';
import { scanCrds } from '../../src/validation/crd-scan.ts';
import type { CrdDocument } from '../../src/validation/schema-types.ts';

const CRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    name: not-this-one
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - additionalPrinterColumns:
    - jsonPath: .spec.size
      name: Size
      type: string
    name: v1
    schema:
      openAPIV3Schema:
        type: object
    served: true
    storage: true
  - name: v1beta1
    schema:
      openAPIV3Schema:
        type: object
    served: false
    storage: false
  - name: v1alpha1
    served: true
    storage: false
`;

describe('scanCrds', () => {
  it.each([
    ['deploy/crds', DEFAULT_CRD_DIR],
    ['deploy/crds-experimental', EXPERIMENTAL_CRD_DIR],
  ])('says of every CRD file in %s what parsing it says, or gives up', (_name, dir) => {
    for (const path of crdFiles(dir)) {
      const text = readFileSync(path, 'utf8');
      const scanned = scanCrds(text);
      // The Gateway API's files, by far the largest, are in the layout the scan reads; others may be parsed.
      if (path.includes('/gateway-api/')) expect(scanned, path).toBeDefined();
      if (scanned === undefined) continue;
      const parsed = parseAllDocuments(text)
        .map((doc) => doc.toJS() as (CrdDocument & { kind?: string }) | null)
        .filter((value): value is CrdDocument => value?.kind === 'CustomResourceDefinition');
      expect(scanned, path).toStrictEqual(parsed.map(describeCrd));
    }
  });

  it('reads the served versions that have a schema, past documents of other kinds', () => {
    const namespace = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: widgets\n';
    expect(scanCrds(`# widgets\n${namespace}${CRD}---\n# the end\n`)).toStrictEqual([
      {
        name: 'widgets.example.com',
        group: 'example.com',
        kind: 'Widget',
        scope: 'Namespaced',
        versions: ['v1'],
      },
    ]);
  });

  it.each([
    ['a quoted value', CRD.replace('kind: Widget', 'kind: "Widget"')],
    ['an anchor', CRD.replace('group: example.com', 'group: &g example.com')],
    ['flow style', CRD.replace(/spec:[\s\S]*/, 'spec: {group: example.com}\n')],
    ['a missing scope', CRD.replace('  scope: Namespaced\n', '')],
    [
      'a quoted key in a version',
      CRD.replace(
        '    schema:\n      openAPIV3Schema:\n        type: object\n    served: true',
        '    "schema":\n      openAPIV3Schema:\n        type: object\n    served: true',
      ),
    ],
    ['a quoted kind', CRD.replace('kind: CustomResourceDefinition', "kind: 'CustomResourceDefinition'")],
    [
      'a comment after the kind',
      CRD.replace('kind: CustomResourceDefinition', 'kind: CustomResourceDefinition # x'),
    ],
  ])('gives up on %s, for the caller to parse the file', (_what, text) => {
    expect(scanCrds(text)).toBeUndefined();
  });
});

describe('crdChannelEntries', () => {
  it('describes the channel as loading it would, and loads each CRD on demand', () => {
    const entries = crdChannelEntries('experimental');
    const loaded = loadCrdChannel('experimental');
    expect(entries.map(({ load: _load, ...description }) => description)).toStrictEqual(
      loaded.map(describeCrd),
    );
    const httpRoute = entries.find((entry) => entry.kind === 'HTTPRoute')!;
    expect(httpRoute.load()).toStrictEqual(loaded.find((crd) => crd.spec.names.kind === 'HTTPRoute'));
  });
});
