export * from './settings.js';
export * from './protocol.js';
export * from './methods.js';
export * from './version.js';
export * from './environment.js';
export * from './jobs.js';
export * from './model-patterns.js';
export * from './setup.js';
