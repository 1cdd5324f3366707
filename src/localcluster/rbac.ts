// Authentication (always) and opt-in RBAC authorization (LocalClusterOptions.authorization): the
// admin token is all-powerful (system:masters); ServiceAccount tokens come from the TokenRequest
// API (POST .../serviceaccounts/NAME/token) and act as the ServiceAccount. Any other token, or
// none, is 401. With RBAC a ServiceAccount may do only what Roles, ClusterRoles and their
// bindings grant (verbs, API groups, resources and subresources, resourceNames, namespaces), else
// 403 with the real server's Status message; access reviews (kubectl auth can-i) answer from the
// same rules. Without RBAC every authenticated caller may do everything.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Cluster } from './cluster.js';
import { ApiError, errors, resourceLabel, type KObject } from './status.js';

export interface Identity { user: string; groups: string[] }

/** What a request asks to do (the real server's authorizer.Attributes, resource requests only). */
export interface RequestAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject { kind?: string; name?: string; namespace?: string }
interface Binding { metadata?: { name?: string; namespace?: string }; roleRef?: { kind?: string; name?: string }; subjects?: Subject[] }

export const ADMIN: Identity = { user: 'admin', groups: ['system:masters', 'system:authenticated'] };
const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** ClusterRoles every real cluster has; a stored ClusterRole of the same name wins. */
const BOOTSTRAP_CLUSTER_ROLES: Record<string, PolicyRule[]> = {
  'cluster-admin': [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }],
};
const DEFAULT_EXPIRATION_S = 3600;
const MIN_EXPIRATION_S = 600;

const has = (list: string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));

/** rbac/v1 ResourceMatches: `*`, `resource`, `resource/subresource`, or `*∕subresource`. */
function resourceMatches(rule: PolicyRule, attrs: RequestAttributes): boolean {
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return (rule.resources ?? []).some((r) => r === '*' || r === combined || (attrs.subresource !== undefined && r === `*/${attrs.subresource}`));
}

/** Whether one rule allows the request (pure: the table of the real RBAC authorizer). */
export function ruleAllows(rule: PolicyRule, attrs: RequestAttributes): boolean {
  if (!has(rule.verbs, attrs.verb) || !has(rule.apiGroups, attrs.group) || !resourceMatches(rule, attrs)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && names.includes(attrs.name));
}

function nonResourceAllows(rule: PolicyRule, verb: string, urlPath: string): boolean {
  if (!has(rule.verbs, verb)) return false;
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === urlPath || (u.endsWith('*') && urlPath.startsWith(u.slice(0, -1))));
}

export function subjectMatches(subject: Subject, identity: Identity, bindingNamespace?: string): boolean {
  switch (subject.kind) {
    case 'ServiceAccount': return identity.user === `system:serviceaccount:${subject.namespace ?? bindingNamespace}:${subject.name}`;
    case 'User': return identity.user === subject.name;
    case 'Group': return subject.name !== undefined && identity.groups.includes(subject.name);
    default: return false;
  }
}

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/** The 403 the real server sends, e.g. `secrets "x" is forbidden: User "..." cannot get resource "secrets" in API group "" in the namespace "ns"`. */
export function forbiddenError(identity: Identity, attrs: RequestAttributes): ApiError {
  const label = resourceLabel(attrs.group, attrs.resource);
  const what = attrs.name ? `${label} "${attrs.name}"` : label;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const where = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  return errors.forbidden(`${what} is forbidden: User "${identity.user}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.group}" ${where}`, {
    ...(attrs.name ? { name: attrs.name } : {}), group: attrs.group || undefined, kind: attrs.resource,
  });
}

const unauthorized = () => new ApiError(401, 'Unauthorized', 'Unauthorized');

interface TokenClaims { sub: string; ns: string; sa: string; uid: string; exp: number; iat: number; aud: string[] }

export class Authorizer {
  private readonly key: Buffer;

  /**
   * `enforce`: check RBAC (else every authenticated caller may do everything).
   * `adminTokens`: bearer tokens that act as the all-powerful admin (the kubeconfig's).
   * The ServiceAccount token signing key lives in `dataDir`, so tokens survive a restart.
   */
  constructor(private readonly cluster: Cluster, readonly enforce: boolean, private readonly adminTokens: readonly string[], dataDir: string) {
    const keyFile = path.join(dataDir, 'serviceaccount-signing.key');
    if (existsSync(keyFile)) this.key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
    else {
      this.key = randomBytes(32);
      writeFileSync(keyFile, this.key.toString('base64'), { mode: 0o600 });
    }
  }

  // --- authentication ------------------------------------------------------------------------

  /** The caller; 401 for a missing or unknown token. */
  async authenticate(req: IncomingMessage): Promise<Identity> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token) throw unauthorized();
    if (this.adminTokens.some((t) => t.length === token.length && timingSafeEqual(Buffer.from(t), Buffer.from(token)))) return ADMIN;
    const claims = this.verify(token);
    if (!claims) throw unauthorized();
    // bound to the ServiceAccount object: a deleted (or re-created) one invalidates its tokens
    const sa = await this.find('', 'serviceaccounts', claims.ns, claims.sa);
    if (sa?.metadata?.uid !== claims.uid) throw unauthorized();
    return { user: claims.sub, groups: ['system:serviceaccounts', `system:serviceaccounts:${claims.ns}`, 'system:authenticated'] };
  }

  private sign(claims: TokenClaims): string {
    const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${head}.${b64url(createHmac('sha256', this.key).update(head).digest())}`;
  }

  private verify(token: string): TokenClaims | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const expected = createHmac('sha256', this.key).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as TokenClaims;
      return claims.exp * 1000 > Date.now() ? claims : null;
    } catch {
      return null;
    }
  }

  /** POST /api/v1/namespaces/NS/serviceaccounts/NAME/token (the TokenRequest API). */
  async issueToken(namespace: string, name: string, input: KObject | undefined): Promise<KObject> {
    const sa = await this.find('', 'serviceaccounts', namespace, name);
    if (!sa) throw errors.notFound('', 'serviceaccounts', name);
    const spec = (input?.spec ?? {}) as { audiences?: string[]; expirationSeconds?: number };
    const seconds = Math.max(MIN_EXPIRATION_S, Number(spec.expirationSeconds ?? DEFAULT_EXPIRATION_S) || DEFAULT_EXPIRATION_S);
    const iat = Math.floor(Date.now() / 1000);
    const claims: TokenClaims = { sub: `system:serviceaccount:${namespace}:${name}`, ns: namespace, sa: name, uid: String(sa.metadata!.uid), iat, exp: iat + seconds, aud: spec.audiences ?? ['https://kubernetes.default.svc'] };
    return {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { name, namespace, creationTimestamp: new Date(iat * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
      spec: { audiences: claims.aud, expirationSeconds: seconds, boundObjectRef: null },
      status: { token: this.sign(claims), expirationTimestamp: new Date(claims.exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    };
  }

  // --- authorization -------------------------------------------------------------------------

  private async find(group: string, plural: string, ns: string | undefined, name: string): Promise<KObject | undefined> {
    const t = this.cluster.registry.lookup(group, 'v1', plural);
    if (!t) return undefined;
    try { return await this.cluster.get(t, ns, name); } catch { return undefined; }
  }

  private async all(plural: string, ns?: string): Promise<KObject[]> {
    const t = this.cluster.registry.lookup(RBAC_GROUP, 'v1', plural)!;
    return (await this.cluster.list(t, ns, {})).items;
  }

  private async rulesOf(ref: Binding['roleRef'], bindingNamespace?: string): Promise<PolicyRule[]> {
    if (!ref?.name) return [];
    if (ref.kind === 'ClusterRole') {
      const stored = await this.find(RBAC_GROUP, 'clusterroles', undefined, ref.name);
      return (stored?.rules as PolicyRule[] | undefined) ?? BOOTSTRAP_CLUSTER_ROLES[ref.name] ?? [];
    }
    if (ref.kind === 'Role' && bindingNamespace) return ((await this.find(RBAC_GROUP, 'roles', bindingNamespace, ref.name))?.rules as PolicyRule[] | undefined) ?? [];
    return [];
  }

  /** Every rule granted to `identity` in `namespace` (cluster-wide ones included), with where it came from. */
  async rulesFor(identity: Identity, namespace?: string): Promise<{ rule: PolicyRule; from: string }[]> {
    if (identity.groups.includes('system:masters')) return BOOTSTRAP_CLUSTER_ROLES['cluster-admin']!.map((rule) => ({ rule, from: 'group system:masters' }));
    const out: { rule: PolicyRule; from: string }[] = [];
    const collect = async (binding: Binding, kind: string) => {
      const ns = binding.metadata?.namespace;
      if (!(binding.subjects ?? []).some((s) => subjectMatches(s, identity, ns))) return;
      const from = `${kind} "${ns ? `${ns}/` : ''}${binding.metadata?.name}" of ${binding.roleRef?.kind} "${binding.roleRef?.name}"`;
      for (const rule of await this.rulesOf(binding.roleRef, ns)) out.push({ rule, from });
    };
    for (const b of await this.all('clusterrolebindings')) await collect(b as Binding, 'ClusterRoleBinding');
    if (namespace) for (const b of await this.all('rolebindings', namespace)) await collect(b as Binding, 'RoleBinding');
    return out;
  }

  async decide(identity: Identity, attrs: RequestAttributes): Promise<{ allowed: boolean; reason: string }> {
    if (!this.enforce) return { allowed: true, reason: 'the svc local cluster was started without RBAC: every authenticated request is allowed' };
    const match = (await this.rulesFor(identity, attrs.namespace)).find(({ rule }) => ruleAllows(rule, attrs));
    return match ? { allowed: true, reason: `RBAC: allowed by ${match.from}` } : { allowed: false, reason: '' };
  }

  /** Throws the real server's 403 when RBAC does not allow the request. */
  async authorize(identity: Identity, attrs: RequestAttributes): Promise<void> {
    if (!(await this.decide(identity, attrs)).allowed) throw forbiddenError(identity, attrs);
  }

  /** The status of an access review (kubectl auth can-i, its --list form, and SubjectAccessReview). */
  async review(caller: Identity, kind: string, input: KObject, requestNamespace?: string): Promise<Record<string, unknown>> {
    const spec = (input.spec ?? {}) as {
      resourceAttributes?: { namespace?: string; verb?: string; group?: string; resource?: string; subresource?: string; name?: string };
      nonResourceAttributes?: { path?: string; verb?: string };
      namespace?: string; user?: string; groups?: string[];
    };
    const subject: Identity = kind === 'SubjectAccessReview' || kind === 'LocalSubjectAccessReview'
      ? { user: spec.user ?? '', groups: spec.groups ?? [] }
      : caller;
    if (kind === 'SelfSubjectRulesReview') {
      const rules = this.enforce ? await this.rulesFor(subject, spec.namespace) : BOOTSTRAP_CLUSTER_ROLES['cluster-admin']!.map((rule) => ({ rule }));
      return {
        resourceRules: rules.filter(({ rule }) => rule.resources).map(({ rule }) => ({ verbs: rule.verbs ?? [], apiGroups: rule.apiGroups ?? [], resources: rule.resources ?? [], ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}) })),
        nonResourceRules: rules.filter(({ rule }) => rule.nonResourceURLs).map(({ rule }) => ({ verbs: rule.verbs ?? [], nonResourceURLs: rule.nonResourceURLs ?? [] })),
        incomplete: false,
      };
    }
    if (spec.nonResourceAttributes) {
      const { path: urlPath = '', verb = 'get' } = spec.nonResourceAttributes;
      if (!this.enforce || subject.groups.includes('system:masters') || subject.groups.includes('system:authenticated')) return { allowed: true, reason: 'every authenticated user may read non-resource URLs here' };
      const match = (await this.rulesFor(subject)).find(({ rule }) => nonResourceAllows(rule, verb, urlPath));
      return match ? { allowed: true, reason: `RBAC: allowed by ${match.from}` } : { allowed: false };
    }
    const a = spec.resourceAttributes ?? {};
    const namespace = kind === 'LocalSubjectAccessReview' ? requestNamespace : a.namespace || undefined;
    const decision = await this.decide(subject, { verb: a.verb ?? '', group: a.group ?? '', resource: a.resource ?? '', subresource: a.subresource || undefined, namespace, name: a.name || undefined });
    return decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false };
  }
}

/** The RBAC verb of a resource request. */
export function verbOf(method: string, hasName: boolean, watch: boolean): string {
  if (watch) return 'watch';
  switch (method) {
    case 'GET': case 'HEAD': return hasName ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return hasName ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}
