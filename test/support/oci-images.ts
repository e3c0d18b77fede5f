/**
 * Pushes small images to a registry over the OCI distribution API, the way `skopeo copy` or
 * `docker push` would: blobs (one empty layer, the config), then the manifest, and optionally an
 * index over several platforms. The images are never run; the tests read their config back.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export interface ImageConfigSpec {
  entrypoint?: string[];
  cmd?: string[];
  architecture?: string;
}

type Auth = { user: string; password: string } | undefined;
/** The Authorization a push uses: Basic, or a pull,push token when the registry names a token service. */
type Session = string | undefined;

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function headers(session: Session, extra: Record<string, string> = {}): Record<string, string> {
  return session ? { ...extra, authorization: session } : extra;
}

async function login(host: string, repo: string, auth: Auth): Promise<Session> {
  if (!auth) return undefined;
  const basic = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  const probe = await fetch(`http://${host}/v2/`);
  const challenge = probe.headers.get('www-authenticate') ?? '';
  if (!/^Bearer/i.test(challenge)) return basic;
  const param = (k: string): string => new RegExp(`${k}="([^"]*)"`).exec(challenge)?.[1] ?? '';
  const realm = new URL(param('realm'));
  realm.searchParams.set('service', param('service'));
  realm.searchParams.set('scope', `repository:${repo}:pull,push`);
  const res = await fetch(realm, { headers: { authorization: basic } });
  if (!res.ok) throw new Error(`token for pushing to ${host}/${repo}: HTTP ${res.status}`);
  return `Bearer ${((await res.json()) as { token: string }).token}`;
}

async function pushBlob(host: string, repo: string, blob: Buffer, auth: Session): Promise<{ digest: string; size: number }> {
  const digest = sha256(blob);
  const start = await fetch(`http://${host}/v2/${repo}/blobs/uploads/`, { method: 'POST', headers: headers(auth) });
  if (start.status !== 202) throw new Error(`starting a blob upload to ${host}/${repo}: HTTP ${start.status} ${await start.text()}`);
  const location = new URL(start.headers.get('location')!, `http://${host}`);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, { method: 'PUT', headers: headers(auth, { 'content-type': 'application/octet-stream' }), body: blob });
  if (put.status !== 201) throw new Error(`uploading blob ${digest} to ${host}/${repo}: HTTP ${put.status} ${await put.text()}`);
  return { digest, size: blob.length };
}

async function putManifest(
  host: string,
  repo: string,
  reference: string,
  mediaType: string,
  body: object,
  auth: Session,
): Promise<{ digest: string; size: number }> {
  const bytes = Buffer.from(JSON.stringify(body));
  const res = await fetch(`http://${host}/v2/${repo}/manifests/${reference}`, {
    method: 'PUT',
    headers: headers(auth, { 'content-type': mediaType }),
    body: bytes,
  });
  if (res.status !== 201) throw new Error(`pushing manifest ${host}/${repo}:${reference}: HTTP ${res.status} ${await res.text()}`);
  return { digest: sha256(bytes), size: bytes.length };
}

/** Pushes an image with this config to host/repo:tag; returns its manifest digest. */
export async function pushImage(
  host: string,
  repo: string,
  tag: string,
  spec: ImageConfigSpec,
  credentials?: Auth,
): Promise<{ digest: string; size: number }> {
  const auth = await login(host, repo, credentials);
  const tar = Buffer.alloc(1024);
  const layer = await pushBlob(host, repo, gzipSync(tar), auth);
  const config = Buffer.from(
    JSON.stringify({
      architecture: spec.architecture ?? 'amd64',
      os: 'linux',
      config: { ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}), ...(spec.cmd ? { Cmd: spec.cmd } : {}) },
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    }),
  );
  const cfg = await pushBlob(host, repo, config, auth);
  return putManifest(
    host,
    repo,
    tag,
    'application/vnd.oci.image.manifest.v1+json',
    {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...cfg },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layer }],
    },
    auth,
  );
}

/** Pushes one image per architecture and an index over them at host/repo:tag. */
export async function pushMultiPlatform(
  host: string,
  repo: string,
  tag: string,
  byArch: Record<string, ImageConfigSpec>,
  credentials?: Auth,
): Promise<string> {
  const manifests = [];
  const auth = await login(host, repo, credentials);
  for (const [architecture, spec] of Object.entries(byArch)) {
    const m = await pushImage(host, repo, `${tag}-${architecture}`, { ...spec, architecture }, credentials);
    manifests.push({ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...m, platform: { os: 'linux', architecture } });
  }
  const index = await putManifest(
    host,
    repo,
    tag,
    'application/vnd.oci.image.index.v1+json',
    { schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests },
    auth,
  );
  return index.digest;
}
