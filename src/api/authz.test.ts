import { describe, expect, it } from 'vitest';
import { authorize, canSeeProject, type Requirement } from './authz.js';
import type { Principal } from './tokens.js';

const P1 = '11111111-1111-4111-8111-111111111111';
const P2 = '22222222-2222-4222-8222-222222222222';

function principal(overrides: Partial<Principal>): Principal {
  return { tokenName: 't', userId: '33333333-3333-4333-8333-333333333333', access: 'read', projectUid: null, capabilities: new Set(), ...overrides };
}

const admin = principal({ access: 'write', capabilities: '*' });
const reader = principal({ access: 'read' });
const writer = principal({ access: 'write', capabilities: new Set(['project.gitops.push']) });
const scopedWriter = principal({ access: 'write', projectUid: P1, capabilities: new Set(['project.gitops.push', 'project.gitops.merge']) });
const scopedReader = principal({ access: 'read', projectUid: P1 });
const S1 = '44444444-4444-4444-8444-444444444444';
const S2 = '55555555-5555-4555-8555-555555555555';
const sessionToken = principal({ access: 'write', projectUid: P1, capabilities: '*', sessionId: S1 });
const onSession = (sessionId: string | null, capability?: string): Requirement => ({ access: 'write', projectUid: P1, capability, sessionId });

const read = (projectUid: string | null): Requirement => ({ access: 'read', projectUid });
const write = (projectUid: string | null, capability?: string): Requirement => ({ access: 'write', projectUid, capability });
const create: Requirement = { access: 'write', projectUid: null, unscopedOnly: true };

describe('authorize', () => {
  const table: [string, Principal, Requirement, boolean, string?][] = [
    ['admin reads any project', admin, read(P1), true],
    ['admin writes with any capability', admin, write(P2, 'project.gitops.merge'), true],
    ['admin creates a project', admin, create, true],
    ['reader reads', reader, read(P1), true],
    ['reader lists', reader, read(null), true],
    ['reader cannot write', reader, write(P1), false, 'read access only'],
    ['reader cannot create', reader, create, false, 'read access only'],
    ['write implies read', writer, read(P2), true],
    ['writer with the capability', writer, write(P1, 'project.gitops.push'), true],
    ['writer without the capability', writer, write(P1, 'project.gitops.merge'), false, 'project.gitops.merge'],
    ['writer without a needed capability cannot rely on write alone', writer, write(P1, 'project.delete'), false, 'project.delete'],
    ['writer creates (no capability needed)', writer, create, true],
    ['scoped token reads its project', scopedReader, read(P1), true],
    ['scoped token cannot read another project', scopedReader, read(P2), false, 'another project'],
    ['scoped token lists (filtered by the route)', scopedReader, read(null), true],
    ['scoped writer merges in its project', scopedWriter, write(P1, 'project.gitops.merge'), true],
    ['scoped writer cannot write another project', scopedWriter, write(P2, 'project.gitops.push'), false, 'another project'],
    ['scoped writer cannot create projects', scopedWriter, create, false, 'scoped to one project'],
    ['an unscoped-only route may say why in its own words', scopedWriter, { ...write(P1, 'project.delete'), unscopedOnly: 'cannot delete a project' }, false, 'cannot delete a project'],
    ['scoped reader cannot write its project', scopedReader, write(P1), false, 'read access only'],
    ["a session's token on its own session", sessionToken, onSession(S1, 'project.session.start'), true],
    ["a session's token on another session, whatever its capabilities", sessionToken, onSession(S2, 'project.session.start'), false, `session ${S1} and reaches no other`],
    ["a session's token on a project route", sessionToken, write(P1, 'project.gitops.push'), true],
    ["a session's token on a change request no session opened", sessionToken, onSession(null, 'project.gitops.push'), false, 'nor a change request its session did not open'],
    ["a person's token on a change request no session opened", writer, onSession(null, 'project.gitops.push'), true],
    ["a person's token on any session", admin, onSession(S2, 'project.session.start'), true],
  ];
  it.each(table)('%s', (_name, who, need, allowed, reason) => {
    const decision = authorize(who, need);
    expect(decision.allowed).toBe(allowed);
    if (!decision.allowed) expect(decision.reason).toContain(reason);
  });
});

describe('canSeeProject', () => {
  it.each([
    [admin, P1, true],
    [scopedReader, P1, true],
    [scopedReader, P2, false],
  ] as const)('%#', (who, uid, expected) => expect(canSeeProject(who, uid)).toBe(expected));
});
