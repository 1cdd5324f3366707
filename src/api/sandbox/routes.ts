// Routes a sandbox calls with its own token (thin: authenticate, budget, parse, record).
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { DAEMON_EVENT_KINDS } from '../../lib/daemon-events.js';
import { ApiError, badRequest } from '../errors.js';
import type { SandboxEventService } from './service.js';

const SESSION_LOCAL = 'sandboxSessionId';

/** The body: one known kind, nothing else (it names no session: the token does). */
const DaemonEventSchema = z.strictObject({ event: z.enum(DAEMON_EVENT_KINDS) });

/** The group's authentication, before the body is read: the caller's own session, from its sandbox token. */
export function sandboxTokenAuth(service: SandboxEventService): RequestHandler {
  return (req, res, next) => {
    res.locals[SESSION_LOCAL] = service.authenticate(req.get('authorization'));
    next();
  };
}

export function sandboxRoutes(service: SandboxEventService): Router {
  const router = Router();

  // svc-agent's state changed: the session's controllers look at its health now (src/lib/daemon-events.ts)
  router.post('/events', async (req, res) => {
    const sessionId = res.locals[SESSION_LOCAL] as string;
    const admitted = service.admit(sessionId);
    if (!admitted.allowed) {
      res.set('retry-after', String(Math.ceil(admitted.retryAfterMs / 1000)));
      throw new ApiError(429, 'too many sandbox events: the controllers look at the sandbox anyway, try again later');
    }
    const parsed = DaemonEventSchema.safeParse(req.body);
    if (!parsed.success) throw badRequest(`the body must be {"event": one of ${DAEMON_EVENT_KINDS.join(', ')}}`);
    await service.record(sessionId, parsed.data.event);
    res.status(202).json({ recorded: true });
  });

  return router;
}
