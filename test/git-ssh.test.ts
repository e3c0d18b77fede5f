/**
 * The git driver over SSH against a real SSH server running git's own upload-pack
 * (test/support/git-ssh-server.ts): what cloneGit does with keys, host keys and revisions. The
 * whole path through a step pod is in test/artifacts.test.ts.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneGit } from '../src/artifacts/git.js';
import { utils } from 'ssh2';
import { commitFile, gitCmd, makeRepo } from './support/git-server.js';
import { startGitSshServer, type GitSshServer } from './support/git-ssh-server.js';

let server: GitSshServer;
let first = '';
let pr = '';
const dest = () => join(mkdtempSync(join(tmpdir(), 'plugflow-ssh-clone-')), 'src');
const env = () => ({ KEY: server.clientKey, OTHER: utils.generateKeyPairSync('ed25519').private });

beforeAll(async () => {
  server = await startGitSshServer();
  makeRepo(server.root, 'app', (work) => {
    first = commitFile(work, 'README', 'v1\n', 'first');
    gitCmd(work, 'tag', 'v1');
    commitFile(work, 'README', 'v2\n', 'second');
    // A pull request's commit, reachable only from refs/pull/1/head (no branch or tag).
    gitCmd(work, 'checkout', '-q', '-b', 'pr');
    pr = commitFile(work, 'PR.md', 'proposed\n', 'a proposal');
    gitCmd(work, 'update-ref', 'refs/pull/1/head', pr);
    gitCmd(work, 'checkout', '-q', 'main');
    gitCmd(work, 'branch', '-q', '-D', 'pr');
  });
});
afterAll(() => server?.close());

describe('git over SSH', () => {
  it('clones with the key, checking the host key against known_hosts; a tag, a commit and a shallow clone', async () => {
    const repo = `${server.url}/app.git`;
    const head = dest();
    const r = await cloneGit({ repo, sshPrivateKeyEnv: 'KEY', knownHosts: `# trusted\n${server.knownHostsLine}\n` }, head, env());
    expect(readFileSync(join(head, 'README'), 'utf8')).toBe('v2\n');
    expect(gitCmd(head, 'config', 'remote.origin.url')).toBe(repo);
    const tag = dest();
    await cloneGit({ repo, revision: 'v1', sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true }, tag, env());
    expect(readFileSync(join(tag, 'README'), 'utf8')).toBe('v1\n');
    const commit = dest();
    await cloneGit({ repo, revision: first, sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true }, commit, env());
    expect(readFileSync(join(commit, 'README'), 'utf8')).toBe('v1\n');
    const shallow = dest();
    const s = await cloneGit({ repo, depth: 1, sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true }, shallow, env());
    expect(s.commit).toBe(r.commit);
    expect(readFileSync(join(shallow, 'README'), 'utf8')).toBe('v2\n');
    // Cut at depth 1: the branch's commit (and the tag's, fetched at depth 1 too) have no parents here.
    expect(readFileSync(join(shallow, '.git', 'shallow'), 'utf8').split('\n')).toContain(r.commit);
    expect(() => gitCmd(shallow, 'cat-file', '-e', `${r.commit}~1`)).toThrow();
  });

  it('fetches extra refspecs, so a revision only they reach can be checked out', async () => {
    const repo = `${server.url}/app.git`;
    const out = dest();
    const r = await cloneGit(
      { repo, revision: pr, fetch: ['+refs/pull/*/head:refs/remotes/origin/pr/*'], sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true },
      out,
      env(),
    );
    expect(r.commit).toBe(pr);
    expect(readFileSync(join(out, 'PR.md'), 'utf8')).toBe('proposed\n');
    expect(gitCmd(out, 'rev-parse', 'refs/remotes/origin/pr/1')).toBe(pr);
    await expect(cloneGit({ repo, revision: pr, sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true }, dest(), env())).rejects.toThrow(
      /revision "[0-9a-f]{40}" was not found/,
    );
  });

  it('refuses an unknown host key, a key the server does not take, and a missing repository, naming each', async () => {
    const repo = `${server.url}/app.git`;
    const shown = repo.replace('git@', ''); // messages leave out user information
    await expect(cloneGit({ repo, sshPrivateKeyEnv: 'KEY' }, dest(), env())).rejects.toThrow(
      `cloning ${shown}: the host key of 127.0.0.1:${server.port} is not in the controller's PLUGFLOW_GIT_KNOWN_HOSTS (add it, or set insecureIgnoreHostKey: true)`,
    );
    const wrongHostKey = server.knownHostsLine.replace(
      /\S+$/,
      (utils.parseKey(utils.generateKeyPairSync('ed25519').public) as { getPublicSSH(): Buffer }).getPublicSSH().toString('base64'),
    );
    await expect(cloneGit({ repo, sshPrivateKeyEnv: 'KEY', knownHosts: wrongHostKey }, dest(), env())).rejects.toThrow(
      /host key .* is not in/,
    );
    await expect(cloneGit({ repo, sshPrivateKeyEnv: 'OTHER', insecureIgnoreHostKey: true }, dest(), env())).rejects.toThrow(
      `cloning ${shown}: git@127.0.0.1:${server.port} refused the key (check sshPrivateKeySecret and the server's authorized keys)`,
    );
    await expect(
      cloneGit({ repo: `${server.url}/nope.git`, sshPrivateKeyEnv: 'KEY', insecureIgnoreHostKey: true }, dest(), env()),
    ).rejects.toThrow(
      /nope\.git: git@127\.0\.0\.1:\d+ closed the connection: .*(not appear to be a git repository|does not exist|no such)/i,
    );
  });
});
