/**
 * Who the caller is, as the API server sees the token (the peer's path):
 *
 *   GET /api/v1/userinfo  → {username, groups}
 *
 * Asked with a SelfSubjectReview made with the caller's token, which every authenticated user
 * may create: a token the API server rejects is a 401 here, which is how the UI's login checks a
 * pasted token. In --auth-mode=server the caller acts as the server's account, and the answer
 * says so.
 *
 * `creatorOf` gives the same user name to the create route, which records it on the workflow as
 * src/operations/creator.ts's CREATOR_ANNOTATION (answers cached for 10 s per token, at most 1,000 tokens).
 */
import type { FastifyInstance } from 'fastify';
import type { KubeClient } from '../../kube/client.js';
import { SELF_SUBJECT_REVIEWS } from '../../kube/resource.js';
import type { Caller } from '../auth.js';

interface Review {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

export interface UserInfo {
  username: string;
  groups: string[];
  serverMode?: boolean;
}

export async function userInfoOf(kube: KubeClient, caller: Caller): Promise<UserInfo> {
  if (caller.identity.kind !== 'token') return { username: "the server's own account (--auth-mode=server)", groups: [], serverMode: true };
  const review = await kube.as(caller.identity).create<Review>(SELF_SUBJECT_REVIEWS, undefined, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return { username: review.status?.userInfo?.username ?? '', groups: review.status?.userInfo?.groups ?? [] };
}

const CREATOR_TTL_MS = 10_000;
const CREATOR_CACHE_SIZE = 1000;
const creators = new Map<string, { expires: number; username: Promise<string | undefined> }>();

/**
 * The user name to record as a workflow's creator: the token's user, or undefined in
 * --auth-mode=server (every caller is the server's account, so nobody in particular).
 */
export function creatorOf(kube: KubeClient, caller: Caller): Promise<string | undefined> {
  if (caller.identity.kind !== 'token') return Promise.resolve(undefined);
  const now = Date.now();
  const hit = creators.get(caller.hash);
  if (hit && hit.expires > now) return hit.username;
  const username = userInfoOf(kube, caller).then((u) => u.username || undefined);
  // A failed review is not kept: the create fails with its reason, and the next one asks again.
  username.catch(() => {
    if (creators.get(caller.hash)?.username === username) creators.delete(caller.hash);
  });
  creators.delete(caller.hash);
  if (creators.size >= CREATOR_CACHE_SIZE) creators.delete(creators.keys().next().value!);
  creators.set(caller.hash, { expires: now + CREATOR_TTL_MS, username });
  return username;
}

export function userInfoRoutes(app: FastifyInstance, kube: KubeClient): void {
  app.get('/api/v1/userinfo', async (req) => userInfoOf(kube, req.caller));
}
