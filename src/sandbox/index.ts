export type { ObservedSandboxState, SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from './provider.js';
