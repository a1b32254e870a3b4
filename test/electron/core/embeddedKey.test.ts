// The app's own key on its embedded service: no limit of uploads at once, since the app sends the parts of a
// split file together (a key provisioned before `--max-uploads` existed is given none at start too).
import { afterEach, describe, expect, it } from 'vitest';
import { provisionEmbeddedKey } from '../../../electron/core/embedded.js';
import { openServiceDb } from '../../../service/store/db.js';
import { DEFAULT_MAX_UPLOADS, findActiveKey, setKeyMaxUploads } from '../../../service/store/keys.js';
import { tempDir } from '../../helpers/service.js';

describe("the app's own key", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  it('has no limit of uploads at once, a key provisioned before it too', () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const db = openServiceDb(dir.path);
    cleanups.push(() => void db.close());
    const key = provisionEmbeddedKey(db, dir.path);
    expect(findActiveKey(db, key)?.maxUploads).toBe(0);
    setKeyMaxUploads(db, findActiveKey(db, key)!.id, DEFAULT_MAX_UPLOADS);
    expect(provisionEmbeddedKey(db, dir.path)).toBe(key);
    expect(findActiveKey(db, key)?.maxUploads).toBe(0);
  });
});
