/** The controller runtime: work queue, controllers, the object reconciler, status gate, leader election, manager. */
export * from './controller.js';
export * from './errors.js';
export * from './finalizers.js';
export * from './leader.js';
export * from './manager.js';
export * from './predicates.js';
export * from './reconciler.js';
export * from './status.js';
export * from './workqueue.js';
