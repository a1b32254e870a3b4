// Numbers in messages for people: the one rule of each, shared with the app and the CLI.

export { formatBytes } from '../../../shared/bytes.js';
export { formatCount } from '../../../shared/count.js';
