// The Email Data Service API model (types and zod schemas of the spec) and its REST client.
export * from './codes.js';
export * from './verification.js';
export * from './errors.js';
export * from './intelligence.js';
export * from './identity.js';
export * from './bulk.js';
export * from './list.js';
export * from './services.js';
export * from './limits.js';
export * from './client.js';
