/* eslint-disable @typescript-eslint/no-explicit-any -- the tests walk generated, untyped CRD documents */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { CATEGORY, KINDS } from '../resources/index.js';
import { buildCrd, structuralSchemaOf } from './crd.js';
import { DEFAULT_OUT_DIRS, writeCrds } from './main.js';
import { StructuralSchemaError, type JsonSchema } from './structural.js';

/** Every violation of the structural-schema rules found under `node`. */
function structuralViolations(node: JsonSchema, at = 'openAPIV3Schema'): string[] {
  const found: string[] = [];
  for (const banned of ['$ref', 'anyOf', 'oneOf', 'allOf', 'not', '$schema', 'definitions', '$defs']) {
    if (banned in node) found.push(`${at}: has ${banned}`);
  }
  const preserves = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (typeof node.type !== 'string' && !preserves) found.push(`${at}: no type`);
  if (Array.isArray(node.type)) found.push(`${at}: type is a list`);
  if (node.properties && node.additionalProperties !== undefined) found.push(`${at}: additionalProperties beside properties`);
  if (node.additionalProperties === false) found.push(`${at}: additionalProperties: false`);
  if (node.default === null && node.nullable !== true) found.push(`${at}: null default on a non-nullable field`);
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    found.push(...structuralViolations(child, `${at}.${name}`));
  }
  if (node.items) found.push(...structuralViolations(node.items as JsonSchema, `${at}[]`));
  if (typeof node.additionalProperties === 'object') found.push(...structuralViolations(node.additionalProperties as JsonSchema, `${at}.*`));
  return found;
}

function schemaOf(crd: JsonSchema): JsonSchema {
  return (crd as { spec: { versions: { schema: { openAPIV3Schema: JsonSchema } }[] } }).spec.versions[0].schema.openAPIV3Schema;
}

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('generated CRDs', () => {
  it.each(KINDS.map((k) => [k.type.kind, k] as const))('%s passes the kubernetes-models validator and is structural', (_kind, def) => {
    const crd = buildCrd(def);
    expect(() => new CustomResourceDefinition(crd as never).validate()).not.toThrow();
    expect(structuralViolations(schemaOf(crd))).toEqual([]);
    const spec = (crd as { spec: { names: { categories: string[]; shortNames: string[] }; versions: { subresources: unknown }[] } }).spec;
    expect(spec.names.categories).toEqual([CATEGORY]);
    expect(spec.names.shortNames.length).toBeGreaterThan(0);
    expect(spec.versions[0].subresources).toEqual({ status: {} });
  });

  it('would notice a broken CRD (the validator and the walk are live)', () => {
    const crd = buildCrd(KINDS[0]) as any;
    crd.spec.versions[0].served = 'yes';
    expect(() => new CustomResourceDefinition(crd).validate()).toThrow(/served/);
    expect(structuralViolations({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }] } } })).toEqual([
      'openAPIV3Schema.a: has anyOf',
      'openAPIV3Schema.a: no type',
    ]);
  });

  it('has the printer columns kubectl users rely on', () => {
    const columns = Object.fromEntries(
      KINDS.map((def) => {
        const crd = buildCrd(def) as { spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } };
        return [def.type.kind, crd.spec.versions[0].additionalPrinterColumns.map((c) => c.name)];
      }),
    );
    expect(columns.Project).toEqual(expect.arrayContaining(['Ready', 'Branch', 'Manifest', 'Triggers', 'Age']));
    expect(columns.Session).toEqual(expect.arrayContaining(['Status', 'Project', 'Agent', 'Age']));
    expect(columns.ChangeRequest).toEqual(expect.arrayContaining(['Number', 'Status', 'Head', 'Base', 'Age']));
    expect(columns.Trigger).toEqual(expect.arrayContaining(['Type', 'Schedule', 'Enabled', 'Last-Fired', 'Next-Fire']));
  });

  it('carries descriptions, defaults, nullables, enums and keyed condition lists', () => {
    const project = schemaOf(buildCrd(KINDS.find((k) => k.type.kind === 'Project')!)) as any;
    expect(project.properties.spec.properties.defaultBranch).toMatchObject({ type: 'string', default: 'main' });
    expect(project.properties.spec.required).toEqual(['repoUrl']);
    expect(project.properties.spec.properties.repoUrl.description).toMatch(/repository/);
    expect(project.properties.status.properties.conditions).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
    const cr = schemaOf(buildCrd(KINDS.find((k) => k.type.kind === 'ChangeRequest')!)) as any;
    expect(cr.properties.spec.properties.originSessionId).toMatchObject({ type: 'string', nullable: true, default: null });
    expect(cr.properties.status.properties.status.enum).toEqual(['open', 'merged', 'closed']);
    const fire = schemaOf(buildCrd(KINDS.find((k) => k.type.kind === 'TriggerFire')!)) as any;
    expect(fire.properties.spec.properties.variables).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('refuses schemas that cannot be structural', () => {
    expect(() => structuralSchemaOf(z.object({ a: z.union([z.string(), z.number()]) }))).toThrow(StructuralSchemaError);
    expect(() => structuralSchemaOf(z.object({ a: z.record(z.string(), z.string()), b: z.string() }).catchall(z.number()))).toThrow(
      /additionalProperties beside properties/,
    );
  });

  it('crds/ and charts/svc/crds/ hold exactly what the generator writes (make verify)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-crdgen-'));
    tempDirs.push(dir);
    writeCrds([dir]);
    const fresh = readdirSync(dir).sort();
    expect(fresh).toEqual(KINDS.map((k) => `${k.type.plural}.yaml`).sort());
    for (const committed of DEFAULT_OUT_DIRS) {
      expect(readdirSync(committed).filter((f) => f.endsWith('.yaml')).sort()).toEqual(fresh);
      for (const file of fresh) {
        expect(readFileSync(path.join(committed, file), 'utf8'), `${committed}/${file} is stale: run make generate`).toBe(
          readFileSync(path.join(dir, file), 'utf8'),
        );
      }
    }
    expect(parse(readFileSync(path.join(dir, 'projects.yaml'), 'utf8')).metadata.name).toBe('projects.svc.dev');
  });
});
