// The local cluster's self-signed serving certificate: kubectl (client-go) sends bearer tokens
// only over TLS, and every request is authenticated, so the cluster always serves https. Made
// once with the openssl CLI and kept in the data dir; clients trust it (the kubeconfig carries it
// as certificate-authority-data), so a restart keeps every kubeconfig valid.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';

const LOOPBACK_NAMES = ['IP:127.0.0.1', 'IP:::1', 'DNS:localhost'];

export function servingCertificate(dataDir: string, host = '127.0.0.1'): { key: Buffer; cert: Buffer } {
  const key = path.join(dataDir, 'serving.key');
  const cert = path.join(dataDir, 'serving.crt');
  const names = [...LOOPBACK_NAMES];
  const bound = host.replace(/^\[|\]$/g, '');
  if (bound !== '0.0.0.0' && bound !== '::') {
    const name = isIP(bound) ? `IP:${bound}` : `DNS:${bound}`;
    if (!names.includes(name)) names.push(name);
  }
  const namesFile = path.join(dataDir, 'serving.names');
  const current = existsSync(namesFile) ? readFileSync(namesFile, 'utf8') : null;
  if (!existsSync(key) || !existsSync(cert) || (current !== null && current !== names.join(','))) {
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
        '-keyout', key, '-out', cert, '-subj', '/CN=svc-localcluster', '-addext', `subjectAltName=${names.join(',')}`,
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      throw new Error(`the local cluster serves https and could not make its certificate with openssl: ${(error as Error).message}`);
    }
    writeFileSync(namesFile, names.join(','), { mode: 0o600 });
  }
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
