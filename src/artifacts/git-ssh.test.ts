import { describe, expect, it } from 'vitest';
import { knownHostKey, parseSshUrl } from './git-ssh.js';

describe('SSH repository addresses', () => {
  it('reads ssh:// URLs and the scp-like form, and leaves other URLs alone', () => {
    expect(parseSshUrl('ssh://deploy@git.example.com:2222/srv/app.git')).toEqual({
      host: 'git.example.com',
      port: 2222,
      username: 'deploy',
      path: '/srv/app.git',
    });
    expect(parseSshUrl('ssh://git.example.com/app.git')).toEqual({ host: 'git.example.com', port: 22, username: 'git', path: '/app.git' });
    expect(parseSshUrl('git@github.com:team/app.git')).toEqual({ host: 'github.com', port: 22, username: 'git', path: 'team/app.git' });
    expect(parseSshUrl('https://github.com/team/app.git')).toBeUndefined();
    expect(parseSshUrl('/local/path')).toBeUndefined();
    expect(parseSshUrl('ssh://host')).toBeUndefined();
  });
});

describe('known hosts', () => {
  const key = Buffer.from('the-key-blob');
  const b64 = key.toString('base64');
  it('matches the host (with [host]:port off port 22) and the exact key', () => {
    expect(
      knownHostKey(`# comment\nother.example ssh-ed25519 ${b64}\ngit.example,10.0.0.1 ssh-ed25519 ${b64}\n`, 'git.example', 22, key),
    ).toBe(true);
    expect(knownHostKey(`[git.example]:2222 ssh-ed25519 ${b64}`, 'git.example', 2222, key)).toBe(true);
    expect(knownHostKey(`git.example ssh-ed25519 ${b64}`, 'git.example', 2222, key)).toBe(false);
    expect(knownHostKey(`git.example ssh-ed25519 ${Buffer.from('another').toString('base64')}`, 'git.example', 22, key)).toBe(false);
    expect(knownHostKey(`git.example ssh-ed25519 ${b64}\n@revoked git.example ssh-ed25519 ${b64}`, 'git.example', 22, key)).toBe(false);
    expect(knownHostKey(`@cert-authority git.example ssh-ed25519 ${b64}`, 'git.example', 22, key)).toBe(false);
  });
});
