export { ProcessSandboxProvider, type ProcessProviderOptions } from './provider.js';
