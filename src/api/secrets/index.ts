// Project secrets (SPEC §2.4): routes, service, store port and its kube adapter (docs/secrets.md).
export { secretsRoutes, type SecretsRoutesConfig } from './routes.js';
export { ProjectSecretsService, SecretWriteConflict, type ProjectSecretsStore } from './service.js';
export { kubeProjectSecretsStore } from './kube-store.js';
