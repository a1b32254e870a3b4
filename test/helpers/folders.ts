// Temporary folders for tests, removed after each test (Vitest hooks: for test files only, not the benchmarks).
import { afterEach } from 'vitest';
import { tempDir } from './service.js';

/** A maker of temporary folders for the tests of the calling `describe`: each is removed after its test. */
export function tempFolderPerTest(prefix?: string): () => string {
  const made: { remove(): void }[] = [];
  afterEach(() => made.splice(0).forEach((dir) => dir.remove()));
  return () => {
    const dir = tempDir(prefix);
    made.push(dir);
    return dir.path;
  };
}
