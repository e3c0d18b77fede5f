/**
 * The installation's artifact settings: what the spec's records cannot say, read from the
 * environment of the process that needs them (the controller for step and GC pods; the server and
 * `plugflow cp` for downloads).
 */

/**
 * PLUGFLOW_GCS_ENDPOINT: a GCS-compatible server (an emulator, a private endpoint) instead of
 * storage.googleapis.com for vendorCObject artifacts; the spec's GCS record has no endpoint.
 */
export const ENV_GCS_ENDPOINT = 'PLUGFLOW_GCS_ENDPOINT';

/**
 * PLUGFLOW_GIT_KNOWN_HOSTS: known_hosts lines (`host keytype base64`, `[host]:port` for other
 * ports) the SSH host keys of git repositories are checked against; the spec's git record only
 * has insecureIgnoreHostKey.
 */
export const ENV_GIT_KNOWN_HOSTS = 'PLUGFLOW_GIT_KNOWN_HOSTS';

export function gcsEndpointFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[ENV_GCS_ENDPOINT] || undefined;
}

export function gitKnownHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[ENV_GIT_KNOWN_HOSTS] || undefined;
}
