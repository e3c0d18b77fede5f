/**
 * The plan of an http artifact (input: GET, output: PUT; src/artifacts/http.ts): the URL, the
 * declared headers, and the credentials as the names of the environment variables their Secrets
 * become (basic auth, the client id, client secret and token URL of the OAuth2
 * client-credentials grant (oauth2.ts), a TLS client certificate and key).
 */
import type { HTTPArtifact } from '../api/index.js';
import { ArtifactPlanError } from './plan-error.js';
import type { SecretEnvs } from './secret-envs.js';

export interface OAuth2Source {
  clientIdEnv: string;
  clientSecretEnv: string;
  tokenUrlEnv: string;
  scopes?: string[];
  endpointParams?: Array<{ key: string; value?: string }>;
}

export interface HttpSource {
  url: string;
  headers?: Array<{ name: string; value: string }>;
  usernameEnv?: string;
  passwordEnv?: string;
  /** A bearer token from the OAuth2 client-credentials grant (it replaces basic auth, as in the peer). */
  oauth2?: OAuth2Source;
  /** A TLS client certificate and its key (PEM), presented to the URL's origin. */
  clientCertEnv?: string;
  clientKeyEnv?: string;
}

/** `field` names the artifact (`template "t": inputs.artifacts[a]`); errors name the exact field. */
export function httpSource(h: HTTPArtifact, secrets: SecretEnvs, field: string): HttpSource {
  if (!h.url) throw new ArtifactPlanError(`${field}.http.url is required`);
  const http: HttpSource = { url: h.url };
  if (h.headers?.length) http.headers = h.headers.map((x) => ({ name: x.name, value: x.value }));
  const basic = h.auth?.basicAuth;
  if (basic?.usernameSecret) http.usernameEnv = secrets.env(basic.usernameSecret, `${field}.http.auth.basicAuth.usernameSecret`);
  if (basic?.passwordSecret) http.passwordEnv = secrets.env(basic.passwordSecret, `${field}.http.auth.basicAuth.passwordSecret`);
  const o = h.auth?.oauth2;
  if (o && Object.keys(o).length > 0) {
    const at = `${field}.http.auth.oauth2`;
    const need = (ref: typeof o.clientIDSecret, name: string): string => {
      if (!ref)
        throw new ArtifactPlanError(
          `${at}.${name} is required: the client-credentials grant needs clientIDSecret, clientSecretSecret and tokenURLSecret`,
        );
      return secrets.env(ref, `${at}.${name}`);
    };
    const oauth2: OAuth2Source = {
      clientIdEnv: need(o.clientIDSecret, 'clientIDSecret'),
      clientSecretEnv: need(o.clientSecretSecret, 'clientSecretSecret'),
      tokenUrlEnv: need(o.tokenURLSecret, 'tokenURLSecret'),
    };
    if (o.scopes?.length) oauth2.scopes = [...o.scopes];
    if (o.endpointParams?.length) {
      oauth2.endpointParams = o.endpointParams.map((p, i) => {
        if (!p.key) throw new ArtifactPlanError(`${at}.endpointParams[${i}].key is required`);
        return { key: p.key, ...(p.value !== undefined ? { value: p.value } : {}) };
      });
    }
    http.oauth2 = oauth2;
  }
  const cc = h.auth?.clientCert;
  if (cc && (cc.clientCertSecret || cc.clientKeySecret)) {
    const at = `${field}.http.auth.clientCert`;
    if (!cc.clientCertSecret || !cc.clientKeySecret)
      throw new ArtifactPlanError(`${at} needs both clientCertSecret and clientKeySecret (the certificate and its private key, PEM)`);
    if (http.oauth2) throw new ArtifactPlanError(`${at} and http.auth.oauth2 are both set; keep one (the peer silently drops oauth2 then)`);
    http.clientCertEnv = secrets.env(cc.clientCertSecret, `${at}.clientCertSecret`);
    http.clientKeyEnv = secrets.env(cc.clientKeySecret, `${at}.clientKeySecret`);
  }
  return http;
}
