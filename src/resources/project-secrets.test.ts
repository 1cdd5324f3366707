import { describe, expect, it } from 'vitest';
import type { Project } from './project.js';
import {
  projectSecretsName, secretListing, secretNameProblem, secretNames, secretValueProblem, secretValues, secretsRevision, withSecret, withoutSecret,
} from './project-secrets.js';

const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'shop', namespace: 'team', uid: '0b7c7a0e-54a4-4c54-a93c-5a2ea0f7c2f1' },
  spec: { repoUrl: '/repo', defaultBranch: 'main' },
};

describe('project secret names', () => {
  it.each(['API_KEY', '_X', 'A', 'A1_B2', 'TOKEN_'])('accepts %s', (name) => expect(secretNameProblem(name)).toBeNull());
  it.each(['api_key', '1A', 'A-B', '', 'A B', 'É'])('refuses %j', (name) => expect(secretNameProblem(name)).toMatch(/must match/));
  it('says the SVC_ prefix is reserved', () => {
    expect(secretNameProblem('SVC_TOKEN')).toMatch(/reserved/);
    expect(secretNameProblem('SVCX')).toBeNull();
  });
  it('refuses NUL and oversized values', () => {
    expect(secretValueProblem('a\0b')).toMatch(/NUL/);
    expect(secretValueProblem('x'.repeat(64 * 1024 + 1))).toMatch(/at most/);
    expect(secretValueProblem('')).toBeNull();
  });
});

describe('the project secrets Secret', () => {
  it('is named after the project unless the spec names one', () => {
    expect(projectSecretsName(project)).toBe('shop-secrets');
    expect(projectSecretsName({ ...project, spec: { ...project.spec, secretsSecretRef: { name: 'mine' } } })).toBe('mine');
  });

  it('is created owned by the project, lists names and times, never values', () => {
    const created = withSecret(project, undefined, 'API_KEY', 's3cr3t', new Date('2026-01-02T03:04:05Z'));
    expect(created.metadata).toMatchObject({ name: 'shop-secrets', namespace: 'team', labels: { 'svc.dev/project': 'shop' } });
    expect(created.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Project', uid: project.metadata.uid, controller: true })]);
    expect(secretValues(created)).toEqual({ API_KEY: 's3cr3t' });
    const listing = secretListing({ ...created, metadata: { ...created.metadata, resourceVersion: '7' } });
    expect(listing).toEqual({ secrets: [{ name: 'API_KEY', updated_at: '2026-01-02T03:04:05.000Z' }], revision: '7' });
    expect(JSON.stringify(listing)).not.toContain('s3cr3t');
  });

  it('updates and removes names, keeping the others and the resourceVersion precondition', () => {
    const one = { ...withSecret(project, undefined, 'B', '1', new Date(0)), metadata: { name: 'shop-secrets', resourceVersion: '3' } };
    const two = withSecret(project, one, 'A', '2', new Date(1000));
    expect(two.metadata.resourceVersion).toBe('3');
    expect(secretNames(two)).toEqual(['A', 'B']);
    const removed = withoutSecret(two, 'B')!;
    expect(secretValues(removed)).toEqual({ A: '2' });
    expect(secretListing(removed).secrets.map((s) => s.name)).toEqual(['A']);
    expect(withoutSecret(removed, 'B')).toBeNull();
    expect(withoutSecret(undefined, 'B')).toBeNull();
  });

  it('has revision "0" before any secret and ignores keys that are no secret names', () => {
    expect(secretsRevision(undefined)).toBe('0');
    expect(secretListing(undefined)).toEqual({ secrets: [], revision: '0' });
    const odd = { metadata: { name: 'x', annotations: { 'svc.dev/secrets-updated-at': 'not json' } }, data: { 'lower': 'eA==', SVC_X: 'eA==', OK: 'eA==' } };
    expect(secretListing(odd).secrets).toEqual([{ name: 'OK', updated_at: null }]);
  });
});
