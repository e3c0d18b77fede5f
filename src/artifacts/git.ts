/**
 * The git driver: an input artifact cloned from a repository over http(s), with isomorphic-git
 * (a maintained pure-JavaScript git, so the init container needs no git binary). What it does:
 *   - `repo` over http(s); `usernameSecret`/`passwordSecret` (from the Secret-backed variables the
 *     plan names) as basic auth — also how tokens are given;
 *   - `revision`: a branch, a tag, or a commit id (checked out after the clone); `branch` with
 *     `singleBranch` fetches only that branch; `depth` makes a shallow clone;
 *   - a repository with submodules is refused unless `disableSubmodules` is true (this driver
 *     cannot fetch submodules, and a checkout without them would be silently incomplete).
 *   - `repo` over SSH (`ssh://…` or `user@host:path`) with `sshPrivateKeySecret`, the host key
 *     checked against the controller's known_hosts unless `insecureIgnoreHostKey` (git-ssh.ts);
 *   - `fetch`: extra refspecs (`+refs/pull/*:refs/remotes/origin/pull/*`) fetched after the clone,
 *     so a `revision` only they reach (a pull request's commit) can be checked out.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs';
import { join } from 'node:path';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import type { HttpClient } from 'isomorphic-git';
import { GitSshError, parseSshUrl, sshHttpClient } from './git-ssh.js';
import { parseRefspec } from '../api/index.js';

export interface GitSource {
  repo: string;
  revision?: string;
  branch?: string;
  singleBranch?: boolean;
  depth?: number;
  disableSubmodules?: boolean;
  usernameEnv?: string;
  passwordEnv?: string;
  /** Extra refspecs fetched after the clone (`[+]SRC[:DST]`, `*` in both), e.g. pull request refs. */
  fetch?: string[];
  /** SSH: the variable holding the private key; host keys to trust; or trust any. */
  sshPrivateKeyEnv?: string;
  knownHosts?: string;
  insecureIgnoreHostKey?: boolean;
}

export class GitArtifactError extends Error {}

const COMMIT_ID = /^[0-9a-f]{40}$/i;

/** Clones into `dest` (a fresh directory) and checks out the revision. */
export async function cloneGit(src: GitSource, dest: string, env: NodeJS.ProcessEnv = process.env): Promise<{ commit: string }> {
  const where = redact(src.repo);
  const ssh = /^https?:\/\//.test(src.repo) ? undefined : parseSshUrl(src.repo);
  if (!/^https?:\/\//.test(src.repo) && !ssh)
    throw new GitArtifactError(`${where}: not a repository URL plugflow can clone (http(s)://…, ssh://… or user@host:path)`);
  let transport: { http: HttpClient; url: string } = { http, url: src.repo };
  if (ssh) {
    const privateKey = src.sshPrivateKeyEnv ? env[src.sshPrivateKeyEnv] : undefined;
    if (src.sshPrivateKeyEnv && !privateKey)
      throw new GitArtifactError(`${where}: the SSH private key is not available (its Secret key is missing or empty)`);
    // isomorphic-git only speaks to http(s) URLs; this one names the SSH transport's requests.
    transport = {
      url: 'https://git-over-ssh.invalid/repo',
      http: sshHttpClient(ssh, {
        ...(privateKey ? { privateKey } : {}),
        ...(src.knownHosts ? { knownHosts: src.knownHosts } : {}),
        ...(src.insecureIgnoreHostKey ? { insecureIgnoreHostKey: true } : {}),
      }),
    };
  }
  const auth =
    src.usernameEnv || src.passwordEnv
      ? { username: env[src.usernameEnv ?? ''] ?? '', password: env[src.passwordEnv ?? ''] ?? '' }
      : undefined;
  const onAuth = auth ? () => auth : undefined;
  let refused = false;
  const onAuthFailure = () => {
    refused = true;
    return { cancel: true };
  };
  const isCommit = src.revision !== undefined && COMMIT_ID.test(src.revision);
  const ref = src.branch ?? (isCommit ? undefined : src.revision);
  try {
    await git.clone({
      fs,
      http: transport.http,
      dir: dest,
      url: transport.url,
      ...(ref ? { ref } : {}),
      singleBranch: src.singleBranch ?? !!src.branch,
      ...(src.depth ? { depth: src.depth } : {}),
      noTags: false,
      ...(onAuth ? { onAuth } : {}),
      onAuthFailure,
    });
    for (const spec of src.fetch ?? []) await fetchRefspec(spec, transport, dest, onAuth, onAuthFailure);
    if (ssh) await git.setConfig({ fs, dir: dest, path: 'remote.origin.url', value: src.repo });
    if (src.revision && (isCommit || (src.branch && src.revision !== src.branch))) {
      await git.checkout({ fs, dir: dest, ref: src.revision, force: true });
    }
  } catch (err) {
    if (err instanceof GitSshError) throw new GitArtifactError(`cloning ${where}: ${err.message}`);
    const e = err as { code?: string; data?: { statusCode?: number }; message?: string };
    if (refused || e.data?.statusCode === 401 || e.data?.statusCode === 403)
      throw new GitArtifactError(`cloning ${where}: the server refused the credentials (check usernameSecret and passwordSecret)`);
    if ((e.code === 'NotFoundError' || e.code === 'CommitNotFetchedError') && src.revision)
      throw new GitArtifactError(
        `cloning ${where}: revision ${JSON.stringify(src.revision)} was not found` +
          (e.code === 'CommitNotFetchedError'
            ? ' on any branch or tag (a commit only other refs reach needs fetch refspecs, e.g. +refs/pull/*/head:refs/remotes/origin/pr/*)'
            : ''),
      );
    if (e.data?.statusCode) throw new GitArtifactError(`cloning ${where}: the server answered HTTP ${e.data.statusCode}`);
    throw new GitArtifactError(`cloning ${where}: ${e.message ?? String(err)}`);
  }
  if (existsSync(join(dest, '.gitmodules')) && !src.disableSubmodules)
    throw new GitArtifactError(
      `cloning ${where}: the repository has submodules, which plugflow's git driver cannot fetch; set disableSubmodules: true to use it without them`,
    );
  return { commit: await git.resolveRef({ fs, dir: dest, ref: 'HEAD' }) };
}

/** Fetches the refs one refspec names into their local names. */
async function fetchRefspec(
  spec: string,
  transport: { http: HttpClient; url: string },
  dir: string,
  onAuth: (() => { username: string; password: string }) | undefined,
  onAuthFailure: () => { cancel: boolean },
): Promise<void> {
  let parsed;
  try {
    parsed = parseRefspec(spec);
  } catch (err) {
    throw new GitArtifactError((err as Error).message);
  }
  const { src, dst, glob } = parsed;
  const auth = { ...(onAuth ? { onAuth } : {}), onAuthFailure };
  const [prefix, suffix] = glob ? (src.split('*') as [string, string]) : [src, ''];
  const refs = await git.listServerRefs({ http: transport.http, url: transport.url, prefix, protocolVersion: 1, ...auth });
  const matched = refs.filter((r) =>
    glob ? r.ref.startsWith(prefix) && r.ref.endsWith(suffix) && r.ref.length >= prefix.length + suffix.length : r.ref === src,
  );
  if (matched.length === 0 && !glob) throw new GitArtifactError(`fetch refspec ${JSON.stringify(spec)}: the server has no ref ${src}`);
  for (const r of matched) {
    const { fetchHead } = await git.fetch({
      fs,
      http: transport.http,
      dir,
      url: transport.url,
      remoteRef: r.ref,
      singleBranch: true,
      tags: false,
      ...auth,
    });
    const local = glob ? dst.replace('*', r.ref.slice(prefix.length, r.ref.length - suffix.length)) : dst;
    if (fetchHead) await git.writeRef({ fs, dir, ref: local, value: fetchHead, force: true });
  }
}

/** The URL without user information or query string (an scp-like SSH address as it is). */
function redact(url: string): string {
  if (!/^[a-z]+:\/\//i.test(url)) return url.slice(0, 200);
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(url.slice(0, 100));
  }
}
