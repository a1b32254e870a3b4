// Hostile input a `mailsieve serve` listening beyond loopback must refuse: callback URLs with a user name and
// password, or pointing at this machine or a private network (unless --allow-private-callbacks), and E7
// names that are not plain file names (422). And the CLI: a 249-character input file name works.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { Agent, fetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDisposition } from '../../service/http/routes/list.js';
import { notAListFile } from '../../shared/fileName.js';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

// The service's self-signed certificate is its own: this test talks to it on loopback without checking it.
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

describe('serve beyond loopback: callbacks and names', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: Awaited<ReturnType<typeof startCli>>;
  let base: string;
  let key: string;

  beforeAll(async () => {
    dir = tempDir();
    key = (await runCli(['keys', 'create', '--data-dir', dir.path, '--rate-limit', '0'])).stdout.trim();
    server = await startCli(
      ['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dir.path, '--tls-self-signed'],
      /listening on https:\/\/0\.0\.0\.0:(\d+)/,
    );
    base = `https://127.0.0.1:${server.match[1]}`;
  });
  afterAll(async () => {
    await server?.stop();
    dir?.remove();
  });

  const submit = async (query: Record<string, string>) => {
    const response = await fetch(
      `${base}/v5/list?${new URLSearchParams({ header: 'true', ...query }).toString()}`,
      {
        method: 'POST',
        headers: { api_key: key, 'content-type': 'text/csv' },
        body: 'email\njane@example.com\n',
        dispatcher: insecure,
      },
    );
    return { status: response.status, text: await response.text() };
  };

  it('refuses a callback URL with a user name and password (400)', async () => {
    const answer = await submit({ callback_url: 'https://user:secret@example.com/done' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('may not hold a user name or password');
  });

  it('refuses callback targets on this machine or a private network (400)', async () => {
    for (const target of [
      'http://127.0.0.1:9/done',
      'http://localhost:9/done',
      'http://[::1]:9/done',
      'http://10.1.2.3/done',
      'http://192.168.0.7/done',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/done',
    ]) {
      const answer = await submit({ callback_url: target });
      expect(answer.status, target).toBe(400);
      expect(answer.text, target).toContain('private network');
    }
  });

  it('refuses E7 names that are not plain file names, of at most 255 bytes (422)', async () => {
    for (const name of ['../../evil.csv', 'a/b.csv', 'a\\b.csv', `${'x'.repeat(600)}.csv`, 'tab\there.csv']) {
      const answer = await submit({ name });
      expect(answer.status, name).toBe(422);
      expect(answer.text, name).toMatch(/Parameter 'name': The name/);
    }
    const accepted = await submit({ name: `${'é'.repeat(100)}.csv` });
    expect(accepted.status).toBe(202);
  });

  it('says which delimiter it refused as an escape, and an unsafe path inside a zip in words', async () => {
    const delimiter = await submit({ delimiter: '\n' });
    expect(delimiter.status).toBe(400);
    expect(delimiter.text).toContain(`got '\\\\n'`);
    const form = new FormData();
    form.append(
      'file',
      new Blob([zipSync({ '../evil.csv': strToU8('email\njane@example.com\n') })]),
      'evil.zip',
    );
    const response = await fetch(`${base}/v5/list?header=true`, {
      method: 'POST',
      headers: { api_key: key },
      body: form,
      dispatcher: insecure,
    });
    const text = await response.text();
    const listId = response.status === 202 ? (JSON.parse(text) as { list_id: number }).list_id : undefined;
    let outcome = text;
    for (let i = 0; listId !== undefined && i < 100; i++) {
      outcome = await (
        await fetch(`${base}/v5/list/${listId}`, { headers: { api_key: key }, dispatcher: insecure })
      ).text();
      if (!/"status":"(Pending|Processing)"/.test(outcome)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(outcome).toContain('unsafe path inside the zip');
  });

  it('gives a safe file name in Content-Disposition, with filename* for UTF-8', () => {
    expect(contentDisposition('list-1-Validation.csv')).toBe('attachment; filename=list-1-Validation.csv');
    const header = contentDisposition('café "x"-2-Validation.csv');
    expect(header).toContain(`filename="caf_ _x_-2-Validation.csv"`);
    expect(header).toContain("filename*=UTF-8''caf%C3%A9%20%22x%22-2-Validation.csv");
  });
});

describe('serve --allow-private-callbacks', () => {
  it('accepts a loopback callback target', async () => {
    const dir = tempDir();
    const key = (await runCli(['keys', 'create', '--data-dir', dir.path])).stdout.trim();
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path, '--allow-private-callbacks'],
      /listening on (http:\/\/\S+)/,
    );
    try {
      const response = await fetch(
        `${server.match[1]}/v5/list?header=true&callback_url=${encodeURIComponent('http://127.0.0.1:9/done')}`,
        {
          method: 'POST',
          headers: { api_key: key, 'content-type': 'text/csv' },
          body: 'email\na@example.com\n',
        },
      );
      expect(response.status).toBe(202);
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});

describe('clean with a long file name', () => {
  it('cleans a file whose name has 249 characters, its outputs shortened to fit', async () => {
    const dir = tempDir();
    try {
      const name = `${'n'.repeat(245)}.csv`;
      writeFileSync(join(dir.path, name), 'email\njane@example.com\nbad\n');
      const result = await runCli(['clean', join(dir.path, name), '--export', 'invalid'], {
        MAILSIEVE_HOME: join(dir.path, 'home'),
      });
      expect(result.code, result.stderr).toBe(0);
      const outputs = readdirSync(dir.path).filter((file) => file !== name && file !== 'home');
      expect(outputs.length).toBe(2);
      for (const output of outputs) expect(Buffer.byteLength(output)).toBeLessThanOrEqual(255);
      expect(outputs.some((output) => output.endsWith('-invalid.csv'))).toBe(true);
    } finally {
      dir.remove();
    }
  });
});

describe('a spreadsheet given as a list', () => {
  it('reads .xlsx, and says to save other spreadsheets as .xlsx or CSV', async () => {
    expect(notAListFile('people.xls')).toContain('save it as .xlsx or CSV');
    expect(notAListFile('people.ods')).toContain('save it as .xlsx or CSV');
    expect(notAListFile('people.pdf')).toContain('choose a .csv, .txt, .xlsx or .zip file');
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 'people.xls'), 'PK');
      const result = await runCli(['clean', join(dir.path, 'people.xls')], {
        MAILSIEVE_HOME: join(dir.path, 'home'),
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('save it as .xlsx or CSV');
    } finally {
      dir.remove();
    }
  });
});
