// One zip rule for "the one list in a zip" (service/lists/read/zip.ts), and the three programs agree on it:
// the service (E7 over HTTP), `mailsieve clean` (the built CLI) and the desktop core (files:inspect). A zip
// holding the list beside archiver noise (`.DS_Store`, `__MACOSX/`, `._*`) is accepted by all; no list,
// several, a file that is not .csv/.txt, or a path that climbs out of the archive is refused by all, in the
// same words.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { runCli } from '../../helpers/cli.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { submit } from './helpers.js';

const LIST = strToU8('email,first\njane@example.com,Jane\nbob@example.org,Bob\n');
const NOISE = strToU8('\x00\x00\x00\x01Bud1');

const CASES: readonly {
  readonly name: string;
  readonly entries: Record<string, Uint8Array>;
  /** undefined: accepted; else what the refusal says (the service's words, in all three). */
  readonly refused?: RegExp;
}[] = [
  { name: 'list-and-ds-store', entries: { 'list.csv': LIST, '.DS_Store': NOISE } },
  {
    name: 'list-and-macosx',
    entries: { 'people/list.txt': LIST, '__MACOSX/people/._list.txt': NOISE, 'people/.DS_Store': NOISE },
  },
  { name: 'list-and-appledouble', entries: { 'list.csv': LIST, '._list.csv': NOISE } },
  {
    name: 'two-lists',
    entries: { 'a.csv': LIST, 'b.csv': LIST, '.DS_Store': NOISE },
    refused: /holds 2 files .*exactly one \.txt or \.csv file/,
  },
  { name: 'only-noise', entries: { '.DS_Store': NOISE }, refused: /holds no file/ },
  { name: 'not-a-list', entries: { 'list.pdf': LIST }, refused: /'list\.pdf', is not a \.txt or \.csv file/ },
  {
    name: 'unsafe-path',
    entries: { '../list.csv': LIST },
    refused: /'\.\.\/list\.csv' is an unsafe path inside the zip/,
  },
];

describe('the one zip rule: service, CLI and desktop agree', () => {
  let service: TestService;
  let key: string;
  let dir: ReturnType<typeof tempDir>;
  let core: DesktopCore;

  beforeAll(async () => {
    service = await startTestService();
    key = service.key();
    dir = tempDir('mailsieve-zip-');
    core = createDesktopCore({
      home: join(dir.path, 'home'),
      secrets: new FileSecretStore(join(dir.path, 'home')),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
      startEmbedded: () =>
        Promise.resolve({ baseUrl: service.url, apiKey: key, close: () => Promise.resolve() }),
    });
  });
  afterAll(async () => {
    await core.close();
    await service.close();
    dir.remove();
  });

  for (const { name, entries, refused } of CASES) {
    it(`${refused ? 'refuses' : 'accepts'} ${name}`, async () => {
      const zip = zipSync(entries);
      const path = join(dir.path, `${name}.zip`);
      writeFileSync(path, zip);

      const e7 = await submit(service.url, key, zip, { fileName: `${name}.zip`, query: { header: 'true' } });
      const desktop = await core.handle('files:inspect', {
        fileId: core.addPath(path).fileId,
      });
      const cli = await runCli(['clean', path, '--base-url', service.url, '--api-key', key]);

      if (!refused) {
        expect(e7.status, e7.text).toBe(202);
        expect(desktop).toMatchObject({ ok: true, value: { format: 'zip', rowCount: 2 } });
        expect(cli.code, cli.stderr).toBe(0);
        const results = /^Results: (.+)$/m.exec(cli.stdout)?.[1];
        expect(results && existsSync(results), cli.stdout).toBe(true);
      } else {
        expect(e7.status).toBe(422);
        expect(e7.json<{ error_msg: string }>().error_msg).toMatch(refused);
        expect(desktop.ok).toBe(false);
        expect(desktop.ok ? '' : desktop.error.message).toMatch(refused);
        expect(cli.code).not.toBe(0);
        expect(cli.stderr).toMatch(refused);
      }
    });
  }
});
