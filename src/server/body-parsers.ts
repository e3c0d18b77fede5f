/**
 * The request bodies the server reads: JSON, sent as `application/json` or with no Content-Type
 * at all. The peer's CLI in HTTP/1 mode (its REST facade) sends every POST, PUT and DELETE body
 * as JSON without a Content-Type header, which the peer's grpc-gateway reads as JSON; fastify
 * would refuse it with 415, so `argo submit`, `argo delete`, … failed against plugflow. A body
 * of any other declared type is refused with 415, naming the type.
 *
 * Both go through fastify's own JSON parser, which refuses `__proto__` and
 * `constructor.prototype` keys: user JSON never reaches object prototypes.
 */
import type { FastifyInstance } from 'fastify';
import { Code, HttpError } from './errors.js';

export function registerBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  // fastify's text/plain parser would hand routes a string where they expect an object.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const type = req.headers['content-type'];
    if (type === undefined || type === '') {
      void json(req, body as string, done);
      return;
    }
    done(
      new HttpError(Code.InvalidArgument, `unsupported Content-Type ${JSON.stringify(type)}: send the body as application/json`, {}, 415),
      undefined,
    );
  });
}
