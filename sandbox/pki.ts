// A tiny certificate authority for one sandbox cluster, made with the openssl
// CLI (like controller-runtime's envtest makes one in Go): a CA, the
// apiserver's serving cert for 127.0.0.1, client certs, and the service
// account signing key pair.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterPki {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  saKey: string;
  saPub: string;
  clients: Record<string, { cert: string; key: string }>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function ecKey(path: string, cwd: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path], cwd);
}

function signed(cwd: string, name: string, subject: string, ext: string): { cert: string; key: string } {
  const key = `${name}.key`;
  ecKey(key, cwd);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', `${name}.csr`], cwd);
  writeFileSync(join(cwd, `${name}.ext`), ext);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    cwd,
  );
  return { cert: join(cwd, `${name}.crt`), key: join(cwd, key) };
}

/** Client identities every cluster gets: CN is the user, O the groups. */
export const CLIENTS: Record<string, string> = {
  admin: '/O=system:masters/CN=sandbox-admin',
  'gitops-console': '/CN=gitops-console',
};

export function ensurePki(dir: string): ClusterPki {
  mkdirSync(dir, { recursive: true });
  const p = (f: string) => join(dir, f);
  if (!existsSync(p('ca.crt'))) {
    ecKey('ca.key', dir);
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        '/CN=gitops-console-sandbox-ca',
        '-days',
        '3650',
        '-sha256',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
        '-out',
        'ca.crt',
      ],
      dir,
    );
    signed(
      dir,
      'serving',
      '/CN=kube-apiserver',
      [
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
        '',
      ].join('\n'),
    );
    for (const [name, subject] of Object.entries(CLIENTS)) {
      signed(
        dir,
        `client-${name}`,
        subject,
        'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
      );
    }
    openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
    openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  }
  const clients: ClusterPki['clients'] = {};
  for (const name of Object.keys(CLIENTS)) {
    clients[name] = { cert: p(`client-${name}.crt`), key: p(`client-${name}.key`) };
  }
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('serving.crt'),
    servingKey: p('serving.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    clients,
  };
}
