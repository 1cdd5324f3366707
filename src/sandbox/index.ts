export type { ObservedSandboxState, SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from './provider.js';
export { KubernetesSandboxProvider, settingsFromEnv as kubernetesSettingsFromEnv, type KubernetesSandboxSettings } from './kubernetes/index.js';
export { apiBaseUrl, envList, envMap, launchEnv, sessionEnv, SECRET_VARIABLES, SERVICE_PORT, type LaunchSecrets, type SessionEnvInput } from './env.js';
export { engineBusy, healthVersion, readDaemonHealth, SharedHealthReads, type DaemonHealth } from './health.js';
export { ProcessSandboxProvider, type ProcessProviderOptions } from './process/index.js';
export { DEFAULT_SANDBOX_RESYNC, type SandboxResync } from './resync.js';
