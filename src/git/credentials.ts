import type { GitCredentials } from './remote.js';

/** Git credentials from a Secret's decoded data: username+password, or a token. */
export function credentialsFromSecret(data: Record<string, string>): GitCredentials | null {
  if (data.password !== undefined) return { username: data.username || 'git', password: data.password };
  if (data.token !== undefined) return { username: data.username || 'x-access-token', password: data.token };
  return null;
}
