// A self-signed serving certificate for the local cluster when it enforces authorization:
// kubectl (client-go) sends bearer tokens only over TLS, so RBAC needs https. Made once with the
// openssl CLI and kept in the data dir (clients skip verification: insecure-skip-tls-verify).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export function servingCertificate(dataDir: string): { key: Buffer; cert: Buffer } {
  const key = path.join(dataDir, 'serving.key');
  const cert = path.join(dataDir, 'serving.crt');
  if (!existsSync(key) || !existsSync(cert)) {
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
        '-keyout', key, '-out', cert, '-subj', '/CN=svc-localcluster', '-addext', 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      throw new Error(`the local cluster needs a TLS certificate for authorization and could not make one with openssl: ${(error as Error).message}`);
    }
  }
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
