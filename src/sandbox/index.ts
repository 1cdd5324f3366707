export type { ObservedSandboxState, SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from './provider.js';
export { KubernetesSandboxProvider, settingsFromEnv as kubernetesSettingsFromEnv, type KubernetesSandboxSettings } from './kubernetes/index.js';
