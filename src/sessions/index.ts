/** Sessions as a product concept, pure: admission (may it start, queue or not) and the one builder of a new Session. */
export * from './admission.js';
export * from './new-session.js';
