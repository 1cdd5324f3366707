// The git gateway (SPEC §4.4): clone credential and smart HTTP for sandboxes (docs/git-gateway.md).
export { gitRoutes, type GitRoutesConfig } from './routes.js';
export { GitGatewayService, type GitGatewayOptions, type GitGatewayStore, type GatewayCaller } from './service.js';
export { kubeGitGatewayStore } from './kube-store.js';
