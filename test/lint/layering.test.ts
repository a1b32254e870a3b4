// The layering rules of eslint.config.js fire on a file that breaks them (issue 39): a domain room of the
// service (identity, engine, lists, store, pg) importing service/http/ is an error, whatever the room; the HTTP
// layer importing a room is not. Linted as text under the real files' names, with the project's own config.
import { ESLint } from 'eslint';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
// Text under a real file's name is linted as an editor lints it. Under CI=true typescript-eslint would
// otherwise infer a single run and parse each file as its program read it from disk, not the text given, so
// the rule would see the file's own imports and never fire (CI failed so, the suite passing on this machine).
const eslint = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } },
});

async function importErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const IMPORT_HTTP = (from: string) =>
  `import { sendError } from '${from}';\nexport const answer = sendError;\n`;

describe('the layering rule of the service', () => {
  // The first lint builds the TypeScript program of the typed rules: tens of seconds on a busy machine.
  beforeAll(() => importErrors('service/identity/bulkWork.ts', ''), 180_000);

  it.each([
    ['service/identity/bulkWork.ts', '../http/errors.js'],
    ['service/engine/online/verifier.ts', '../../http/errors.js'],
    ['service/store/keys.ts', '../http/errors.js'],
    ['service/pg/listBackend.ts', '../http/errors.js'],
    ['service/lists/node/processor.ts', '../../http/errors.js'],
    ['service/lists/read/rowWalk.ts', '../../http/errors.js'],
  ])('fires on %s importing service/http/', async (file, from) => {
    // (The reading of list files forbids service/http/ by its own rule too: each rule may say so.)
    expect(await importErrors(file, IMPORT_HTTP(from))).toContainEqual(
      expect.stringMatching(/ A domain room of the service may not import from service\/http\//),
    );
  });

  it('lets the HTTP layer use the rooms, and the rooms what is below them', async () => {
    expect(
      await importErrors(
        'service/http/routes/bulkBody.ts',
        "import { parseBulkText } from '../../identity/bulkRecords.js';\nexport const parse = parseBulkText;\n",
      ),
    ).toEqual([]);
    expect(
      await importErrors(
        'service/identity/bulkWork.ts',
        "import { HttpError } from '../requestError.js';\nexport const E = HttpError;\n",
      ),
    ).toEqual([]);
  });
});

describe('service/lists', () => {
  it('keeps at most six files at its top, what every room shares; the rest is in its rooms', () => {
    const top = readdirSync(join(root, 'service', 'lists'), { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => entry.name)
      .sort();
    expect(top).toEqual(['names.ts', 'parts.ts', 'report.ts', 'rowFlags.ts', 'types.ts', 'verdicts.ts']);
  });
});
