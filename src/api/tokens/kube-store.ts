// TokenStore over the Kubernetes API: labelled Secrets in the API's namespace.
import { isAlreadyExists, isNotFound, type KubeClient } from '../../kube/index.js';
import { SECRET, type KubeObject } from '../../resources/index.js';
import { ApiError } from '../errors.js';
import { LAST_USED_ANNOTATION, TOKEN_LABEL, TOKEN_NAME_LABEL, type StoredSecret } from '../tokens.js';
import type { TokenStore } from './service.js';

export function kubeTokenStore(client: KubeClient, namespace: string): TokenStore {
  const secrets = client.resource(SECRET);
  const select = async (labelSelector: string) => (await secrets.list(namespace, { labelSelector })).items as StoredSecret[];
  return {
    namespace,
    list: () => select(`${TOKEN_LABEL}=true`),
    findByName: (name) => select(`${TOKEN_LABEL}=true,${TOKEN_NAME_LABEL}=${name}`),
    async create(secret) {
      try {
        return (await secrets.create(secret as unknown as KubeObject)) as StoredSecret;
      } catch (error) {
        if (isAlreadyExists(error)) throw new ApiError(409, 'this token already exists');
        throw error;
      }
    },
    async delete(secretName) {
      try {
        await secrets.delete(namespace, secretName);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}

/** Records a token's last use on its Secret (the verifier calls it at most once a minute). */
export function kubeTokenToucher(client: KubeClient, namespace: string): (secretName: string, at: string) => Promise<unknown> {
  const secrets = client.resource(SECRET);
  return (secretName, at) => secrets.mergePatch(namespace, secretName, { metadata: { annotations: { [LAST_USED_ANNOTATION]: at } } });
}
