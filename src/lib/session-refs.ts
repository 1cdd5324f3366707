// The refs a session may write through the git gateway (docs/git-gateway.md, DESIGN §8.3): its
// branch, named after the session id, and its checkpoint ref (svc-agent's saved working tree).

export const CHECKPOINT_REF_PREFIX = 'refs/svc/checkpoints/';

/** `refs/heads/<session id>`: fast-forward pushes only, never deleted. */
export function sessionBranchRef(sessionId: string): string {
  return `refs/heads/${sessionId}`;
}

/** `refs/svc/checkpoints/<session id>`: the one other ref a session may write (rewrites allowed). */
export function checkpointRef(sessionId: string): string {
  return `${CHECKPOINT_REF_PREFIX}${sessionId}`;
}
