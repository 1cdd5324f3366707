// The manifest schema of SPEC §2.1 for versions 1 and 2, and the combined schema that
// dispatches on `svc_version`. The same schema applies to svc.yaml and svc.toml.
import * as z from 'zod';
import {
  ALWAYS, type ManifestVersion, allowlist, anyObject, enumOf, envName, flexibleBoolean, forbidden, isRecord,
  namesList, nonEmptyString, oneOf, whenPresent, positiveInt, report, safeRelativePath, slug, svcCli,
} from './rules.js';
import { triggerContextIssues, triggerEntrySchema } from './trigger.js';

const SANDBOX_FORBIDDEN = ['image', 'dockerfile', 'slug', 'cpu', 'memory', 'disk', 'entrypoint', 'context', 'context_dir', 'gpu'] as const;

const template = z
  .looseObject({
    slug: slug().refine((s) => s !== 'default', { error: 'must not be default (default names the template to use, in sandbox.default)' }),
    name: z.string().optional(),
    entrypoint: z.string().optional(),
    image: nonEmptyString().optional(),
    dockerfile: safeRelativePath().optional(),
    cpu: positiveInt().optional(),
    memory: positiveInt().optional(),
    disk: positiveInt().optional(),
  })
  .superRefine((t, ctx) => {
    if (!isRecord(t)) return;
    if ((t.image === undefined) === (t.dockerfile === undefined)) {
      report(ctx, [], 'a sandbox template needs exactly one of image and dockerfile');
    }
  }, ALWAYS);

const sandbox = z.looseObject({
  ...Object.fromEntries(SANDBOX_FORBIDDEN.map((key) => [key, forbidden(`put ${key} on a template in sandbox.templates`)])),
  default: nonEmptyString().optional(),
  templates: z.array(template).optional(),
});

export const CONNECTOR_PROVIDERS = ['integration_hub', 'mcp', 'openapi', 'graphql', 'http', 'channel'] as const;
const RESERVED_CHANNEL_SLUGS = ['svc_chat', 'svc_email', 'svc_meeting'];
/** provider -> the field (or field and alias) it requires */
const PROVIDER_REQUIRES: Record<string, string[]> = {
  integration_hub: ['app'],
  mcp: ['url'],
  graphql: ['endpoint'],
  http: ['base_url', 'baseUrl'],
  channel: ['platform'],
};

const connector = (version: ManifestVersion) =>
  z
    .looseObject({
      slug: slug(),
      provider: enumOf(CONNECTOR_PROVIDERS),
      app: z.string().optional(),
      url: z.string().optional(),
      endpoint: z.string().optional(),
      base_url: z.string().optional(),
      baseUrl: z.string().optional(),
      transport: enumOf(['http', 'sse']).optional(),
      spec: z.string().optional(),
      platform: enumOf(['chat', 'email', 'meeting']).optional(),
      credential: version === 1 ? z.unknown() : z.literal('shared', { error: 'must be shared in version 2' }).optional(),
      agent_scope: version === 1 ? z.unknown() : forbidden('agent_scope exists only in version 1; in version 2 list connectors on each agent'),
      auth: z
        .looseObject({
          type: enumOf(['bearer', 'basic', 'custom', 'oauth1', 'none']),
          secret: forbidden('secrets are never written in the manifest; store them as project secrets'),
        })
        .optional(),
      policies: z
        .array(z.looseObject({ match: nonEmptyString(), action: enumOf(['always_run', 'require_approval', 'block']) }))
        .optional(),
    })
    .superRefine((c, ctx) => {
      if (!isRecord(c)) return;
      const required = typeof c.provider === 'string' ? PROVIDER_REQUIRES[c.provider] : undefined;
      if (required && required.every((key) => c[key] === undefined)) {
        report(ctx, [required[0]!], `is required when provider is ${c.provider}${required.length > 1 ? ` (alias ${required[1]})` : ''}`);
      }
      if (c.provider === 'channel' && isRecord(c.auth) && c.auth.type !== undefined && c.auth.type !== 'none') {
        report(ctx, ['auth', 'type'], 'must be none when provider is channel');
      }
      if (typeof c.slug === 'string' && RESERVED_CHANNEL_SLUGS.includes(c.slug) && c.provider !== 'channel') {
        report(ctx, ['provider'], `must be channel: the slug ${c.slug} is reserved for channel connectors`);
      }
      if (c.slug === 'computer') {
        report(ctx, ['slug'], `is reserved: computer requires provider computer, which a manifest cannot declare (provider is one of ${oneOf(CONNECTOR_PROVIDERS)})`);
      }
    }, ALWAYS);

const app = z.looseObject({
  slug: slug(),
  name: z.string().optional(),
  framework: z.string().optional(),
  enabled: flexibleBoolean().optional(),
  domains: z.array(z.string()).optional(),
  source: z
    .looseObject({
      type: enumOf(['git', 'tar']),
      repo: z.string().optional(),
      branch: z.string().optional(),
      root_path: z.string().optional(),
      url: z.string().optional(),
    })
    .optional(),
  build: anyObject().optional(),
  env: anyObject().optional(),
});

const channel = z.looseObject({
  platform: nonEmptyString(),
  enabled: flexibleBoolean().optional(),
  events: z.array(z.string()).optional(),
});

const agentV1 = z.looseObject({
  name: slug(),
  connectors: allowlist().optional(),
  svc_cli: svcCli(1).optional(),
  env: allowlist().optional(),
});

export const AGENT_V2_FIELDS = ['enabled', 'connectors', 'secrets', 'skills', 'svc_cli', 'workspace'] as const;
const agentV2 = z.strictObject({
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
  connectors: allowlist().optional(),
  secrets: allowlist().optional(),
  skills: allowlist().optional(),
  svc_cli: svcCli(2).optional(),
  workspace: enumOf(['runtime', 'read', 'branch']).optional(),
});

const agentsV2 = z
  .record(slug(), agentV2, { error: whenPresent('must be a mapping of agent names to agent objects') })
  .refine((agents) => Object.keys(agents).length > 0, { error: 'must declare at least one agent' });

const common = (version: ManifestVersion) => ({
  project: z.looseObject({ name: z.string().optional(), description: z.string().optional() }).optional(),
  env: z.looseObject({ required: z.array(envName()).optional(), optional: z.array(envName()).optional() }).optional(),
  engine: z.looseObject({ config_dir: safeRelativePath().optional() }).optional(),
  sandbox: sandbox.optional(),
  sandboxes: forbidden('declare sandbox templates under sandbox.templates'),
  triggers: z.array(triggerEntrySchema, { error: whenPresent('must be a list of trigger entries') }).optional(),
  connectors: z.array(connector(version), { error: whenPresent('must be a list of connector entries') }).optional(),
  apps: z.array(app, { error: whenPresent('must be a list of app entries') }).optional(),
});

const manifestV1 = z.looseObject({
  svc_version: z.literal(1),
  ...common(1),
  agents: z.array(agentV1, { error: whenPresent('must be a list of agent entries in version 1') }).optional(),
  channels: z.array(channel, { error: whenPresent('must be a list of channel entries') }).optional(),
});

const manifestV2 = z.looseObject({
  svc_version: z.literal(2),
  ...common(2),
  default_agent: nonEmptyString(),
  runtime: enumOf(['engine']).optional(),
  agents: agentsV2,
  channels: forbidden('channels exist only in version 1; use connectors with provider channel'),
});

/** The combined schema: dispatches on `svc_version`, then adds the rules that span sections. */
export const manifestSchema = z
  .discriminatedUnion('svc_version', [manifestV1, manifestV2], {
    error: (iss) => (iss.code === 'invalid_union'
      ? 'is required and must be the number 1 or 2 (2 for svc.yaml, 1 for legacy svc.toml)'
      : 'the manifest must be a mapping (YAML) or a table (TOML) of keys such as svc_version'),
  })
  .superRefine((doc, ctx) => {
    if (!isRecord(doc) || (doc.svc_version !== 1 && doc.svc_version !== 2)) return;
    for (const issue of triggerContextIssues(doc)) report(ctx, ['triggers', issue.index, ...issue.path], issue.message);
    if (doc.svc_version === 2 && typeof doc.default_agent === 'string' && isRecord(doc.agents) && doc.default_agent !== ''
      && !Object.hasOwn(doc.agents, doc.default_agent)) {
      report(ctx, ['default_agent'], `must name a key of agents (${namesList(Object.keys(doc.agents))})`);
    }
  }, ALWAYS);

const keysOf = (schema: z.ZodType): string[] => {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
};

/**
 * The keys the schema knows for the object at `path` of a manifest of `version` (null: an
 * object the schema does not describe key by key). For "did you mean" hints on unknown keys.
 */
export function knownKeysAt(path: readonly PropertyKey[], version: ManifestVersion | null): readonly string[] | null {
  const top = version === 1 ? manifestV1 : version === 2 ? manifestV2 : null;
  if (path.length === 0) return top ? keysOf(top) : [...new Set([...keysOf(manifestV1), ...keysOf(manifestV2)])];
  if (!top) return null;
  const [section] = path;
  if (path.length === 1 && typeof section === 'string' && ['project', 'env', 'engine', 'sandbox'].includes(section)) {
    return keysOf(top.shape[section as 'project']);
  }
  if (path.length !== 2) return null;
  if (section === 'triggers') return keysOf(triggerEntrySchema);
  if (section === 'connectors') return keysOf(connector(version!));
  if (section === 'apps') return keysOf(app);
  if (section === 'agents') return version === 2 ? AGENT_V2_FIELDS : keysOf(agentV1);
  if (section === 'channels' && version === 1) return keysOf(channel);
  return null;
}
