/**
 * Who the caller is, as the API server sees the token (the peer's path):
 *
 *   GET /api/v1/userinfo  → {username, groups}
 *
 * Asked with a SelfSubjectReview made with the caller's token, which every authenticated user
 * may create: a token the API server rejects is a 401 here, which is how the UI's login checks a
 * pasted token. In --auth-mode=server the caller acts as the server's account, and the answer
 * says so.
 */
import type { FastifyInstance } from 'fastify';
import type { KubeClient } from '../../kube/client.js';
import { SELF_SUBJECT_REVIEWS } from '../../kube/resource.js';

interface Review {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

export function userInfoRoutes(app: FastifyInstance, kube: KubeClient): void {
  app.get('/api/v1/userinfo', async (req) => {
    if (req.caller.identity.kind !== 'token')
      return { username: "the server's own account (--auth-mode=server)", groups: [], serverMode: true };
    const review = await kube.as(req.caller.identity).create<Review>(SELF_SUBJECT_REVIEWS, undefined, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    return { username: review.status?.userInfo?.username ?? '', groups: review.status?.userInfo?.groups ?? [] };
  });
}
