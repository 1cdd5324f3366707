// The kubernetes sandbox provider: a Secret and a hardened Pod per sandbox (docs/kubernetes.md).
export { KubernetesSandboxProvider } from './provider.js';
export { observePod, type ObserveInput } from './observe.js';
export { SANDBOX_COMPONENT_LABELS, ENTRYPOINT, DAEMON_PORT, sandboxObjectName, sandboxPod, sandboxSecret, unbuildable } from './pod-spec.js';
export { DEFAULT_SETTINGS, KUBERNETES_SANDBOX_SETTINGS, settingsFromEnv, type KubernetesSandboxSettings } from './settings.js';
