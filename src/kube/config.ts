import { KubeConfig } from '@kubernetes/client-node';
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

/** Where to find the cluster: a kubeconfig file or text, the pod's service account, or the default chain. */
export type KubeConfigSource =
  | { file: string; context?: string }
  | { yaml: string; context?: string }
  | { inCluster: true }
  | { default: true };

/** A loaded kubeconfig; opaque outside src/kube. */
export interface ClusterConfig {
  readonly server: string;
  readonly namespace: string;
  /** @internal the client-node configuration. */
  readonly kc: KubeConfig;
}

export function loadClusterConfig(source: KubeConfigSource): ClusterConfig {
  const kc = new KubeConfig();
  if ('file' in source) kc.loadFromFile(source.file);
  else if ('yaml' in source) kc.loadFromString(source.yaml);
  else if ('inCluster' in source) kc.loadFromCluster();
  else kc.loadFromDefault();
  if ('context' in source && source.context) kc.setCurrentContext(source.context);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  return { server: withoutTrailingSlashes(cluster.server), namespace, kc };
}
