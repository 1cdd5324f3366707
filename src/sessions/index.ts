/**
 * Sessions as a product concept, pure: admission (may it start, queue or not), the one builder of
 * a new Session, and what leaves the repository with a deleted one.
 */
export * from './admission.js';
export * from './agent.js';
export * from './new-session.js';
export * from './prompt-size.js';
export * from './refs-cleanup.js';
