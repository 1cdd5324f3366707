// Manifests the trigger tests and benches share: one agent and a signed webhook trigger `hook`.

/** A version 2 svc.yaml with agent `coder` and webhook trigger `hook` (secret HOOK_SECRET) prompting `prompt`; `more` follows (triggers, top-level keys). */
export function webhookManifest(prompt: string, more = ''): string {
  return `svc_version: 2
default_agent: coder
agents:
  coder: {}
triggers:
  - slug: hook
    type: webhook
    secret_env: HOOK_SECRET
    prompt: "${prompt}"
${more}`;
}
