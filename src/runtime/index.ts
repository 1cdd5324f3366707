/** The controller runtime: work queue, controllers, status writes, leader election, manager. */
export * from './controller.js';
export * from './leader.js';
export * from './manager.js';
export * from './status.js';
export * from './workqueue.js';
